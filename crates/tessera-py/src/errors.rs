//! Mapping of [`TesseraError`] to Python exceptions (NumPy's choices where it has one).

use pyo3::exceptions::{
    PyIndexError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use tessera::{ErrorKind, IndexFacts, IoFacts, TesseraError};

/// The Python exception for a core error: an axis out of range → NumPy's `AxisError`,
/// `Index` → `IndexError`, `DType`/`DTypeMismatch` →
/// `TypeError`, `Allocation` → `MemoryError`, `Autograd` → `RuntimeError` (PyTorch's
/// choice), `LinAlg` → NumPy's `LinAlgError` (a `ValueError`), an OS failure on a file → `OSError` (the subclass its errno gives:
/// `FileNotFoundError`, `PermissionError`, ...), everything else (a bad file's contents
/// included) → `ValueError`.
pub fn to_py(e: TesseraError) -> PyErr {
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Index(IndexFacts::Axis { .. }) => axis_error(msg),
        ErrorKind::Index(_) => PyIndexError::new_err(msg),
        ErrorKind::DType(_) | ErrorKind::DTypeMismatch { .. } => PyTypeError::new_err(msg),
        ErrorKind::Allocation(_) => PyMemoryError::new_err(msg),
        ErrorKind::Autograd(_) => PyRuntimeError::new_err(msg),
        ErrorKind::LinAlg(_) => numpy_error("numpy.linalg", "LinAlgError", msg),
        ErrorKind::Io(IoFacts::Os {
            path,
            kind,
            errno,
            message,
            ..
        }) => match errno {
            // `OSError(errno, strerror, filename)` is the subclass for that errno.
            Some(n) => {
                PyOSError::new_err((*n, message.clone(), path.to_string_lossy().into_owned()))
            }
            None => std::io::Error::new(*kind, msg).into(),
        },
        _ => PyValueError::new_err(msg),
    }
}

/// NumPy's `AxisError` (a subclass of both `ValueError` and `IndexError`) for a bad axis;
/// plain `IndexError` if NumPy cannot be imported.
fn axis_error(msg: String) -> PyErr {
    numpy_error("numpy.exceptions", "AxisError", msg)
}

/// NumPy's exception `module.name` (`AxisError`, or `LinAlgError`, a `ValueError`), so code
/// written for NumPy catches it; `IndexError` / `ValueError` if NumPy cannot be imported.
fn numpy_error(module: &str, name: &str, msg: String) -> PyErr {
    Python::attach(|py| {
        let cls = py.import(module).and_then(|m| m.getattr(name));
        match cls.and_then(|c| c.call1((msg.clone(),))) {
            Ok(e) => PyErr::from_value(e),
            Err(_) if name == "AxisError" => PyIndexError::new_err(msg),
            Err(_) => PyValueError::new_err(msg),
        }
    })
}

/// `.py()?` turns a core `Result` into a `PyResult`.
pub trait PyRes<T> {
    /// Converts the error with [`to_py`].
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> PyRes<T> for tessera::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
