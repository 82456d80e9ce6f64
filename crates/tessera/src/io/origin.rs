//! Where bytes come from or go (a named file, or memory) and the errors that name it: every
//! read and write of the `io` module goes through an [`Origin`], so an OS failure becomes
//! [`IoFacts::Os`] with the user's path and a short or lying file becomes
//! [`IoFacts::Format`], never a panic.

use std::io::{Read, Write};
use std::path::Path;

use crate::error::{ErrorKind, IoFacts, Result, TesseraError};

/// A file format and where its bytes are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Origin<'a> {
    /// `"safetensors"` or `"npy"`.
    pub format: &'static str,
    /// The file, or `None` for bytes in memory.
    pub path: Option<&'a Path>,
}

impl<'a> Origin<'a> {
    /// Bytes of `format` in the file at `path`.
    pub fn file(format: &'static str, path: &'a Path) -> Origin<'a> {
        Origin {
            format,
            path: Some(path),
        }
    }

    /// Bytes of `format` in memory.
    pub fn memory(format: &'static str) -> Origin<'static> {
        Origin { format, path: None }
    }

    /// The error for contents that break the format.
    pub fn bad(&self, message: impl Into<String>) -> TesseraError {
        ErrorKind::Io(IoFacts::Format {
            format: self.format,
            path: self.path.map(Path::to_path_buf),
            message: message.into(),
        })
        .into()
    }

    /// The error for an OS failure of `op` (a verb: `"open"`, `"read"`, `"write"`).
    pub fn os(&self, op: &'static str, e: &std::io::Error) -> TesseraError {
        match self.path {
            Some(p) => ErrorKind::Io(IoFacts::os(op, p, e)).into(),
            // Reading or writing memory fails only on a short read, handled by the callers.
            None => self.bad(format!("{op} failed: {e}")),
        }
    }

    /// Fills `buf` from `r`; running out of bytes means the file is shorter than its
    /// header says (`what` names the part being read).
    pub fn read_exact(&self, r: &mut impl Read, buf: &mut [u8], what: &str) -> Result<()> {
        r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => self.bad(format!("the data ends inside {what}")),
            _ => self.os("read", &e),
        })
    }

    /// Errors unless `r` is at its end (a file that grew, or bytes after the last item).
    pub fn expect_end(&self, r: &mut impl Read) -> Result<()> {
        let mut one = [0u8; 1];
        loop {
            match r.read(&mut one) {
                Ok(0) => return Ok(()),
                Ok(_) => return Err(self.bad("there are bytes after the end of the data")),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.os("read", &e)),
            }
        }
    }

    /// Writes all of `buf` to `w`.
    pub fn write_all(&self, w: &mut impl Write, buf: &[u8]) -> Result<()> {
        w.write_all(buf).map_err(|e| self.os("write", &e))
    }
}
