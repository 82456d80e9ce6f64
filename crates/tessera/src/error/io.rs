//! The facts behind [`crate::ErrorKind::Io`]: a file operation the operating system
//! failed, or a file (or byte string) whose contents break its format. Kept apart so callers
//! can tell "the disk said no" (Python `OSError`) from "the file is bad" (Python `ValueError`)
//! without parsing messages.

use std::fmt;
use std::path::PathBuf;

/// What [`crate::ErrorKind::Io`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoFacts {
    /// The operating system failed a file operation (`open`, `read`, `write`, `rename`).
    Os {
        /// The operation, as a verb (`"open"`, `"read"`, `"write"`, `"rename"`).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The kind of [`std::io::Error`].
        kind: std::io::ErrorKind,
        /// The OS error number, when the OS gave one.
        errno: Option<i32>,
        /// The OS's description (without the error number).
        message: String,
    },
    /// The contents do not follow the format: a truncated file, a header that lies about
    /// sizes, an unknown dtype, parts of a sparse tensor that break its invariants.
    Format {
        /// The format (`"safetensors"`, `"npy"`).
        format: &'static str,
        /// The file, or `None` for bytes read from memory.
        path: Option<PathBuf>,
        /// What is wrong.
        message: String,
    },
}

impl IoFacts {
    /// The facts of an OS error `e` met while doing `op` on `path`.
    pub fn os(op: &'static str, path: impl Into<PathBuf>, e: &std::io::Error) -> IoFacts {
        let errno = e.raw_os_error();
        let mut message = e.to_string();
        // `io::Error` prints "Description (os error N)"; the number is kept apart.
        if let Some(n) = errno {
            let suffix = format!(" (os error {n})");
            if let Some(stripped) = message.strip_suffix(&suffix) {
                message = stripped.to_string();
            }
        }
        IoFacts::Os {
            op,
            path: path.into(),
            kind: e.kind(),
            errno,
            message,
        }
    }
}

impl fmt::Display for IoFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoFacts::Os {
                op, path, message, ..
            } => write!(f, "cannot {op} {}: {message}", path.display()),
            IoFacts::Format {
                format,
                path: Some(p),
                message,
            } => write!(f, "{}: not a valid {format} file: {message}", p.display()),
            IoFacts::Format {
                format,
                path: None,
                message,
            } => write!(f, "not valid {format} data: {message}"),
        }
    }
}

impl std::error::Error for IoFacts {}
