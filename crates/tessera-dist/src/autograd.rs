//! Gradients of global tensors (docs/design.md D10).
//!
//! A global program records on each rank the local graph of its shards: a global op runs the
//! ordinary local op (recorded by `tessera`'s autograd), and boxing, the one step that
//! communicates, is recorded as a [`tessera::autograd::record_function`] node whose backward boxes the gradient
//! back. The gradient of a tensor with SBP `s` has the *dual* SBP of `s`:
//!
//! | SBP of the tensor | SBP of its gradient |
//! |---|---|
//! | `Split(k)` | `Split(k)` |
//! | `Broadcast` | `Partial(sum)` |
//! | `Partial(sum)` | `Broadcast` |
//! | `Partial(max)`, `Partial(min)` | none: backward refuses |
//!
//! Every local backward rule gives exactly that, because a backward rule is linear in the
//! output gradient: a `Broadcast` input of a `Split` computation gets each rank's share of
//! its gradient, which sum to the whole (`Partial(sum)`); a `Partial(sum)` input's gradient
//! is the output gradient itself on every rank (`Broadcast`); a split keeps its split. The
//! backward of boxing `src -> dst` is boxing `dual(dst) -> dual(src)`, planned and costed
//! like any boxing: all-gather's is reduce-scatter, all-reduce's is all-reduce, a slice's is
//! free.
//!
//! ```
//! use tessera::{DType, Tensor};
//! use tessera_dist::{autograd, ops, run_ranks, GlobalTensor, Mesh, PartialOp, Sbp};
//! let out = run_ranks(2, |comm| -> tessera_dist::Result<Vec<f64>> {
//!     let mesh = Mesh::line(comm);
//!     let w = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
//!     let w = GlobalTensor::from_logical(&w, &[Sbp::Broadcast], &mesh)?.requires_grad_(true)?;
//!     let x = Tensor::from_slice(&[1.0f64, 1.0, 1.0, 2.0, 2.0, 2.0], &[2, 3])?;
//!     let x = GlobalTensor::from_logical(&x, &[Sbp::Split(0)], &mesh)?;
//!     let loss = ops::reduce(&ops::binary(&x, &w, tessera::BinaryOp::Mul)?, "sum", None, false)?;
//!     autograd::backward(&loss)?;
//!     let g = w.grad()?.unwrap(); // each rank's share of d loss / d w
//!     assert_eq!(g.sbp(), &[Sbp::Partial(PartialOp::Sum)]);
//!     Ok(g.to_full()?.to_vec::<f64>()?)
//! });
//! for r in out {
//!     assert_eq!(r.unwrap().unwrap(), vec![3.0, 3.0, 3.0]);
//! }
//! ```

use tessera::autograd::LeafHook;
use tessera::Tensor;

use crate::error::{DistError, Result};
use crate::global::GlobalTensor;
use crate::sbp::Sbp;
pub use crate::sbp::{dual, dual_nd};

/// Backward from a one-element global `loss`: accumulates into every leaf shard's `.grad`
/// the gradient of the logical loss, with the dual SBP of the leaf's (see
/// [`GlobalTensor::grad`]). Collective: every rank calls it for the same loss. The seed is
/// the dual of the loss's placement: 1 on every rank for a `Partial(sum)` loss, 1 on the
/// first rank of each `Broadcast` mesh axis (and 0 on the others) for a `Broadcast` one.
pub fn backward(loss: &GlobalTensor) -> Result<()> {
    backward_seeded(loss, &seed(loss)?, None)
}

/// [`backward`] that reports each leaf shard's gradient as soon as it is final
/// ([`tessera::autograd::backward_with_hook`]): what overlapping the reductions of data
/// parallelism with backward needs (`train::DistOptimizer`).
pub fn backward_with_hook(loss: &GlobalTensor, hook: LeafHook<'_>) -> Result<()> {
    backward_seeded(loss, &seed(loss)?, Some(hook))
}

/// Backward from `loss` with the `seed` [`seed`] gave (and a leaf hook).
pub(crate) fn backward_seeded(
    loss: &GlobalTensor,
    seed: &Tensor,
    hook: Option<LeafHook<'_>>,
) -> Result<()> {
    match hook {
        Some(h) => tessera::autograd::backward_with_hook(loss.local(), Some(seed), false, h)?,
        None => tessera::autograd::backward(loss.local(), Some(seed), false)?,
    }
    Ok(())
}

/// The seed of backward on this rank: the dual of the loss's placement (an error for a loss
/// that is not one element or has no dual placement).
pub(crate) fn seed(loss: &GlobalTensor) -> Result<Tensor> {
    if loss.logical_shape().iter().product::<usize>() != 1 {
        return Err(DistError::Placement(format!(
            "backward needs a one-element loss, got logical shape {:?}",
            loss.logical_shape()
        )));
    }
    let mut seed_here = true;
    for (axis, &s) in loss.sbp().iter().enumerate() {
        dual(s)?;
        if s == Sbp::Broadcast && loss.mesh().coords()[axis] != 0 {
            seed_here = false;
        }
    }
    let local = loss.local();
    Ok(Tensor::full(
        local.shape(),
        u8::from(seed_here),
        local.dtype(),
    )?)
}
