//! The graph node of one recorded op call (docs/design.md G1): the op's parameters and
//! backward rule, the edges to its inputs' gradients, and the tensors it saved for backward
//! together with their storage versions (G3).

use std::sync::Arc;

use parking_lot::Mutex;
use smallvec::SmallVec;

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::stype::StorageType;
use crate::tensor::grad_meta::{edge_nodes, next_node_seq, release_nodes, Edges, GradNode};
use crate::tensor::Tensor;

/// A backward rule: gradients of the inputs (`None` where not needed or zero) from the
/// context of one call.
pub type BackwardFn<P> = fn(&P, &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>>;

/// Which inputs and outputs a backward rule reads (saved at forward time, so an in-place
/// change to them before backward is detected).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Saves {
    /// Input positions.
    pub inputs: &'static [usize],
    /// Output positions.
    pub outputs: &'static [usize],
}

impl Saves {
    /// Nothing saved (the rule needs only the output gradient and the input metas).
    pub const NOTHING: Saves = Saves {
        inputs: &[],
        outputs: &[],
    };
    /// The first input.
    pub const X: Saves = Saves {
        inputs: &[0],
        outputs: &[],
    };
    /// The first two inputs.
    pub const X1_X2: Saves = Saves {
        inputs: &[0, 1],
        outputs: &[],
    };
    /// The first output.
    pub const Y: Saves = Saves {
        inputs: &[],
        outputs: &[0],
    };
    /// The first input and the first output.
    pub const X_Y: Saves = Saves {
        inputs: &[0],
        outputs: &[0],
    };
}

/// Shape, dtype and storage type of a tensor seen by a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// Shape (inline up to 4 dims: recording a node should not allocate per input).
    pub shape: SmallVec<[usize; 4]>,
    /// Dtype.
    pub dtype: DType,
    /// Storage type.
    pub stype: StorageType,
}

impl Meta {
    /// The meta of `t`.
    pub fn of(t: &Tensor) -> Meta {
        Meta {
            shape: SmallVec::from_slice(t.shape()),
            dtype: t.dtype(),
            stype: t.stype(),
        }
    }
}

/// A tensor saved for backward, with its storage version at save time.
struct SavedTensor {
    tensor: Tensor,
    version: u64,
}

fn version_of(t: &Tensor) -> u64 {
    t.storage().map(|s| s.version()).unwrap_or(0)
}

impl SavedTensor {
    fn new(t: &Tensor) -> SavedTensor {
        SavedTensor {
            tensor: t.detach(),
            version: version_of(t),
        }
    }
}

/// What a backward rule sees of one call.
pub struct BackwardCtx<'a> {
    op: &'static str,
    inputs: &'a [Option<SavedTensor>],
    outputs: &'a [Option<SavedTensor>],
    grads: &'a [Tensor],
    needs: &'a [bool],
    input_metas: &'a [Meta],
}

impl BackwardCtx<'_> {
    /// Saved input `i` (declared in the op's [`Saves`]).
    pub fn input(&self, i: usize) -> Result<&Tensor> {
        self.saved(self.inputs, i, "input")
    }

    /// Saved output `i` (declared in the op's [`Saves`]).
    pub fn output(&self, i: usize) -> Result<&Tensor> {
        self.saved(self.outputs, i, "output")
    }

    fn saved<'s>(
        &'s self,
        v: &'s [Option<SavedTensor>],
        i: usize,
        what: &str,
    ) -> Result<&'s Tensor> {
        v.get(i)
            .and_then(Option::as_ref)
            .map(|s| &s.tensor)
            .ok_or_else(|| {
                ErrorKind::Autograd(format!(
                    "op {:?}: backward reads {what} {i}, which the op does not save",
                    self.op
                ))
                .into()
            })
    }

    /// The gradient of output `i`.
    pub fn grad(&self, i: usize) -> &Tensor {
        &self.grads[i]
    }

    /// The gradient of output `i` as a dense tensor (a row_sparse gradient densified), for
    /// rules written with views, which sparse tensors do not have.
    pub fn dense_grad(&self, i: usize) -> Result<Tensor> {
        self.grads[i].densified()
    }

    /// Whether input `i` needs a gradient (rules skip the others).
    pub fn needs(&self, i: usize) -> bool {
        self.needs[i]
    }

    /// The number of inputs of the call (ops of any number of inputs take varying counts).
    pub fn input_count(&self) -> usize {
        self.input_metas.len()
    }

    /// Shape, dtype and storage type of input `i` at forward time.
    pub fn input_meta(&self, i: usize) -> &Meta {
        &self.input_metas[i]
    }

    /// The op's name.
    pub fn op(&self) -> &'static str {
        self.op
    }
}

