//! Global execution of ops (docs/design.md §1 `dist`): pick the signature moving the fewest bytes
//! (D6), box the inputs to it, run the ordinary local op ([`tessera::ops::invoke`]) and wrap
//! the result with the signature's output SBP.

use tessera::index::{encode, IndexSpec};
use tessera::ops::params::ParamValue;
use tessera::ops::{registry, TensorMeta};
use tessera::{BinaryOp, CompareOp, Tensor, UnaryOp};

use crate::boxing::plan;
use crate::comm::identity_tensor;
use crate::error::{DistError, Result};
use crate::global::GlobalTensor;
use crate::sbp::{fmt_nd, has_dual, physical_shape, PartialOp, Sbp};
use crate::signatures::{reduce_axes, table, LocalCall, SigCtx, Signature};

/// A chosen nd-signature: one nd-SBP per input and the output's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdSignature {
    /// The nd-SBP each input is boxed to.
    pub inputs: Vec<Vec<Sbp>>,
    /// The nd-SBP of the output.
    pub output: Vec<Sbp>,
}

/// All nd-signatures: the product of the per-axis lists (`mesh_axes` of them).
fn products(per_axis: &[Signature], mesh_axes: usize, n_inputs: usize) -> Vec<NdSignature> {
    let mut acc = vec![NdSignature {
        inputs: vec![Vec::new(); n_inputs],
        output: Vec::new(),
    }];
    for _ in 0..mesh_axes {
        let mut next = Vec::with_capacity(acc.len() * per_axis.len());
        for a in &acc {
            for s in per_axis {
                let mut n = a.clone();
                for (k, i) in n.inputs.iter_mut().enumerate() {
                    i.push(s.inputs[k]);
                }
                n.output.push(s.output);
                next.push(n);
            }
        }
        acc = next;
    }
    acc
}

/// The signature global `name` would use for these inputs, and its cost in bytes per rank
/// (ties go to the earlier candidate, so every rank picks the same one).
pub fn choose_signature(
    name: &str,
    inputs: &[&GlobalTensor],
    kv: &[(&str, &str)],
) -> Result<(NdSignature, f64, Vec<usize>)> {
    let entry = table()
        .get(name)
        .ok_or_else(|| DistError::NoSignature(format!("op {name:?} has no SBP signatures")))?;
    let first = inputs
        .first()
        .ok_or_else(|| DistError::NoSignature(format!("op {name:?} called without inputs")))?;
    let mesh = first.mesh();
    if inputs.iter().any(|g| !g.mesh().same_as(mesh)) {
        return Err(DistError::Placement(format!(
            "inputs of {name:?} live on different meshes"
        )));
    }
    let metas: Vec<TensorMeta> = inputs
        .iter()
        .map(|g| TensorMeta::dense(g.logical_shape().to_vec(), g.dtype()))
        .collect();
    let (out, _) = registry().get(name)?.infer(kv, &metas)?;
    let out_shape = out[0].shape.clone();
    let shapes: Vec<Vec<usize>> = metas.iter().map(|m| m.shape.clone()).collect();
    let ctx = SigCtx {
        inputs: &shapes,
        output: &out_shape,
        kv,
        mesh: mesh.shape(),
    };
    let per_axis = (entry.rule)(&ctx)?;
    // While gradients are recorded, only signatures they flow back through (D10).
    let recording = crate::global::recording(inputs);
    let mut best: Option<(NdSignature, f64)> = None;
    for cand in products(&per_axis, mesh.shape().len(), inputs.len()) {
        if recording && !(has_dual(&cand.output) && cand.inputs.iter().all(|s| has_dual(s))) {
            continue;
        }
        let mut total = 0.0;
        for (g, dst) in inputs.iter().zip(&cand.inputs) {
            let p = plan::plan(
                g.logical_shape(),
                g.dtype().itemsize(),
                mesh.shape(),
                g.sbp(),
                dst,
            )?;
            total += plan::cost(&p);
        }
        if best.as_ref().is_none_or(|(_, c)| total < *c) {
            best = Some((cand, total));
        }
    }
    let (sig, cost) =
        best.ok_or_else(|| DistError::NoSignature(format!("op {name:?}: no candidate")))?;
    Ok((sig, cost, out_shape))
}

