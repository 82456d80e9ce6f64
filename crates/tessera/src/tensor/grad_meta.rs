//! The autograd state a tensor handle carries (docs/design.md G1–G4): whether it requires a
//! gradient, the gradient accumulated into a leaf, and for a computed tensor the graph node
//! that made it; plus the thread's grad mode. Data only: nodes are recorded by the ops layer's
//! one dispatch (`ops/dispatch.rs`) and walked by the engine (`crate::autograd`).
//!
//! A handle and its clones share one state (one tensor, like two Python references to it); a
//! view is a new tensor with its own state, recorded as a view op.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::Tensor;
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::stype::StorageType;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether ops on this thread record the graph (PyTorch's grad mode; on by default). Turn it
/// off for a scope with [`crate::autograd::no_grad`].
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Sets this thread's grad mode and returns the previous one.
pub(crate) fn set_grad_enabled(on: bool) -> bool {
    GRAD_ENABLED.with(|g| g.replace(on))
}

/// A node of the recorded graph: one op call, able to map gradients of its outputs to
/// gradients of its inputs. Implemented by the autograd layer.
pub trait GradNode: Send + Sync {
    /// The op's name, for errors and `grad_fn`.
    fn name(&self) -> &'static str;
    /// One edge per input: where the input's gradient goes (`None`: no gradient needed).
    fn edges(&self) -> Edges;
    /// Moves the edges out (the iterative drop of long chains uses it).
    fn take_edges(&self) -> Edges;
    /// Number of outputs of the op.
    fn num_outputs(&self) -> usize;
    /// Shape, dtype and storage type of output `i` (for zeros standing in for a missing
    /// output gradient, and for checking the gradients backward is given).
    fn output_meta(&self, i: usize) -> (&[usize], DType, StorageType);
    /// Gradients of the inputs from gradients of the outputs (each `Some`). When `retain` is
    /// false the node frees what it saved; a second call then fails.
    fn apply(&self, grads: &[Tensor], retain: bool) -> Result<Vec<Option<Tensor>>>;
    /// The node's creation number ([`next_node_seq`]): backward runs ready nodes latest
    /// first, so the order depends only on the order the graph was recorded in, never on
    /// addresses. Ranks that record the same program run their collective nodes alike.
    fn seq(&self) -> u64;
    /// Whether backward must run the node whenever the nodes feeding it have run, even when
    /// none of them gave it a gradient (zeros stand in): a node that communicates must run
    /// on every rank of an SPMD program, or its peers wait for it.
    fn collective(&self) -> bool {
        false
    }
}

/// A fresh node number, increasing across the process (see [`GradNode::seq`]).
pub(crate) fn next_node_seq() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The edges of a node, one per input (inline for up to two inputs: recording a node and
/// dropping it should not allocate for them).
pub type Edges = smallvec::SmallVec<[Option<Edge>; 2]>;

/// Where a gradient flows: into output `output` of a node, or into a leaf's `.grad`.
#[derive(Clone)]
pub enum Edge {
    /// Output `output` of `node`.
    Node {
        /// The node.
        node: Arc<dyn GradNode>,
        /// Which of its outputs.
        output: usize,
    },
    /// A leaf tensor that requires a gradient.
    Leaf(Arc<AutogradMeta>),
}

/// The identity of a leaf that requires a gradient ([`Tensor::leaf_key`]): the address of its
/// shared autograd state, valid while the leaf lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeafKey(usize);

impl LeafKey {
    pub(crate) fn of(m: &Arc<AutogradMeta>) -> LeafKey {
        LeafKey(Arc::as_ptr(m) as usize)
    }
}

/// Autograd state of one tensor.
pub struct AutogradMeta {
    /// The node that computed this tensor and which of its outputs it is (`None`: a leaf).
    grad_fn: Option<(Arc<dyn GradNode>, usize)>,
    /// The gradient accumulated by backward (leaves only).
    grad: Mutex<Option<Tensor>>,
    /// Whether a leaf requires a gradient now (`requires_grad_(false)` turns it off for the
    /// handle and its clones and keeps `.grad`, as PyTorch's flag; computed tensors: always).
    active: AtomicBool,
}

impl AutogradMeta {
    /// The gradient accumulated so far.
    pub(crate) fn grad(&self) -> Option<Tensor> {
        self.grad.lock().clone()
    }

    /// Replaces the accumulated gradient.
    pub(crate) fn set_grad(&self, g: Option<Tensor>) {
        *self.grad.lock() = g;
    }
}

impl Drop for AutogradMeta {
    fn drop(&mut self) {
        if let Some((node, _)) = self.grad_fn.take() {
            // Another owner (a later node's edge) keeps it: just drop this reference. Were it
            // the last one after all (a race), `OpNode`'s own drop is iterative too.
            if Arc::strong_count(&node) > 1 {
                return;
            }
            release_nodes(vec![node]);
        }
    }
}

/// Drops graph nodes without recursion: a chain of 100 000 ops would otherwise overflow the
/// stack, one frame per node. A node's own `Drop` calls this with its edges' nodes.
pub(crate) fn release_nodes(mut stack: Vec<Arc<dyn GradNode>>) {
    while let Some(n) = stack.pop() {
        // Only the last owner takes the edges: nobody else can reach the node then.
        if Arc::strong_count(&n) == 1 {
            for e in n.take_edges().into_iter().flatten() {
                if let Edge::Node { node, .. } = e {
                    stack.push(node);
                }
            }
        }
    }
}

/// The nodes among `edges`, for [`release_nodes`].
pub(crate) fn edge_nodes(edges: Edges) -> Vec<Arc<dyn GradNode>> {
    edges
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            Edge::Node { node, .. } => Some(node),
            Edge::Leaf(_) => None,
        })
        .collect()
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
}

