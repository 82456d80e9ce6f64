//! Opening files to read and replacing files atomically.
//!
//! Writes go to a temporary file in the destination's directory that is renamed over the
//! destination once complete, so a crash or an error while saving leaves the previous file
//! intact and never a half-written checkpoint (the temporary file is removed on error). The
//! new file keeps the permissions of the one it replaces. A destination that exists and is
//! not a regular file (a symbolic link, a FIFO, a device) is written in place instead, since
//! a rename would replace the link or node itself. No `fsync`: like NumPy and PyTorch, a
//! power loss right after a save may lose the new file (never corrupt the old one on file
//! systems that order a rename after the data, such as ext4's default).

use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::origin::Origin;
use crate::error::Result;

/// A reader on the whole contents of a file, and their length when the file is a regular file.
pub(crate) struct Input {
    pub reader: BufReader<File>,
    /// The byte count of a regular file; `None` for a pipe or a device (length unknown).
    pub len: Option<u64>,
}

/// Opens `path` for reading (a directory is the OS's `EISDIR` error, as Python's `open`).
pub(crate) fn open(origin: &Origin<'_>, path: &Path) -> Result<Input> {
    let file = File::open(path).map_err(|e| origin.os("open", &e))?;
    let meta = file.metadata().map_err(|e| origin.os("read", &e))?;
    if meta.is_dir() {
        let e = std::io::Error::from_raw_os_error(libc::EISDIR);
        return Err(origin.os("open", &e));
    }
    Ok(Input {
        reader: BufReader::with_capacity(1 << 16, file),
        len: meta.is_file().then_some(meta.len()),
    })
}

/// Reads all of `r` into memory with fallible growth (for streams of unknown length).
pub(crate) fn read_all(origin: &Origin<'_>, r: &mut impl Read) -> Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 1 << 16];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(origin.os("read", &e)),
        };
        out.try_reserve(n).map_err(|_| {
            crate::TesseraError::from(crate::ErrorKind::Allocation(out.len().saturating_add(n)))
        })?;
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Temporary files made by this process so far (for unique names).
static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Writes `path` with `body`, atomically when `path` is (or will be) a regular file; see the
/// module doc. Errors name `path`, not the temporary file.
pub(crate) fn write_atomically(
    origin: &Origin<'_>,
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let existing = fs::symlink_metadata(path).ok();
    let in_place = existing.as_ref().is_some_and(|m| !m.file_type().is_file());
    let Some(name) = path.file_name().filter(|_| !in_place) else {
        // A link or special file, or a path without a file name (`dir/..`: the OS says why).
        let file = File::create(path).map_err(|e| origin.os("open", &e))?;
        return finish(origin, file, body);
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (tmp, file) = create_temp(origin, &dir, name)?;
    let result = finish(origin, file, body).and_then(|()| {
        if let Some(m) = &existing {
            fs::set_permissions(&tmp, m.permissions()).map_err(|e| origin.os("write", &e))?;
        }
        fs::rename(&tmp, path).map_err(|e| origin.os("rename", &e))
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A new file `dir/.NAME.tmp-PID-N` that did not exist before.
fn create_temp(origin: &Origin<'_>, dir: &Path, name: &std::ffi::OsStr) -> Result<(PathBuf, File)> {
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
        let tmp = dir.join(tmp_name);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(origin.os("open", &e)),
        }
    }
}

/// Runs `body` on a buffered writer of `file` and flushes it.
fn finish(
    origin: &Origin<'_>,
    file: File,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let mut w = BufWriter::with_capacity(1 << 16, file);
    body(&mut w)?;
    w.flush().map_err(|e| origin.os("write", &e))
}
