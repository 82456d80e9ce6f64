//! `concat` and `stack`: ops of any positive number of inputs (kernels in
//! `crate::arrayfns::join`).

use crate::arrayfns::join::concat_shape;
use crate::autograd::{BackwardCtx, Saves};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::layout::normalize_axis;
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::{cast_to, signed};
use crate::ops::stype::TensorMeta;
use crate::promote::result_type;
use crate::tensor::Tensor;

op_params! {
    /// Parameters of `concat`.
    pub struct ConcatParams {
        /// Axis to join along; None flattens every input first.
        axis: Option<isize> = Some(0);
    }
}

op_params! {
    /// Parameters of `stack`.
    pub struct StackParams {
        /// Position of the new axis in the result (negative counts from the end).
        axis: isize = 0;
    }
}

fn common(m: &[TensorMeta]) -> Result<crate::DType> {
    let first = m.first().ok_or_else(|| {
        TesseraError::from(ErrorKind::InvalidArgument(
            "needs at least one tensor".into(),
        ))
    })?;
    m[1..]
        .iter()
        .try_fold(first.dtype, |d, x| result_type(d, x.dtype))
}

fn concat_meta(p: &ConcatParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let dt = common(m)?;
    let flat: Vec<Vec<usize>> = m
        .iter()
        .map(|x| match p.axis {
            None => vec![x.shape.iter().product()],
            Some(_) => x.shape.clone(),
        })
        .collect();
    let axis = normalize_axis(p.axis.unwrap_or(0), flat[0].len())?;
    let shapes: Vec<&[usize]> = flat.iter().map(Vec::as_slice).collect();
    Ok(vec![TensorMeta::dense(concat_shape(&shapes, axis)?, dt)])
}

fn stack_meta(p: &StackParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let dt = common(m)?;
    let axis = normalize_axis(p.axis, m[0].shape.len() + 1)?;
    let mut shape = m[0].shape.clone();
    shape.insert(axis, m.len());
    Ok(vec![TensorMeta::dense(shape, dt)])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<ConcatParams>::new(
            "concat",
            "Inputs joined along `axis` (flattened first when None); shapes must agree elsewhere; dtypes promote.",
            &["*arrays"],
            &["y"],
            concat_meta,
            |p, x| Ok(vec![Tensor::concat_dense(x, p.axis)?]),
        )
        .backward(
            "dx_i = the slice of g along the axis that x_i filled (reshaped back when flattened)",
            Saves::NOTHING,
            concat_backward,
        ),
    );
    r.add(
        OpDef::<StackParams>::new(
            "stack",
            "Inputs of one shape joined along a new axis at `axis`; dtypes promote.",
            &["*arrays"],
            &["y"],
            stack_meta,
            |p, x| Ok(vec![Tensor::stack_dense(x, p.axis)?]),
        )
        .backward(
            "dx_i = g at index i of the new axis",
            Saves::NOTHING,
            stack_backward,
        ),
    );
}

/// Rule of `concat`.
fn concat_backward(p: &ConcatParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let g = ctx.grad(0);
    let g = if p.axis.is_none() {
        g.reshape(&[-1])?
    } else {
        g.clone()
    };
    let axis = normalize_axis(p.axis.unwrap_or(0), g.rank())?;
    let mut start = 0;
    let mut out = Vec::new();
    for i in 0..ctx.input_count() {
        let m = ctx.input_meta(i);
        let len = if p.axis.is_none() {
            m.shape.iter().product()
        } else {
            m.shape[axis]
        };
        if ctx.needs(i) {
            let part = g.narrow(axis as isize, start, len)?.reshape(&signed(m))?;
            out.push(Some(cast_to(part, m)?));
        } else {
            out.push(None);
        }
        start += len;
    }
    Ok(out)
}

/// Rule of `stack`.
fn stack_backward(p: &StackParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let g = ctx.grad(0);
    let axis = normalize_axis(p.axis, g.rank())? as isize;
    (0..ctx.input_count())
        .map(|i| {
            if !ctx.needs(i) {
                return Ok(None);
            }
            let m = ctx.input_meta(i);
            let part = g.narrow(axis, i, 1)?.squeeze(Some(&[axis]))?;
            Ok(Some(cast_to(part, m)?))
        })
        .collect()
}

op_params! {
    /// Parameters of `repeat_interleave`.
    pub struct RepeatInterleaveParams {
        /// Axis to repeat along; None repeats the elements of the flattened tensor.
        axis: Option<isize> = None;
    }
}

/// `repeat_interleave`: NumPy's `repeat` (registered apart from the PyTorch-style `repeat`).
pub(super) fn register_repeat(r: &mut OpTable) {
    r.add(
        OpDef::<RepeatInterleaveParams>::new(
            "repeat_interleave",
            "NumPy's repeat: each element repeated along `axis` (flattened when None) by `repeats` (int64 0-d or 1-d: one count, or one per element). The length depends on the counts.",
            &["x", "repeats"],
            &["y"],
            |p, m| {
                let mut shape = match p.axis {
                    None => vec![m[0].shape.iter().product()],
                    Some(_) => m[0].shape.clone(),
                };
                let a = normalize_axis(p.axis.unwrap_or(0), shape.len())?;
                shape[a] = 0;
                Ok(vec![TensorMeta::dense(shape, m[0].dtype)])
            },
            |p, x| Ok(vec![x[0].repeat_interleave_dense(&x[1], p.axis)?]),
        )
        .data_dependent_shape()
        .backward(
            "dx = g summed over each element's copies; none for repeats",
            Saves::X1_X2,
            |p, ctx| {
                let (x, r) = (ctx.input(0)?, ctx.input(1)?);
                let g = ctx.dense_grad(0)?;
                Ok(vec![Some(x.unrepeat_interleave_dense(&g, r, p.axis)?), None])
            },
        ),
    );
}
