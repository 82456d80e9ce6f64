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

use super::keep_freed;
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

/// One mapped shared memory file, owned.
pub(super) struct SharedRegion {
    pub file: SharedFile,
    pub ptr: NonNull<u8>,
}

// SAFETY: a `SharedRegion` exclusively owns its mapping and descriptor in this process, moved
// between the cache and one buffer.
unsafe impl Send for SharedRegion {}

impl SharedRegion {
    /// A cached region of at least `bytes` (wasting at most half of it), or a new one (zero
    /// filled).
    pub fn get(bytes: usize) -> Result<SharedRegion> {
        let mut cache = SHARED_CACHE.lock();
        let best = (0..cache.len())
            .filter(|&i| cache[i].file.len >= bytes && cache[i].file.len / 2 <= bytes)
            .min_by_key(|&i| cache[i].file.len);
        match best {
            Some(i) => Ok(cache.remove(i)),
            None => {
                drop(cache);
                SharedRegion::create(bytes)
            }
        }
    }

    fn create(bytes: usize) -> Result<SharedRegion> {
        let fail = |_| TesseraError::Allocation(bytes);
        let len = bytes
            .max(1)
            .checked_next_multiple_of(4096)
            .ok_or(TesseraError::Allocation(bytes))?;
        // SAFETY: a NUL-terminated name and valid flags; the call has no other preconditions.
        let fd = unsafe { libc::memfd_create(c"tessera".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(TesseraError::Allocation(bytes));
        }
        let close = |e| {
            // SAFETY: `fd` is our open descriptor, closed once on this failure path.
            unsafe { libc::close(fd) };
            e
        };
        let size = libc::off_t::try_from(len).map_err(fail).map_err(close)?;
        // SAFETY: plain system calls on our own descriptor; `st` is written by `fstat`.
        let (ok, st) = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            (
                libc::ftruncate(fd, size) == 0 && libc::fstat(fd, &mut st) == 0,
                st,
            )
        };
        if !ok {
            return Err(close(TesseraError::Allocation(bytes)));
        }
        // SAFETY: a shared mapping of `len` bytes of our own file, which is `len` long.
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
        if ptr == libc::MAP_FAILED {
            return Err(close(TesseraError::Allocation(bytes)));
        }
        Ok(SharedRegion {
            file: SharedFile {
                fd,
                ino: st.st_ino,
                len,
            },
            ptr: NonNull::new(ptr.cast()).ok_or(TesseraError::Allocation(bytes))?,
        })
    }

    /// Keeps the region for reuse (unmapping the least recently freed one when the cache is
    /// full), or unmaps it when it is larger than anonymous regions the storage cache keeps.
    pub fn release(self) {
        let keep = self.file.len <= super::CACHED_REGION_MAX;
        if let Some(r) = keep_freed(&SHARED_CACHE, CACHED_SHARED_REGIONS, self, keep) {
            // SAFETY: `ptr`/`len` are exactly our mapping and `fd` our descriptor; nothing in
            // this process refers to either any more (it left the cache).
            unsafe {
                libc::munmap(r.ptr.as_ptr().cast(), r.file.len);
                libc::close(r.file.fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
        // SAFETY: test-only system calls on a file we own; the mapping is read only.
        let seen = unsafe {
            let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY);
            assert!(fd >= 0);
            let p = libc::mmap(
                std::ptr::null_mut(),
                f.len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            );
            libc::close(fd);
            assert_ne!(p, libc::MAP_FAILED);
            let v = std::slice::from_raw_parts(p.cast::<f32>(), 3000).to_vec();
            libc::munmap(p, f.len);
            v
        };
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
