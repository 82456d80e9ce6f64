//! Reverse-mode automatic differentiation (docs/design.md G1–G5).
//!
//! Every op call goes through the registry's one dispatch (`ops/dispatch.rs`), which records a
//! graph node (`autograd/node.rs`) when grad mode is on and an input requires a gradient. [`backward`]
//! walks the graph from a result (`autograd/engine.rs`) and accumulates gradients into the leaves'
//! `.grad`; [`grad`] returns gradients instead. Backward rules run with grad mode off, so
//! gradients are not themselves differentiable (no `create_graph`).
//!
//! ```
//! use tessera::{autograd, DType, Tensor};
//! let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3]).unwrap().requires_grad_(true).unwrap();
//! let y = x.mul(&x).unwrap().sum(None, false).unwrap(); // sum(x^2)
//! autograd::backward(&y, None, false).unwrap();
//! assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0, 4.0, 6.0]);
//! ```

mod accumulate;
mod engine;
mod function;
mod mode;
pub(crate) mod node;
mod record;

pub use function::{no_grad_scope, record_function, FunctionBackward};
pub use mode::{enable_grad, no_grad, set_grad_enabled, NoGradGuard};
pub use node::{BackwardCtx, BackwardFn, Meta, Saves};
pub use record::GradRule;
pub(crate) use record::{record, wants_record};

use crate::error::Result;
pub use crate::tensor::grad_meta::LeafKey;
pub use crate::tensor::is_grad_enabled;
use crate::tensor::Tensor;

/// Accumulates into every leaf's `.grad` the gradient of `root` (seeded with `grad`, which
/// a one-element `root` may omit). Without `retain_graph` the graph's saved tensors are
/// freed, and a second backward through it is an error. On error no `.grad` changes.
pub fn backward(root: &Tensor, grad: Option<&Tensor>, retain_graph: bool) -> Result<()> {
    engine::run(
        std::slice::from_ref(root),
        &[grad.cloned()],
        retain_graph,
        engine::Sink::Leaves,
    )?;
    Ok(())
}

/// Called by [`backward_with_hook`] with a leaf and its gradient of this pass, once no node
/// left in the pass can add to it.
pub type LeafHook<'a> = &'a mut dyn FnMut(LeafKey, &Tensor) -> Result<()>;

/// [`backward`] that calls `hook` for each leaf as soon as its gradient of this pass is
/// final (every node that feeds it has run), while the rest of the pass goes on: what
/// PyTorch's post-accumulate-grad hooks give DDP to start a gradient's all-reduce during
/// backward. The gradient given is this pass's alone (not summed with an earlier `.grad`);
/// leaves are still written only when the whole pass succeeded. A hook error ends the pass
/// with that error. A leaf whose last feeding node never ran (no gradient reached it) is
/// signalled when the pass ends, if it got any gradient.
///
/// ```
/// use tessera::{autograd, Tensor};
/// let x = Tensor::from_slice(&[2.0f64], &[1]).unwrap().requires_grad_(true).unwrap();
/// let y = x.mul(&x).unwrap();
/// let mut seen = Vec::new();
/// autograd::backward_with_hook(&y, None, false, &mut |leaf, g| {
///     seen.push((leaf, g.to_vec::<f64>()?));
///     Ok(())
/// })
/// .unwrap();
/// assert_eq!(seen, vec![(x.leaf_key().unwrap(), vec![4.0])]);
/// ```
pub fn backward_with_hook(
    root: &Tensor,
    grad: Option<&Tensor>,
    retain_graph: bool,
    hook: LeafHook<'_>,
) -> Result<()> {
    engine::run_with_hook(
        std::slice::from_ref(root),
        &[grad.cloned()],
        retain_graph,
        engine::Sink::Leaves,
        Some(hook),
    )?;
    Ok(())
}

/// The gradients of `outputs` (seeded with `grad_outputs`, `None` for one-element outputs)
/// with respect to `inputs`, without touching any `.grad` (PyTorch `torch.autograd.grad`).
/// An input the outputs do not depend on gets `None`.
///
/// ```
/// use tessera::{autograd, Tensor};
/// let x = Tensor::from_slice(&[3.0f64], &[1]).unwrap().requires_grad_(true).unwrap();
/// let y = x.mul(&x).unwrap().mul(&x).unwrap(); // x^3
/// let g = autograd::grad(&[y], &[None], &[x.clone()], false).unwrap();
/// assert_eq!(g[0].as_ref().unwrap().to_vec::<f64>().unwrap(), vec![27.0]);
/// assert!(x.grad().is_none());
/// ```
pub fn grad(
    outputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    inputs: &[Tensor],
    retain_graph: bool,
) -> Result<Vec<Option<Tensor>>> {
    engine::run(
        outputs,
        grad_outputs,
        retain_graph,
        engine::Sink::Capture(inputs),
    )
}