/// Runs op `name` on global tensors: the global counterpart of [`tessera::ops::invoke`]
/// (single-output ops). Collective: every rank must call it with the same arguments.
pub fn invoke(name: &str, inputs: &[&GlobalTensor], kv: &[(&str, &str)]) -> Result<GlobalTensor> {
    let (sig, _, out_shape) = choose_signature(name, inputs, kv)?;
    let mesh = inputs[0].mesh();
    let boxed = inputs
        .iter()
        .zip(&sig.inputs)
        .map(|(g, s)| Ok(g.to_sbp(s)?.to_local()))
        .collect::<Result<Vec<Tensor>>>()?;
    let out_phys = physical_shape(&out_shape, &sig.output, mesh.shape(), mesh.coords())?;
    let local = match table()[name].local {
        LocalCall::Same => run(name, &boxed, kv)?,
        LocalCall::OutputShape(key) => {
            let shape: Vec<isize> = out_phys.iter().map(|&d| d as isize).collect();
            let rendered = shape.render();
            let kv2: Vec<(&str, &str)> = kv
                .iter()
                .filter(|(k, _)| *k != key)
                .copied()
                .chain([(key, rendered.as_str())])
                .collect();
            run(name, &boxed, &kv2)?
        }
        LocalCall::Reduction => {
            let shapes: Vec<Vec<usize>> =
                inputs.iter().map(|g| g.logical_shape().to_vec()).collect();
            let ctx = SigCtx {
                inputs: &shapes,
                output: &out_shape,
                kv,
                mesh: mesh.shape(),
            };
            reduce_local(name, &boxed[0], &sig, &ctx, &out_phys)?
        }
    };
    if local.shape() != out_phys.as_slice() {
        return Err(DistError::Placement(format!(
            "{name}: local result {:?} is not the physical shape {out_phys:?} of {:?} under {}",
            local.shape(),
            out_shape,
            fmt_nd(&sig.output)
        )));
    }
    GlobalTensor::from_local(local, &out_shape, &sig.output, mesh, false)
}

fn run(name: &str, inputs: &[Tensor], kv: &[(&str, &str)]) -> Result<Tensor> {
    let mut out = tessera::ops::invoke(name, inputs, kv)?;
    Ok(out.swap_remove(0))
}

/// D3 for reductions: an empty shard of a reduced split axis gives the identity (a max or
/// min of nothing is otherwise an error).
fn reduce_local(
    name: &str,
    x: &Tensor,
    sig: &NdSignature,
    ctx: &SigCtx,
    out_phys: &[usize],
) -> Result<Tensor> {
    let (axes, _) = reduce_axes(ctx)?;
    let split_reduced = sig.inputs[0]
        .iter()
        .any(|s| matches!(s, Sbp::Split(a) if axes.contains(a)));
    let empty = axes.iter().any(|&a| x.shape()[a] == 0);
    let out_dtype = {
        let m = [TensorMeta::dense(x.shape().to_vec(), x.dtype())];
        registry().get(name)?.infer(ctx.kv, &m)?.0[0].dtype
    };
    match name {
        "max" | "min" if split_reduced && empty => {
            let op = if name == "max" {
                PartialOp::Max
            } else {
                PartialOp::Min
            };
            identity_tensor(out_phys, op, out_dtype)
        }
        _ => run(name, std::slice::from_ref(x), ctx.kv),
    }
}

/// Elementwise unary op.
pub fn unary(x: &GlobalTensor, op: UnaryOp) -> Result<GlobalTensor> {
    invoke(op.name(), &[x], &[])
}

/// Elementwise binary op with broadcasting.
pub fn binary(a: &GlobalTensor, b: &GlobalTensor, op: BinaryOp) -> Result<GlobalTensor> {
    invoke(op.name(), &[a, b], &[])
}

/// Elementwise comparison with broadcasting.
pub fn compare(a: &GlobalTensor, b: &GlobalTensor, op: CompareOp) -> Result<GlobalTensor> {
    invoke(op.name(), &[a, b], &[])
}

/// `a*x^2 + b*x + c` elementwise.
pub fn quadratic(x: &GlobalTensor, a: f64, b: f64, c: f64) -> Result<GlobalTensor> {
    let (a, b, c) = (a.to_string(), b.to_string(), c.to_string());
    invoke("quadratic", &[x], &[("a", &a), ("b", &b), ("c", &c)])
}

/// PyTorch `expand` of the logical tensor (D4).
pub fn expand(x: &GlobalTensor, sizes: &[isize]) -> Result<GlobalTensor> {
    invoke("expand", &[x], &[("sizes", &sizes.to_vec().render())])
}

/// PyTorch `repeat` of the logical tensor (D5).
pub fn repeat(x: &GlobalTensor, counts: &[usize]) -> Result<GlobalTensor> {
    let c: Vec<isize> = counts.iter().map(|&c| c as isize).collect();
    invoke("repeat", &[x], &[("reps", &c.render())])
}

/// Reshape of the logical tensor (D3 for splits).
pub fn reshape(x: &GlobalTensor, shape: &[isize]) -> Result<GlobalTensor> {
    invoke("reshape", &[x], &[("shape", &shape.to_vec().render())])
}

/// A reduction (`"sum"`, `"mean"`, `"max"` or `"min"`) over `axes` (all when `None`).
pub fn reduce(
    x: &GlobalTensor,
    kind: &str,
    axes: Option<&[isize]>,
    keepdims: bool,
) -> Result<GlobalTensor> {
    let axis = axes.map(|a| a.to_vec()).render();
    let keep = keepdims.to_string();
    invoke(kind, &[x], &[("axis", &axis), ("keepdims", &keep)])
}

/// 2-D matrix product.
pub fn matmul(a: &GlobalTensor, b: &GlobalTensor) -> Result<GlobalTensor> {
    invoke("matmul", &[a, b], &[])
}

/// A view selected by index specs; splits survive along axes the index keeps whole.
pub fn index(x: &GlobalTensor, specs: &[IndexSpec]) -> Result<GlobalTensor> {
    let code: Vec<isize> = encode(specs).iter().map(|&v| v as isize).collect();
    invoke("create_view", &[x], &[("index", &code.render())])
}
