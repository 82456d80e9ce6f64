//! Advanced-indexing gathers (docs/design.md X1-X5): `index_gather` (integer arrays
//! along some dims of a basic view) and `boolean_mask` (`x[mask]` over the leading dims).
//! Their input gradients scatter into zeros of the input's shape; `index_gather` adds, so
//! repeated indices accumulate.

use crate::advanced_index::{gather, mask};
use crate::autograd::{BackwardCtx, Saves};
use crate::error::Result;
use crate::index::{self, IndexSpec};
use crate::layout::Layout;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::tensor::Tensor;

op_params! {
    /// Parameters of `index_gather`.
    pub struct IndexGatherParams {
        /// Basic index specs selecting the view that the index arrays then index.
        index: Vec<IndexSpec>;
        /// The view dims the rows of `indices` select along (increasing).
        axes: Vec<isize>;
        /// Index dims first even for adjacent `axes` (NumPy, when an ellipsis separates them).
        front: bool = false;
    }
}

op_params! {
    /// Parameters of `boolean_mask`.
    pub struct BooleanMaskParams {
        /// The number of true entries of the mask (the output's leading dim; checked).
        count: usize;
    }
}

fn gather_shape(p: &IndexGatherParams, x: &[usize], indices: &[usize]) -> Result<Vec<usize>> {
    let view = index::apply(&Layout::contiguous(x)?, &p.index)?;
    gather::out_dims(view.dims(), &p.axes, indices, p.front)
}

fn gather_back(p: &IndexGatherParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    let z = Tensor::zeros(&m.shape, m.dtype)?;
    let view = z.index_dense(&p.index)?;
    gather::scatter_add(&view, &p.axes, ctx.input(1)?, p.front, &ctx.dense_grad(0)?)?;
    Ok(vec![Some(z), None])
}

fn mask_back(_: &BooleanMaskParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    let z = Tensor::zeros(&m.shape, m.dtype)?;
    mask::unselect(&z, ctx.input(1)?, &ctx.dense_grad(0)?.contiguous()?)?;
    Ok(vec![Some(z), None])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<IndexGatherParams>::new(
            "index_gather",
            "NumPy advanced indexing as a copy: the view `input[index]` (basic specs) gathered \
             at integer `indices` (shape [len(axes), *B], one broadcast index array per view dim \
             in `axes`; negative entries count from the end, out of range is an IndexError). B \
             replaces the indexed dims when `axes` are adjacent and goes first otherwise \
             (or when `front`).",
            &["input", "indices"],
            &["output"],
            |p, m| {
                Ok(vec![TensorMeta::dense(
                    gather_shape(p, &m[0].shape, &m[1].shape)?,
                    m[0].dtype,
                )])
            },
            |p, x| {
                let view = x[0].index_dense(&p.index)?;
                Ok(vec![gather::gather(&view, &p.axes, &x[1], p.front)?])
            },
        )
        .backward(
            "dinput = zeros of the input's shape with g added at the gathered positions (repeated indices accumulate); indices get none (integers)",
            Saves {
                inputs: &[1],
                outputs: &[],
            },
            gather_back,
        ),
    );
    r.add(
        OpDef::<BooleanMaskParams>::new(
            "boolean_mask",
            "NumPy `input[mask]` for a bool mask over the leading dims (its shape must match \
             them, else an IndexError): the selected rows in row-major order, shape \
             [count, *input.shape[mask.ndim:]], a new tensor. `count` (the mask's true \
             entries, a ValueError when wrong) makes the shape known before the data.",
            &["input", "mask"],
            &["output"],
            |p, m| {
                mask::check_shape(&m[0].shape, &m[1].shape)?;
                Ok(vec![TensorMeta::dense(
                    mask::out_shape(&m[0].shape, &m[1].shape, p.count),
                    m[0].dtype,
                )])
            },
            |p, x| Ok(vec![mask::select(&x[0], &x[1], p.count)?]),
        )
        .backward(
            "dinput = zeros of the input's shape with g's rows written where the mask is true; the mask gets none (bool)",
            Saves {
                inputs: &[1],
                outputs: &[],
            },
            mask_back,
        ),
    );
}