impl Tensor {
    /// Whether this tensor requires a gradient: a leaf marked with
    /// [`Tensor::requires_grad_`], or the output of a recorded op.
    pub fn requires_grad(&self) -> bool {
        self.autograd
            .as_ref()
            .is_some_and(|m| m.grad_fn.is_some() || m.active.load(Ordering::Relaxed))
    }

    /// Whether this tensor is a leaf of the graph (not computed by a recorded op).
    pub fn is_leaf(&self) -> bool {
        self.autograd.as_ref().is_none_or(|m| m.grad_fn.is_none())
    }

    /// The name of the op that computed this tensor, if it was recorded (PyTorch `grad_fn`).
    pub fn grad_fn_name(&self) -> Option<&'static str> {
        let m = self.autograd.as_ref()?;
        m.grad_fn.as_ref().map(|(n, _)| n.name())
    }

    /// The gradient accumulated into this leaf by backward passes (`None` before the first).
    pub fn grad(&self) -> Option<Tensor> {
        self.autograd.as_ref().and_then(|m| m.grad())
    }

    /// Sets or clears the accumulated gradient (an optimiser's `zero_grad`). The gradient
    /// must have this tensor's shape and dtype; errors if this tensor does not require a
    /// gradient.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        let m = self.autograd.as_ref().ok_or_else(|| {
            ErrorKind::Autograd("set_grad on a tensor that does not require a gradient".into())
        })?;
        if let Some(g) = &grad {
            if g.shape() != self.shape() || g.dtype() != self.dtype() {
                return Err(ErrorKind::Autograd(format!(
                    "gradient of shape {:?} and dtype {} for a tensor of shape {:?} and dtype {}",
                    g.shape(),
                    g.dtype(),
                    self.shape(),
                    self.dtype()
                ))
                .into());
            }
        }
        m.set_grad(grad);
        Ok(())
    }

    /// Marks this leaf as requiring a gradient (`true`) or not (`false`), and returns it. The
    /// flag is shared with the handle's clones (one tensor, as in PyTorch); turning it off
    /// keeps the accumulated `.grad`.
    ///
    /// Errors: a non-float dtype (only floating-point tensors have gradients, as in
    /// PyTorch), a sparse tensor, or `false` on a computed tensor (use [`Tensor::detach`]).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).unwrap().requires_grad_(true).unwrap();
    /// assert!(w.requires_grad() && w.is_leaf());
    /// let frozen = w.clone().requires_grad_(false).unwrap();
    /// assert!(!w.requires_grad() && !frozen.requires_grad());
    /// assert!(Tensor::ones(&[2], DType::I64).unwrap().requires_grad_(true).is_err());
    /// ```
    pub fn requires_grad_(mut self, requires: bool) -> Result<Tensor> {
        if let Some(m) = &self.autograd {
            if m.grad_fn.is_some() {
                if requires {
                    return Ok(self);
                }
                return Err(ErrorKind::Autograd(
                    "requires_grad_(false) on a computed tensor; use detach()".into(),
                )
                .into());
            }
            m.active.store(requires, Ordering::Relaxed);
            return Ok(self);
        }
        if !requires {
            return Ok(self);
        }
        if !is_float(self.dtype()) {
            return Err(ErrorKind::Autograd(format!(
                "only floating-point tensors can require a gradient, got dtype {}",
                self.dtype()
            ))
            .into());
        }
        if self.stype() != StorageType::Default {
            return Err(ErrorKind::Autograd(format!(
                "a {} tensor cannot require a gradient (sparse gradients flow into dense \
                 parameters; see docs/design.md G5)",
                self.stype()
            ))
            .into());
        }
        self.autograd = Some(Arc::new(AutogradMeta {
            grad_fn: None,
            grad: Mutex::new(None),
            active: AtomicBool::new(true),
        }));
        Ok(self)
    }

    /// The same elements with no autograd state: shares storage (and so the version
    /// counter) with this tensor, and is never recorded through.
    pub fn detach(&self) -> Tensor {
        // Field by field: cloning the handle would touch the autograd state's count twice.
        Tensor {
            data: self.data.clone(),
            layout: self.layout.clone(),
            autograd: None,
        }
    }

    /// This tensor as output `output` of `node` (a new state: the tensor requires a gradient).
    pub(crate) fn with_grad_fn(mut self, node: Arc<dyn GradNode>, output: usize) -> Tensor {
        self.autograd = Some(Arc::new(AutogradMeta {
            grad_fn: Some((node, output)),
            grad: Mutex::new(None),
            active: AtomicBool::new(true),
        }));
        self
    }

    /// The identity of this leaf in [`crate::autograd::backward_with_hook`]'s calls (`None`
    /// unless it is a leaf that requires a gradient). Clones of a leaf share it.
    pub fn leaf_key(&self) -> Option<LeafKey> {
        match self.grad_edge()? {
            Edge::Leaf(m) => Some(LeafKey::of(&m)),
            Edge::Node { .. } => None,
        }
    }

    /// The edge a gradient of this tensor flows along, if it requires one.
    pub(crate) fn grad_edge(&self) -> Option<Edge> {
        if !self.requires_grad() {
            return None;
        }
        let m = self.autograd.as_ref()?;
        Some(match &m.grad_fn {
            Some((node, output)) => Edge::Node {
                node: node.clone(),
                output: *output,
            },
            None => Edge::Leaf(m.clone()),
        })
    }

    /// Refuses an in-place write into this tensor (with `sources` read) while grad mode is
    /// on and any of them requires a gradient (docs/design.md G4): the write would either
    /// change a leaf that an optimiser owns or need recording, which in-place ops do not do.
    pub(crate) fn check_inplace(&self, op: &str, sources: &[&Tensor]) -> Result<()> {
        if !is_grad_enabled() {
            return Ok(());
        }
        if self.requires_grad() {
            return Err(ErrorKind::Autograd(format!(
                "in-place {op} into a tensor that requires a gradient{}; use the out-of-place \
                 form, or write under no_grad (as optimisers do)",
                if self.is_leaf() { " (a leaf)" } else { "" }
            ))
            .into());
        }
        if sources.iter().any(|s| s.requires_grad()) {
            return Err(ErrorKind::Autograd(format!(
                "in-place {op} reads a tensor that requires a gradient, and in-place ops are \
                 not recorded; use the out-of-place form"
            ))
            .into());
        }
        Ok(())
    }
}
