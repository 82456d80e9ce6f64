//! [`PyTensor`], the data of the Python `tessera.Tensor` class: a core [`Tensor`] handle. Its
//! methods are in `tensor.rs` (and `indexing.rs`, `arith.rs`, `grad.rs`); this module sits
//! below `convert`, which needs the type to accept tensors as arguments, and imports nothing
//! of the crate.

use std::sync::OnceLock;

use pyo3::prelude::*;
use tessera::Tensor;

/// A dense tensor: shared storage seen through a strided layout. Views (indexing,
/// `expand`, `permute`, `.T`, ...) share storage with their base; `np.asarray(t)` is a
/// zero-copy NumPy view of it.
#[pyclass(name = "Tensor", module = "tessera", frozen)]
pub struct PyTensor {
    /// The core handle this object was made with.
    made: Tensor,
    /// The same tensor as a leaf with autograd state, once `requires_grad_()` gave it one (the
    /// class is frozen, so the handle cannot be replaced; the state's flag can be toggled).
    /// Boxed, as `dense`: both are rare, and every tensor made and dropped from Python moves
    /// and frees this object (a `Tensor` is 48 bytes, its box 8).
    leaf: OnceLock<Box<Tensor>>,
    /// A sparse tensor's dense copy, made on the first NumPy export and kept alive with
    /// this object (NumPy's array keeps the tensor as its base).
    pub dense: OnceLock<Box<Tensor>>,
}

impl PyTensor {
    /// The core handle: the leaf with autograd state when there is one.
    #[inline]
    pub fn t(&self) -> &Tensor {
        self.leaf.get().map_or(&self.made, |leaf| leaf)
    }

    /// Marks this tensor as requiring a gradient, or not (`Tensor::requires_grad_`): the first
    /// `true` on a tensor without autograd state gives it a leaf state.
    pub fn set_requires_grad(&self, on: bool) -> tessera::Result<()> {
        if let Some(leaf) = self.leaf.get() {
            Tensor::clone(leaf).requires_grad_(on)?;
            return Ok(());
        }
        let t = self.made.clone().requires_grad_(on)?;
        if on && !self.made.requires_grad() {
            // Two threads racing here both made a state; the first one set wins for both.
            let _ = self.leaf.set(Box::new(t));
        }
        Ok(())
    }
}

impl From<Tensor> for PyTensor {
    fn from(t: Tensor) -> Self {
        PyTensor {
            made: t,
            leaf: OnceLock::new(),
            dense: OnceLock::new(),
        }
    }
}
