//! Functions defined outside the op registry with their own backward (PyTorch's
//! `autograd.Function`; docs/design.md G10): a crate built on Tessera records a step whose
//! forward it computed itself, and whose backward is a closure. `tessera-dist` records the
//! boxing of global tensors this way, the one step of a global program that communicates.

use std::sync::Arc;

use super::node::{check_gradients, wired_node_methods, Wiring};
use super::record::wants_record;
use crate::dtype::DType;
use crate::error::Result;
use crate::stype::StorageType;
use crate::tensor::grad_meta::{Edges, GradNode};
use crate::tensor::Tensor;

/// The backward of a [`record_function`] step: the gradients of its inputs (`None` for an
/// input that gets none) from the gradients of its outputs (zeros for outputs nothing used).
pub type FunctionBackward = Box<dyn Fn(&[Tensor]) -> Result<Vec<Option<Tensor>>> + Send + Sync>;

/// Records a step computed outside the registry: `outputs` were computed from `inputs` (under
/// [`no_grad`](super::no_grad) or from their data), and `backward` gives the inputs'
/// gradients. When grad mode is off or no input requires a gradient, the outputs come back
/// untouched (detached). Only floating-point outputs carry the node.
///
/// With `collective`, backward runs the step on every pass that reaches its inputs, even when
/// no gradient arrived at its outputs (zeros stand in): a step that communicates must run on
/// every rank alike, or its peers wait for it.
///
/// ```
/// use tessera::{autograd, Tensor};
/// let x = Tensor::from_slice(&[1.0f64, 2.0], &[2]).unwrap().requires_grad_(true).unwrap();
/// // y = 3x, computed by hand, with its backward dy -> 3 dy.
/// let y = autograd::no_grad_scope(|| x.mul_scalar(3.0)).unwrap();
/// let y = autograd::record_function("triple", &[x.clone()], vec![y], false,
///     Box::new(|g| Ok(vec![Some(g[0].mul_scalar(3.0)?)]))).remove(0);
/// autograd::backward(&y.sum(None, false).unwrap(), None, false).unwrap();
/// assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0, 3.0]);
/// ```
pub fn record_function(
    name: &'static str,
    inputs: &[Tensor],
    outputs: Vec<Tensor>,
    collective: bool,
    backward: FunctionBackward,
) -> Vec<Tensor> {
    let outputs: Vec<Tensor> = outputs.iter().map(Tensor::detach).collect();
    if !wants_record(inputs) {
        return outputs;
    }
    let node: Arc<dyn GradNode> = Arc::new(FunctionNode {
        name,
        backward,
        collective,
        wiring: Wiring::new(inputs, &outputs),
    });
    outputs
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            if t.dtype().is_float() {
                t.with_grad_fn(node.clone(), i)
            } else {
                t
            }
        })
        .collect()
}

/// Runs `f` with grad mode off (the forward of a [`record_function`] step).
pub fn no_grad_scope<R>(f: impl FnOnce() -> R) -> R {
    let _guard = super::no_grad();
    f()
}

struct FunctionNode {
    name: &'static str,
    backward: FunctionBackward,
    collective: bool,
    wiring: Wiring,
}

impl GradNode for FunctionNode {
    fn name(&self) -> &'static str {
        self.name
    }

    wired_node_methods!();

    fn apply(&self, grads: &[Tensor], _retain: bool) -> Result<Vec<Option<Tensor>>> {
        let out = (self.backward)(grads)?;
        check_gradients(
            self.name,
            out,
            &self.wiring.input_metas,
            &self.wiring.needs(),
        )
    }

    fn collective(&self) -> bool {
        self.collective
    }
}
