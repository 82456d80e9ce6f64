//! Storage in shared memory files (Linux `memfd`), which other processes of the same user may
//! map: the MPI backend of `tessera-dist` allocates the output of an all-to-all this way, so a
//! peer on the same host writes its block straight into it with ordinary (streaming) stores
//! instead of a `process_vm_writev` per block.
//!
//! Such a storage is a `MAP_SHARED` mapping: unlike every other storage it stays shared with a
//! child after `fork` (writes in either show in both). Freed regions are cached for reuse like
//! anonymous ones (at most [`CACHED_SHARED_REGIONS`], each at most
//! [`CACHED_REGION_MAX`](super::CACHED_REGION_MAX) bytes), so a peer that mapped a region once
//! finds it mapped again the next time.

use std::ptr::NonNull;

use super::{keep_freed, take_fitting};
use crate::error::{Result, TesseraError};

/// Shared regions the cache keeps.
pub const CACHED_SHARED_REGIONS: usize = 8;

static SHARED_CACHE: parking_lot::Mutex<Vec<SharedRegion>> = parking_lot::Mutex::new(Vec::new());

/// The shared memory file behind a storage, for another process to map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedFile {
    /// The file descriptor in this process (`/proc/<pid>/fd/<fd>` opens it).
    pub fd: i32,
    /// The file's inode number: while a mapping holds the file, no other file has it.
    pub ino: u64,
    /// The file's length in bytes.
    pub len: usize,
}

/// A whole file mapped shared and read-write into this process, unmapped when dropped: a
/// storage's own shared memory file, or another process's (opened through
/// `/proc/<pid>/fd/<fd>`, as `tessera-dist` does to write into a peer's output).
pub struct SharedMapping {
    ptr: NonNull<u8>,
    len: usize,
    ino: u64,
}

// SAFETY: the mapping is owned by this value and unmapped once, on drop; the value hands out
// only its address, and accesses through it are the caller's to synchronise.
unsafe impl Send for SharedMapping {}
// SAFETY: as above.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps all of the file open as `fd` (the descriptor may be closed afterwards).
    pub fn of_fd(fd: i32) -> std::io::Result<SharedMapping> {
        // SAFETY: `fstat` writes `st`; an invalid `fd` is an error, not undefined behaviour.
        let st = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            st
        };
        let len = usize::try_from(st.st_size)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidData))?;
        // SAFETY: a shared mapping of the whole file, `len` bytes long, at an address the
        // kernel picks; a bad descriptor or length is an error.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        match NonNull::new(ptr.cast::<u8>()) {
            Some(ptr) if ptr.as_ptr() != libc::MAP_FAILED.cast() => Ok(SharedMapping {
                ptr,
                len,
                ino: st.st_ino,
            }),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// The first byte of the mapping.
    pub fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// The mapping's (and the file's) length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the file is empty (never, for a file `of_fd` could map).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The file's inode number.
    pub fn ino(&self) -> u64 {
        self.ino
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly the mapping `of_fd` made, unmapped only here; the
        // owner no longer uses it.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One shared memory file of this process, open and mapped, owned.
pub(super) struct SharedRegion {
    fd: i32,
    map: SharedMapping,
}

impl SharedRegion {
    /// A cached region of at least `bytes` (wasting at most half of it), or a new one (zero
    /// filled).
    pub fn get(bytes: usize) -> Result<SharedRegion> {
        match take_fitting(&SHARED_CACHE, bytes, |r| r.map.len) {
            Some(r) => Ok(r),
            None => SharedRegion::create(bytes),
        }
    }

    fn create(bytes: usize) -> Result<SharedRegion> {
        let fail = TesseraError::Allocation(bytes);
        let len = bytes
            .max(1)
            .checked_next_multiple_of(4096)
            .ok_or(fail.clone())?;
        let size = libc::off_t::try_from(len).map_err(|_| fail.clone())?;
        // SAFETY: a NUL-terminated name and valid flags; the call has no other preconditions.
        let fd = unsafe { libc::memfd_create(c"tessera".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(fail);
        }
        // SAFETY: sizing our own new file.
        let map = if unsafe { libc::ftruncate(fd, size) } == 0 {
            SharedMapping::of_fd(fd).ok()
        } else {
            None
        };
        match map {
            Some(map) => Ok(SharedRegion { fd, map }),
            None => {
                // SAFETY: `fd` is our open descriptor, closed once on this failure path.
                unsafe { libc::close(fd) };
                Err(fail)
            }
        }
    }

    /// The first byte of the region.
    pub fn ptr(&self) -> NonNull<u8> {
        self.map.ptr()
    }

    /// The file, for other processes to map.
    pub fn file(&self) -> SharedFile {
        SharedFile {
            fd: self.fd,
            ino: self.map.ino(),
            len: self.map.len(),
        }
    }

    /// Keeps the region for reuse (unmapping the least recently freed one when the cache is
    /// full), or unmaps it when it is larger than anonymous regions the storage cache keeps.
    pub fn release(self) {
        let keep = self.map.len() <= super::CACHED_REGION_MAX;
        if let Some(r) = keep_freed(&SHARED_CACHE, CACHED_SHARED_REGIONS, self, keep) {
            drop(r.map);
            // SAFETY: `fd` is our descriptor, closed once: nothing in this process refers to
            // the region any more (it left the cache).
            unsafe { libc::close(r.fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SharedMapping;
    use crate::{DType, Storage};

    #[test]
    fn another_mapping_of_the_file_sees_the_elements_and_regions_are_reused() {
        let s = Storage::shared_for_overwrite(DType::F32, 3000).unwrap();
        s.write::<f32>()
            .unwrap()
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as f32);
        let f = s.shared_file().unwrap();
        assert!(f.len >= 12_000);
        // Map the file again through /proc, as a peer process does.
        let path = format!("/proc/self/fd/{}\0", f.fd);
        // SAFETY: test only: opening and closing a descriptor of our own file.
        let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDWR) };
        assert!(fd >= 0);
        let m = SharedMapping::of_fd(fd).unwrap();
        // SAFETY: as above.
        unsafe { libc::close(fd) };
        assert_eq!((m.len(), m.ino()), (f.len, f.ino));
        // SAFETY: test only: the storage is not written while this copy is made.
        let seen =
            unsafe { std::slice::from_raw_parts(m.ptr().as_ptr().cast::<f32>(), 3000) }.to_vec();
        assert!(seen.iter().enumerate().all(|(i, &x)| x == i as f32));
        drop(s);
        let again = Storage::shared_for_overwrite(DType::F32, 2900).unwrap();
        assert_eq!(
            again.shared_file().unwrap().ino,
            f.ino,
            "the freed region is reused"
        );
        assert!(Storage::zeroed(DType::F32, 10)
            .unwrap()
            .shared_file()
            .is_none());
        // bool storage comes back zeroed even from a reused region.
        drop(again);
        let b = Storage::shared_for_overwrite(DType::Bool, 11_000).unwrap();
        assert!(b.read::<bool>().unwrap().iter().all(|&x| !x));
    }
}
