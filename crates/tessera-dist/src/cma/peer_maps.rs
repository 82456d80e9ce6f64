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
//! last copy into it ends (mappings are reference counted). The mapping itself is the core's
//! [`SharedMapping`], the type behind shared storages too.

use std::sync::{Arc, Mutex, MutexGuard};

use tessera::storage::SharedMapping;

use crate::error::{DistError, Result};

/// Peer mappings kept for reuse.
pub(crate) const CACHED_MAPS: usize = 16;

/// (pid, mapping of one of its files), least recently used first.
type Maps = Vec<(libc::pid_t, Arc<SharedMapping>)>;

static MAPS: Mutex<Maps> = Mutex::new(Vec::new());

/// The cache (a poisoned lock still holds a valid list: every update is one push or remove).
fn lock() -> MutexGuard<'static, Maps> {
    MAPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Processes whose files this process may not open (refused once for lack of permission), at
/// most [`CACHED_MAPS`], so later blocks for them go by CMA without asking again.
static REFUSED: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

fn refused() -> MutexGuard<'static, Vec<libc::pid_t>> {
    REFUSED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remembers `pid` when opening its file failed with `err` for lack of permission (the other
/// failures, such as a descriptor that is not open, say nothing about the next file).
fn note_refusal(pid: libc::pid_t, err: &std::io::Error) {
    if matches!(err.raw_os_error(), Some(libc::EACCES | libc::EPERM)) {
        let mut r = refused();
        if !r.contains(&pid) {
            r.push(pid);
            if r.len() > CACHED_MAPS {
                r.remove(0);
            }
        }
    }
}

/// The mapping of file descriptor `fd` (inode `ino`) of process `pid`, from the cache or new.
pub(super) fn get(pid: libc::pid_t, fd: u64, ino: u64) -> Result<Arc<SharedMapping>> {
    if refused().contains(&pid) {
        return Err(DistError::Comm(format!(
            "the files of pid {pid} may not be opened"
        )));
    }
    let mut maps = lock();
    if let Some(i) = maps.iter().position(|(p, m)| *p == pid && m.ino() == ino) {
        let entry = maps.remove(i);
        maps.push(entry.clone());
        return Ok(entry.1);
    }
    drop(maps);
    let m = Arc::new(map(pid, fd, ino)?);
    let mut maps = lock();
    maps.push((pid, m.clone()));
    if maps.len() > CACHED_MAPS {
        maps.remove(0);
    }
    Ok(m)
}

fn map(pid: libc::pid_t, fd: u64, ino: u64) -> Result<SharedMapping> {
    let what = format!("fd {fd} of pid {pid}");
    let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}"))
        .map_err(|_| DistError::Comm(format!("no path for {what}")))?;
    // SAFETY: a NUL-terminated path; the call has no other preconditions.
    let file = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if file < 0 {
        let e = std::io::Error::last_os_error();
        note_refusal(pid, &e);
        return Err(DistError::Comm(format!("opening {what}: {e}")));
    }
    let mapped = SharedMapping::of_fd(file);
    // SAFETY: `file` is our descriptor, closed once (a mapping stays valid without it).
    unsafe { libc::close(file) };
    match mapped {
        Ok(m) if m.ino() == ino => Ok(m),
        Ok(_) => Err(DistError::Comm(format!(
            "{what} is not the shared file {ino}"
        ))),
        Err(e) => Err(DistError::Comm(format!("mapping {what}: {e}"))),
    }
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
        assert!(m.len() >= 8000);
        // SAFETY: test only: the storage is not accessed while this slice lives.
        let seen = unsafe { std::slice::from_raw_parts(m.ptr().as_ptr().cast::<i64>(), 1000) };
        assert!(seen.iter().all(|&x| x == 42));
        assert!(
            Arc::ptr_eq(&m, &get(me, f.fd as u64, f.ino).unwrap()),
            "cached"
        );
        // A wrong inode or descriptor is an error, not a wrong mapping, and not a refusal.
        assert!(get(me, f.fd as u64, f.ino + 1).is_err());
        assert!(get(me, 1_000_000, f.ino + 2).is_err());
        assert!(get(me, f.fd as u64, f.ino).is_ok());
    }

    #[test]
    fn only_permission_failures_are_remembered() {
        // Process ids no process has, so no other test maps them.
        let (denied, gone) = (-7, -8);
        note_refusal(denied, &std::io::Error::from_raw_os_error(libc::EACCES));
        note_refusal(gone, &std::io::Error::from_raw_os_error(libc::ENOENT));
        assert!(refused().contains(&denied) && !refused().contains(&gone));
        let e = get(denied, 3, 1).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("may not be opened")));
    }
}
