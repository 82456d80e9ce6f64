//! The reductions `sum`, `mean`, `max`, `min` and their backward rules: the output gradient
//! broadcast back over the reduced axes (`sum`), divided by the count (`mean`), or sent to the
//! extreme elements (`max`, `min`: ties share it equally, PyTorch's rule for `amax`/`amin`).

use super::sparse_rules::reduce_stype;
use crate::autograd::{BackwardCtx, Saves};
use crate::error::Result;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::cast_to;
use crate::ops::stype::TensorMeta;
use crate::sparse::kernels::sparse_sum;
use crate::tensor::arith::CompareOp;
use crate::tensor::reduce::{reduction_dtype, resolve_axes};
use crate::tensor::Tensor;

op_params! {
    /// Parameters of the reductions.
    pub struct ReduceParams {
        /// Axes to reduce (negative count from the end); None reduces all.
        axis: Option<Vec<isize>> = None;
        /// Keep reduced axes as size-1 dims.
        keepdims: bool = false;
    }
}

fn reduce_meta(kind: &str, p: &ReduceParams, m: &TensorMeta) -> Result<Vec<TensorMeta>> {
    let axes = resolve_axes(&m.shape, p.axis.as_deref(), p.keepdims)?;
    Ok(vec![TensorMeta::dense(
        axes.out_shape,
        reduction_dtype(kind, m.dtype),
    )])
}

macro_rules! reduction {
    ($r:ident, $($name:ident => $kernel:ident, $rule:ident, $saves:expr, $rule_doc:literal: $doc:literal),* $(,)?) => {$(
        let def = OpDef::<ReduceParams>::new(
            stringify!($name),
            $doc,
            &["x"],
            &["y"],
            |p, m| reduce_meta(stringify!($name), p, &m[0]),
            |p, x| Ok(vec![x[0].$kernel(p.axis.as_deref(), p.keepdims)?]),
        )
        .backward($rule_doc, $saves, $rule);
        $r.add(def);
    )*};
}

/// The `sum` op, registered and also run by [`Tensor::sum`] (`ops/methods.rs`): on csr /
/// row_sparse input the sparse kernel reads only the stored values.
pub(crate) fn sum_def() -> OpDef<ReduceParams> {
    OpDef::<ReduceParams>::new(
        "sum",
        "Sum over axes (ints and bool sum to int64; floats keep their dtype, pairwise summation). On csr / row_sparse input the output is dense and only stored values are read.",
        &["x"],
        &["y"],
        |p, m| reduce_meta("sum", p, &m[0]),
        |p, x| Ok(vec![x[0].sum_dense(p.axis.as_deref(), p.keepdims)?]),
    )
    .stype(|_, s| reduce_stype(s))
    .sparse(|p, x| Ok(vec![sparse_sum(&x[0], p.axis.as_deref(), p.keepdims)?]))
    .backward(
        "dx = g broadcast over the reduced axes",
        Saves::NOTHING,
        sum_backward,
    )
}

pub(super) fn register(r: &mut OpTable) {
    r.add(sum_def());
    reduction!(r,
        mean => mean_dense, mean_backward, Saves::NOTHING, "dx = g / count, broadcast over the reduced axes": "Mean over axes (ints give float64; an empty mean is NaN).",
        max => max_dense, extreme_backward, Saves::X_Y, "dx = g where x equals the maximum, shared equally among ties (PyTorch's amax rule)": "Maximum over axes (NaN propagates; an empty reduction is an error).",
        min => min_dense, extreme_backward, Saves::X_Y, "dx = g where x equals the minimum, shared equally among ties (PyTorch's amin rule)": "Minimum over axes (NaN propagates; an empty reduction is an error).",
    );
}

/// `g` with the reduced axes back as size-1 dims (the `keepdims` shape).
fn kept(p: &ReduceParams, ctx: &BackwardCtx<'_>, g: &Tensor) -> Result<Tensor> {
    let shape = &ctx.input_meta(0).shape;
    let ax = resolve_axes(shape, p.axis.as_deref(), true)?;
    let dims: Vec<isize> = ax.out_shape.iter().map(|&d| d as isize).collect();
    g.reshape(&dims)
}

/// Rule of `sum`: dx = g broadcast over the reduced axes.
pub(crate) fn sum_backward(p: &ReduceParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    let g = kept(p, ctx, ctx.grad(0))?.broadcast_to(&m.shape)?;
    Ok(vec![Some(cast_to(g, m)?)])
}

/// Rule of `mean`: dx = g / count broadcast over the reduced axes.
pub(crate) fn mean_backward(
    p: &ReduceParams,
    ctx: &BackwardCtx<'_>,
) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    let count = resolve_axes(&m.shape, p.axis.as_deref(), true)?
        .count
        .max(1);
    let g = kept(p, ctx, ctx.grad(0))?
        .div_scalar(count as f64)?
        .broadcast_to(&m.shape)?;
    Ok(vec![Some(cast_to(g, m)?)])
}

/// Rule of `max` and `min`: dx = g where x equals the result, divided by how many do.
pub(crate) fn extreme_backward(
    p: &ReduceParams,
    ctx: &BackwardCtx<'_>,
) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    let x = ctx.input(0)?;
    let y = kept(p, ctx, ctx.output(0)?)?;
    let hit = x.compare(&y, CompareOp::Eq)?.astype(x.dtype())?;
    let count = hit.sum(p.axis.as_deref(), true)?;
    let g = kept(p, ctx, ctx.grad(0))?;
    let dx = hit.mul(&g.div(&count)?)?;
    Ok(vec![Some(cast_to(dx, m)?)])
}
