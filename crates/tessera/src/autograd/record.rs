//! The one recording point (docs/design.md G1): [`record`] runs after every op call that the
//! registry's dispatch makes, and attaches a graph node to the outputs when grad mode is on
//! and an input requires a gradient.

use std::sync::Arc;

use super::node::{refusing_node, BackwardFn, OpNode, Saves};
use crate::error::Result;
use crate::tensor::grad_meta::is_grad_enabled;
use crate::tensor::Tensor;

/// How an op differentiates (declared on its registry definition).
pub enum GradRule<P> {
    /// Not declared yet: recording through the op works, backward through it is an error.
    /// The gradient-check gate fails while any op is in this state.
    Missing,
    /// A backward rule.
    Backward {
        /// The rule in words (shown in docs/ops.md).
        doc: &'static str,
        /// The registered op computing it, if any (MXNet's `FGradient` naming).
        via: Option<&'static str>,
        /// What the rule reads.
        saves: Saves,
        /// The rule.
        f: BackwardFn<P>,
    },
    /// No gradient exists, and why (comparisons, integer outputs): outputs never require one.
    NotDifferentiable(&'static str),
    /// The op has no gradient by design (the ring buffer): backward through it is an error.
    ForwardOnly,
}

impl<P> Clone for GradRule<P> {
    fn clone(&self) -> Self {
        match self {
            GradRule::Missing => GradRule::Missing,
            GradRule::Backward { doc, via, saves, f } => GradRule::Backward {
                doc,
                via: *via,
                saves: *saves,
                f: *f,
            },
            GradRule::NotDifferentiable(w) => GradRule::NotDifferentiable(w),
            GradRule::ForwardOnly => GradRule::ForwardOnly,
        }
    }
}

/// Whether a call on `inputs` is recorded: grad mode on and some input requires a gradient.
pub(crate) fn wants_record(inputs: &[Tensor]) -> bool {
    inputs.iter().any(Tensor::requires_grad) && is_grad_enabled()
}

fn is_float(t: &Tensor) -> bool {
    t.dtype().is_float()
}

/// The outputs of a call of op `name`, recorded per `rule` when `recorded` (the result of
/// [`wants_record`] before the call). Unrecorded outputs never carry autograd state.
pub(crate) fn record<P: Clone + Send + Sync + 'static>(
    recorded: bool,
    name: &'static str,
    params: &P,
    rule: &GradRule<P>,
    inputs: &[Tensor],
    outputs: Vec<Tensor>,
) -> Result<Vec<Tensor>> {
    let strip = |mut outputs: Vec<Tensor>| -> Vec<Tensor> {
        // Kernels rarely return a handle with autograd state: no rebuilt vector per call.
        for t in outputs.iter_mut().filter(|t| t.requires_grad()) {
            *t = t.detach();
        }
        outputs
    };
    if !recorded {
        return Ok(strip(outputs));
    }
    let node: Arc<dyn crate::tensor::grad_meta::GradNode> = match rule {
        GradRule::NotDifferentiable(_) => return Ok(strip(outputs)),
        GradRule::Backward { saves, f, .. } => Arc::new(OpNode::new(
            name,
            params.clone(),
            *f,
            *saves,
            inputs,
            &outputs,
        )),
        GradRule::ForwardOnly => refusing_node(
            name,
            "it is forward only by design (it keeps state between calls)",
            inputs,
            &outputs,
        ),
        GradRule::Missing => refusing_node(
            name,
            "no backward rule is registered for it yet",
            inputs,
            &outputs,
        ),
    };
    Ok(outputs
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            if is_float(&t) {
                t.with_grad_fn(node.clone(), i)
            } else {
                t.detach()
            }
        })
        .collect())
}
