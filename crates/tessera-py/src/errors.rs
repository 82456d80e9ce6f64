//! Mapping of [`TesseraError`] to Python exceptions (NumPy's choices where it has one).

use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::PyErr;
use tessera::TesseraError;

/// The Python exception for a core error: `Index` → `IndexError`, `DType`/`DTypeMismatch` →
/// `TypeError`, `Allocation` → `MemoryError`, everything else → `ValueError`.
pub fn to_py(e: TesseraError) -> PyErr {
    let msg = e.to_string();
    match e {
        TesseraError::Index(_) => PyIndexError::new_err(msg),
        TesseraError::DType(_) | TesseraError::DTypeMismatch { .. } => PyTypeError::new_err(msg),
        TesseraError::Allocation(_) => PyMemoryError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
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
