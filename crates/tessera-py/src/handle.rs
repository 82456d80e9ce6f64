//! [`PyTensor`], the data of the Python `tessera.Tensor` class: a core [`Tensor`] handle. Its
//! methods are in `tensor.rs` (and `indexing.rs`, `arith.rs`); this module sits below
//! `convert`, which needs the type to accept tensors as arguments, and imports nothing of
//! the crate.

use pyo3::prelude::*;
use tessera::Tensor;

/// A dense tensor: shared storage seen through a strided layout. Views (indexing,
/// `expand`, `permute`, `.T`, ...) share storage with their base; `np.asarray(t)` is a
/// zero-copy NumPy view of it.
#[pyclass(name = "Tensor", module = "tessera", frozen)]
pub struct PyTensor {
    /// The core handle.
    pub t: Tensor,
    /// A sparse tensor's dense copy, made on the first NumPy export and kept alive with
    /// this object (NumPy's array keeps the tensor as its base).
    pub dense: std::sync::OnceLock<Tensor>,
}

impl From<Tensor> for PyTensor {
    fn from(t: Tensor) -> Self {
        PyTensor {
            t,
            dense: std::sync::OnceLock::new(),
        }
    }
}
