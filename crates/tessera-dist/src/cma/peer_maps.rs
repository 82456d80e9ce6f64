//! Mappings of peers' shared memory files (see `tessera::storage::shared`): a rank whose
//! recv block lives in one sends the file's descriptor number and inode with the block's
//! descriptor, and the writer maps `/proc/<pid>/fd/<fd>` once and then writes the block with
//! ordinary stores (the core's streaming copy) instead of `process_vm_writev`, which pins and
//! dirties every remote page on every call.
//!
//! The last [`CACHED_MAPS`] mappings are kept, so a receiver that reuses its output region
//! (its storage cache does) is written without mapping or faulting anything again. A mapping
//! is identified by (pid, inode): while this process maps a file, no other file has its inode,
//! so a match is the very file the receiver named. An evicted mapping is unmapped when the
//! last copy into it ends (mappings are reference counted).

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{DistError, Result};

/// Peer mappings kept for reuse.
pub(crate) const CACHED_MAPS: usize = 16;

static MAPS: Mutex<Vec<Arc<PeerMap>>> = Mutex::new(Vec::new());

/// A peer's shared memory file mapped into this process.
pub(super) struct PeerMap {
    pid: libc::pid_t,
    ino: u64,
    pub ptr: NonNull<u8>,
    pub len: usize,
}

// SAFETY: the mapping is owned by this value (unmapped once, on drop); the memory is only
// written under the exchange protocol (module `cma`), never through shared references.
unsafe impl Send for PeerMap {}
// SAFETY: as above.
unsafe impl Sync for PeerMap {}

impl Drop for PeerMap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly the mapping made in `map`, and no copy uses it any
        // more (every user holds an `Arc`).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The mapping of file descriptor `fd` (inode `ino`) of process `pid`, from the cache or new.
pub(super) fn get(pid: libc::pid_t, fd: u64, ino: u64) -> Result<Arc<PeerMap>> {
    let mut maps = lock();
    if let Some(i) = maps.iter().position(|m| m.pid == pid && m.ino == ino) {
        let m = maps.remove(i);
        maps.push(m.clone());
        return Ok(m);
    }
    drop(maps);
    let m = Arc::new(map(pid, fd, ino)?);
    let mut maps = lock();
    maps.push(m.clone());
    if maps.len() > CACHED_MAPS {
        maps.remove(0);
    }
    Ok(m)
}

/// The cache (a poisoned lock still holds a valid list: every update is one push or remove).
fn lock() -> MutexGuard<'static, Vec<Arc<PeerMap>>> {
    MAPS.lock().unwrap_or_else(|e| e.into_inner())
}

fn map(pid: libc::pid_t, fd: u64, ino: u64) -> Result<PeerMap> {
    let fail = |what: &str| {
        DistError::Comm(format!(
            "mapping fd {fd} of pid {pid}: {what}: {}",
            std::io::Error::last_os_error()
        ))
    };
    let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}"))
        .map_err(|_| DistError::Comm("bad path".into()))?;
    // SAFETY: a NUL-terminated path; the call has no other preconditions.
    let file = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if file < 0 {
        return Err(fail("open"));
    }
    // SAFETY: `fstat` writes `st`; `file` is our open descriptor.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(file, &mut st) == 0).then_some(st)
    };
    let mapped = match st {
        Some(st) if st.st_ino == ino && st.st_size > 0 => {
            let len = st.st_size as usize;
            // SAFETY: a shared mapping of the whole file, `len` bytes long.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    file,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                Err(fail("mmap"))
            } else {
                NonNull::new(p.cast::<u8>())
                    .map(|ptr| PeerMap { pid, ino, ptr, len })
                    .ok_or_else(|| fail("mmap"))
            }
        }
        Some(_) => Err(DistError::Comm(format!(
            "fd {fd} of pid {pid} is not the shared file {ino}"
        ))),
        None => Err(fail("fstat")),
    };
    // SAFETY: `file` is our descriptor, closed once (a mapping stays valid without it).
    unsafe { libc::close(file) };
    mapped
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::{DType, Storage};

    #[test]
    fn maps_a_shared_storage_by_pid_fd_and_inode_once() {
        let s = Storage::shared_for_overwrite(DType::I64, 1000).unwrap();
        s.write::<i64>().unwrap().fill(42);
        let f = s.shared_file().unwrap();
        let me = std::process::id() as libc::pid_t;
        let m = get(me, f.fd as u64, f.ino).unwrap();
        assert!(m.len >= 8000);
        // SAFETY: test only: the storage is not accessed while this slice lives.
        let seen = unsafe { std::slice::from_raw_parts(m.ptr.as_ptr().cast::<i64>(), 1000) };
        assert!(seen.iter().all(|&x| x == 42));
        assert!(
            Arc::ptr_eq(&m, &get(me, f.fd as u64, f.ino).unwrap()),
            "cached"
        );
        // A wrong inode or descriptor is an error, not a wrong mapping.
        assert!(get(me, f.fd as u64, f.ino + 1).is_err());
        assert!(get(me, 1_000_000, f.ino + 2).is_err());
    }

    #[test]
    fn writes_a_column_block_into_a_shared_file_and_refuses_blocks_outside_it() {
        use crate::cma::pieces::Pieces;
        use tessera::index::IndexSpec;
        use tessera::Tensor;
        // The right half of an [8, 1000] f32 matrix into a shared [8, 500] output, through this
        // process's own mapping of the output's file.
        let src = Tensor::arange(0, 8000, 1, DType::F32)
            .and_then(|t| t.reshape(&[8, 1000]))
            .unwrap();
        let block = src
            .index(&[IndexSpec::All, IndexSpec::interval(500, 1000)])
            .unwrap();
        let out = Tensor::empty_shared(&[8, 500], DType::F32).unwrap();
        let f = out.storage().unwrap().shared_file().unwrap();
        let me = std::process::id() as libc::pid_t;
        let values = src.storage().unwrap().read::<f32>().unwrap();
        let local = Pieces::of(values.as_ptr() as usize, &block, 4);
        let remote = Pieces::of(0, &out, 4);
        let file = |off| (f.fd as u64, f.ino, off);
        crate::cma::write_shared(me, file(0), &local, &remote, &values).unwrap();
        let want: Vec<f32> = (0..4000)
            .map(|k| (k / 500 * 1000 + 500 + k % 500) as f32)
            .collect();
        assert_eq!(out.to_vec::<f32>().unwrap(), want);
        // A block reaching past the end of the file (or misaligned) is refused unwritten.
        out.fill_(0.0).unwrap();
        assert!(crate::cma::write_shared(me, file(f.len - 4), &local, &remote, &values).is_err());
        assert!(crate::cma::write_shared(me, file(2), &local, &remote, &values).is_err());
        assert!(out.to_vec::<f32>().unwrap().iter().all(|&x| x == 0.0));
    }
}
