//! Grad mode scopes (docs/design.md G1): [`no_grad`] and [`enable_grad`] set this thread's
//! mode until the returned guard drops.

use crate::tensor::grad_meta;

/// Sets this thread's grad mode and returns the previous one (for bindings whose scopes
/// cannot hold a guard, such as Python's `with tessera.no_grad():`). Prefer [`no_grad`].
pub fn set_grad_enabled(on: bool) -> bool {
    grad_meta::set_grad_enabled(on)
}

/// Restores the previous grad mode when dropped.
#[must_use = "the mode holds only while the guard lives"]
pub struct NoGradGuard {
    prev: bool,
}

impl NoGradGuard {
    pub(crate) fn new() -> NoGradGuard {
        NoGradGuard {
            prev: set_grad_enabled(false),
        }
    }
}

impl Drop for NoGradGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.prev);
    }
}

/// Stops recording on this thread until the guard drops (PyTorch `torch.no_grad()`):
/// optimiser updates and evaluation run under it.
///
/// ```
/// use tessera::{autograd, DType, Tensor};
/// let w = Tensor::ones(&[2], DType::F64).unwrap().requires_grad_(true).unwrap();
/// {
///     let _g = autograd::no_grad();
///     assert!(!w.mul(&w).unwrap().requires_grad());
/// }
/// assert!(w.mul(&w).unwrap().requires_grad());
/// ```
pub fn no_grad() -> NoGradGuard {
    NoGradGuard::new()
}

/// Turns recording back on inside a [`no_grad`] scope until the guard drops.
pub fn enable_grad() -> NoGradGuard {
    NoGradGuard {
        prev: set_grad_enabled(true),
    }
}