/// What a node saved; `None` once backward has freed it.
struct SavedState {
    inputs: Vec<Option<SavedTensor>>,
    outputs: Vec<Option<SavedTensor>>,
}

/// The node of one call of an op with parameters `P`.
pub(crate) struct OpNode<P> {
    name: &'static str,
    params: P,
    backward: BackwardFn<P>,
    wiring: Wiring,
    saved: Mutex<Option<SavedState>>,
}

/// What every graph node holds besides its rule: the edges to its inputs' gradients, the
/// metas of its inputs and outputs, and its creation number (`GradNode::seq`).
pub(crate) struct Wiring {
    edges: Mutex<Edges>,
    pub(crate) input_metas: SmallVec<[Meta; 2]>,
    output_metas: SmallVec<[Meta; 1]>,
    seq: u64,
}

impl Wiring {
    /// The wiring of a node computing `outputs` from `inputs`, numbered now.
    pub(crate) fn new(inputs: &[Tensor], outputs: &[Tensor]) -> Wiring {
        Wiring {
            edges: Mutex::new(inputs.iter().map(Tensor::grad_edge).collect()),
            input_metas: inputs.iter().map(Meta::of).collect(),
            output_metas: outputs.iter().map(Meta::of).collect(),
            seq: next_node_seq(),
        }
    }

    pub(crate) fn edges(&self) -> Edges {
        self.edges.lock().clone()
    }

    pub(crate) fn take_edges(&self) -> Edges {
        std::mem::take(&mut *self.edges.lock())
    }

    pub(crate) fn num_outputs(&self) -> usize {
        self.output_metas.len()
    }

    pub(crate) fn output_meta(&self, i: usize) -> (&[usize], DType, StorageType) {
        let m = &self.output_metas[i];
        (&m.shape, m.dtype, m.stype)
    }

    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Which inputs need a gradient (have an edge).
    pub(crate) fn needs(&self) -> Vec<bool> {
        self.edges.lock().iter().map(Option::is_some).collect()
    }
}

impl Drop for Wiring {
    fn drop(&mut self) {
        release_nodes(edge_nodes(std::mem::take(self.edges.get_mut())));
    }
}

/// The `GradNode` methods every node answers from its `wiring` field.
macro_rules! wired_node_methods {
    () => {
        fn edges(&self) -> Edges {
            self.wiring.edges()
        }

        fn take_edges(&self) -> Edges {
            self.wiring.take_edges()
        }

        fn num_outputs(&self) -> usize {
            self.wiring.num_outputs()
        }

        fn output_meta(&self, i: usize) -> (&[usize], DType, StorageType) {
            self.wiring.output_meta(i)
        }

        fn seq(&self) -> u64 {
            self.wiring.seq()
        }
    };
}
pub(crate) use wired_node_methods;

impl<P: Send + Sync + 'static> OpNode<P> {
    /// The node of a call of `name` on `inputs` that produced `outputs`, saving what `saves`
    /// lists.
    pub(crate) fn new(
        name: &'static str,
        params: P,
        backward: BackwardFn<P>,
        saves: Saves,
        inputs: &[Tensor],
        outputs: &[Tensor],
    ) -> OpNode<P> {
        let pick = |ts: &[Tensor], which: &[usize]| -> Vec<Option<SavedTensor>> {
            if which.is_empty() {
                return Vec::new(); // no allocation; `saved` reads past the end as "not saved"
            }
            (0..ts.len())
                .map(|i| which.contains(&i).then(|| SavedTensor::new(&ts[i])))
                .collect()
        };
        OpNode {
            name,
            params,
            backward,
            wiring: Wiring::new(inputs, outputs),
            saved: Mutex::new(Some(SavedState {
                inputs: pick(inputs, saves.inputs),
                outputs: pick(outputs, saves.outputs),
            })),
        }
    }
}

