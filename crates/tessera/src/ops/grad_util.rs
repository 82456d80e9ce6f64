//! Building blocks of the backward rules (docs/design.md G1; each op's rule sits beside its
//! definition in `defs/`, and docs/ops.md lists them).
//!
//! A rule maps the gradient of each output to a gradient of each input that needs one, with
//! the input's shape and dtype. Rules run with grad mode off and are written with the typed
//! `Tensor` methods. Here: undoing broadcasting ([`reduce_to`]), dtype casts, and the rules
//! shared by the view ops (a view's gradient goes back to the elements it selected, scattered
//! into zeros of the input's shape; a broadcast's is summed over the copies; a reshape's is
//! reshaped back).

use crate::autograd::{BackwardCtx, Meta};
use crate::error::Result;
use crate::tensor::Tensor;

/// `g` summed over the dims that broadcasting added or stretched, so that it has `m`'s shape,
/// and cast to `m`'s dtype (the gradient of a broadcast input).
pub(crate) fn reduce_to(g: &Tensor, m: &Meta) -> Result<Tensor> {
    let shape = &m.shape;
    let lead = g.rank() - shape.len();
    let mut axes: Vec<isize> = (0..lead as isize).collect();
    for (i, &d) in shape.iter().enumerate() {
        if d == 1 && g.shape()[lead + i] != 1 {
            axes.push((lead + i) as isize);
        }
    }
    let s = if axes.is_empty() {
        g.clone()
    } else {
        let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        g.sum(Some(&axes), false)?.reshape(&dims)?
    };
    cast_to(s, m)
}

/// `t` in `m`'s dtype.
pub(crate) fn cast_to(t: Tensor, m: &Meta) -> Result<Tensor> {
    if t.dtype() == m.dtype {
        Ok(t)
    } else {
        t.astype(m.dtype)
    }
}

/// `m`'s shape as the signed dims that shape-taking methods accept.
pub(crate) fn signed(m: &Meta) -> Vec<isize> {
    m.shape.iter().map(|&d| d as isize).collect()
}

/// Zeros of the input's shape with `g` written into the part `select` picks (the gradient
/// of a view that picks each input element at most once).
pub(crate) fn scatter(
    m: &Meta,
    g: &Tensor,
    select: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let z = Tensor::zeros(&m.shape, m.dtype)?;
    select(&z)?.assign(g)?;
    Ok(z)
}

/// dx = g reshaped to the input's shape (reshape, view, squeeze, unsqueeze).
pub(crate) fn reshape_back<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let m = ctx.input_meta(0);
    Ok(vec![Some(cast_to(
        ctx.dense_grad(0)?.reshape(&signed(m))?,
        m,
    )?)])
}

/// dx = g summed over the broadcast dims (expand, broadcast_to).
pub(crate) fn unbroadcast<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    Ok(vec![Some(reduce_to(
        &ctx.dense_grad(0)?,
        ctx.input_meta(0),
    )?)])
}

/// dx = g (copy, contiguous).
pub(crate) fn identity<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    Ok(vec![Some(cast_to(ctx.grad(0).clone(), ctx.input_meta(0))?)])
}

/// The gradient of `repeat`/`tile` by `counts` (already padded to the output's rank): the
/// output seen as `[c0, d0, c1, d1, ...]`, summed over the count axes.
pub(crate) fn unrepeat(g: &Tensor, m: &Meta, counts: &[usize]) -> Result<Tensor> {
    let rank = counts.len();
    let dims: Vec<usize> = std::iter::repeat_n(1, rank - m.shape.len())
        .chain(m.shape.iter().copied())
        .collect();
    let split: Vec<isize> = counts
        .iter()
        .zip(&dims)
        .flat_map(|(&c, &d)| [c as isize, d as isize])
        .collect();
    let axes: Vec<isize> = (0..rank as isize).map(|i| 2 * i).collect();
    let s = g.reshape(&split)?.sum(Some(&axes), false)?;
    cast_to(s.reshape(&signed(m))?, m)
}

/// The gradient of `as_strided`: `g` added into a zero buffer the size of the input's
/// storage through the output's layout (positions reached twice add up), then read back
/// through the input's layout. Computed in `f64`.
pub(crate) fn as_strided_back(
    x: &Tensor,
    g: &Tensor,
    dims: &[usize],
    strides: &[isize],
    offset: usize,
) -> Result<Tensor> {
    let len = x.storage()?.len();
    let mut buf = crate::storage::try_vec(0.0f64, len)?;
    let gv = g.astype(crate::DType::F64)?.to_vec::<f64>()?;
    for (i, v) in gv.into_iter().enumerate() {
        buf[position(i, dims, strides, offset)] += v;
    }
    let n = x.numel();
    let mut out = crate::storage::try_with_capacity(n)?;
    for i in 0..n {
        out.push(buf[position(i, x.shape(), x.strides(), x.layout().offset())]);
    }
    Tensor::from_vec(out, x.shape())?.astype(x.dtype())
}

/// The storage position of the `i`-th element (row-major) of a layout; the layout was
/// checked against the storage when the view was made.
fn position(mut i: usize, dims: &[usize], strides: &[isize], offset: usize) -> usize {
    let mut p = offset as isize;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        p += (i % d) as isize * s;
        i /= d;
    }
    p as usize
}