fn check_version(op: &str, what: &str, i: usize, s: &SavedTensor) -> Result<()> {
    let now = version_of(&s.tensor);
    if now != s.version {
        return Err(ErrorKind::Autograd(format!(
            "{what} {i} of op {op:?}, saved for backward, was modified in place since (storage \
             version {now}, saved at {}); compute it again, or modify a copy",
            s.version
        ))
        .into());
    }
    Ok(())
}

impl<P: Send + Sync + 'static> GradNode for OpNode<P> {
    fn name(&self) -> &'static str {
        self.name
    }

    wired_node_methods!();

    fn apply(&self, grads: &[Tensor], retain: bool) -> Result<Vec<Option<Tensor>>> {
        let mut slot = self.saved.lock();
        let Some(saved) = slot.as_ref() else {
            return Err(ErrorKind::Autograd(format!(
                "backward through op {:?} a second time: its saved tensors were freed by the \
                 first backward; pass retain_graph = true to the first",
                self.name
            ))
            .into());
        };
        for (what, v) in [("input", &saved.inputs), ("output", &saved.outputs)] {
            for (i, s) in v.iter().enumerate() {
                if let Some(s) = s {
                    check_version(self.name, what, i, s)?;
                }
            }
        }
        let needs = self.wiring.needs();
        let ctx = BackwardCtx {
            op: self.name,
            inputs: &saved.inputs,
            outputs: &saved.outputs,
            grads,
            needs: &needs,
            input_metas: &self.wiring.input_metas,
        };
        let out = (self.backward)(&self.params, &ctx)?;
        let checked = check_gradients(self.name, out, &self.wiring.input_metas, &needs)?;
        if !retain {
            *slot = None;
        }
        Ok(checked)
    }
}

/// The gradients a backward rule of `op` gave, checked against the inputs' metas (one per
/// input, of the input's shape and dtype); those of inputs that need none are dropped.
pub(crate) fn check_gradients(
    op: &str,
    out: Vec<Option<Tensor>>,
    metas: &[Meta],
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    if out.len() != metas.len() {
        return Err(ErrorKind::Autograd(format!(
            "op {op:?}: backward gave {} gradients for {} inputs",
            out.len(),
            metas.len()
        ))
        .into());
    }
    let mut checked = Vec::with_capacity(out.len());
    for ((g, m), need) in out.into_iter().zip(metas).zip(needs) {
        let g = g.filter(|_| *need);
        if let Some(g) = &g {
            if g.shape() != &m.shape[..] || g.dtype() != m.dtype {
                return Err(ErrorKind::Autograd(format!(
                    "op {op:?}: backward gave a gradient of shape {:?} and dtype {} for an \
                     input of shape {:?} and dtype {}",
                    g.shape(),
                    g.dtype(),
                    m.shape,
                    m.dtype
                ))
                .into());
            }
        }
        checked.push(g);
    }
    Ok(checked)
}

/// A node for an output of a forward-only or gradient-less op: backward through it is an
/// error naming the op.
pub(crate) fn refusing_node(
    name: &'static str,
    why: &'static str,
    inputs: &[Tensor],
    outputs: &[Tensor],
) -> Arc<dyn GradNode> {
    fn refuse(why: &&'static str, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
        Err(ErrorKind::Autograd(format!("op {:?} has no gradient: {why}", ctx.op())).into())
    }
    Arc::new(OpNode::new(
        name,
        why,
        refuse,
        Saves::NOTHING,
        inputs,
        outputs,
    ))
}
