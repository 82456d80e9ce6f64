//! Gradient rules of the factorizations (docs/design.md G9), for real matrices (complex tensors
//! do not record gradients, T4). Each is the textbook reverse-mode rule written with registry
//! ops, so it runs batched:
//! - `inv`: `gA = -Yᵀ g Yᵀ` (`Y = A⁻¹`);
//! - `solve`: `gB = solve(Aᵀ, gX)`, `gA = -gB Xᵀ`, each summed over the batch dims its operand
//!   was broadcast along;
//! - `det`: `gA = g det(A) A⁻ᵀ`; `slogdet`: `gA = g_logabsdet A⁻ᵀ` (the sign is piecewise
//!   constant: no gradient). Both need `A` invertible at backward time (`LinAlg` otherwise);
//! - `eigh` / `eigvalsh`: `G = V (diag(gw) + F ∘ (Vᵀ gV)) Vᵀ` with `F_ij = 1 / (w_j - w_i)`
//!   (distinct eigenvalues; equal ones give inf, as PyTorch), then folded onto the lower
//!   triangle the op reads;
//! - `cholesky`: `G = L⁻ᵀ Φ(Lᵀ gL) L⁻¹` with `Φ` the lower triangle, diagonal halved
//!   (Murray 2016), symmetrised and folded onto the triangle the op reads;
//! - `svd` (the singular values only) / `svdvals`: `gA = U diag(gS) Vh`; a gradient reaching
//!   `U` or `Vh` is an `Autograd` error (not built).

use crate::autograd::{BackwardCtx, Meta};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::ops::grad_util::{reduce_to, signed};
use crate::tensor::Tensor;

/// `t` with its last two dims swapped.
fn mt(t: &Tensor) -> Result<Tensor> {
    t.transpose(-1, -2)
}

/// `A⁻ᵀ` scaled per matrix by `s` (`[..]`).
fn scaled_inv_t(a: &Tensor, s: &Tensor) -> Result<Tensor> {
    mt(&a.inv()?)?.mul(&s.unsqueeze(-1)?.unsqueeze(-1)?)
}

/// The gradient over a symmetric matrix `G` (any square `[.., n, n]`, taken as its symmetric
/// part) folded onto the triangle the op reads: entries of the other triangle do not change
/// the result (gradient 0), an off-diagonal entry of the read one stands for both `(i, j)` and
/// `(j, i)`.
fn fold_onto_triangle(g: &Tensor, upper: bool) -> Result<Tensor> {
    let both = g.add(&mt(g)?)?;
    let diag_only = g.sub(&g.tril(-1)?)?.sub(&g.triu(1)?)?;
    let off = if upper { both.triu(1)? } else { both.tril(-1)? };
    off.add(&diag_only)
}

/// `diag(v)` for a stack of vectors `[.., n]`: `[.., n, n]`.
fn diag_embed(v: &Tensor) -> Result<Tensor> {
    let n = v.shape().last().copied().unwrap_or(0);
    let eye = Tensor::eye(n, n, 0, v.dtype())?;
    v.unsqueeze(-2)?.mul(&eye)
}

pub(super) fn inv_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (y, g) = (ctx.output(0)?, ctx.dense_grad(0)?);
    let yt = mt(y)?;
    Ok(vec![Some(yt.matmul(&g)?.matmul(&yt)?.mul_scalar(-1.0)?)])
}

pub(super) fn solve_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (a, x, g) = (ctx.input(0)?, ctx.output(0)?, ctx.dense_grad(0)?);
    let vector = ctx.input_meta(1).shape.len() == 1;
    // As matrices: a vector right-hand side is one column.
    let (x2, g2) = if vector {
        (x.unsqueeze(-1)?, g.unsqueeze(-1)?)
    } else {
        (x.clone(), g.clone())
    };
    let gb = mt(a)?.solve(&g2)?;
    let back = |d: Tensor, m: &Meta| -> Result<Tensor> { reduce_to(&d, m)?.reshape(&signed(m)) };
    let da = if ctx.needs(0) {
        Some(back(
            gb.matmul(&mt(&x2)?)?.mul_scalar(-1.0)?,
            ctx.input_meta(0),
        )?)
    } else {
        None
    };
    let db = if ctx.needs(1) {
        let gb = if vector { gb.squeeze(Some(&[-1]))? } else { gb };
        Some(back(gb, ctx.input_meta(1))?)
    } else {
        None
    };
    Ok(vec![da, db])
}

pub(super) fn det_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (a, d, g) = (ctx.input(0)?, ctx.output(0)?, ctx.dense_grad(0)?);
    Ok(vec![Some(scaled_inv_t(a, &g.mul(d)?)?)])
}

pub(super) fn slogdet_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (a, g) = (ctx.input(0)?, ctx.dense_grad(1)?);
    Ok(vec![Some(scaled_inv_t(a, &g)?)])
}

/// The rule of `eigh` (`vectors`: its second output is the eigenvectors) and `eigvalsh`.
fn eigen_backward(ctx: &BackwardCtx<'_>, vectors: bool) -> Result<Vec<Option<Tensor>>> {
    let (w, gw) = (ctx.output(0)?, ctx.dense_grad(0)?);
    let v = if vectors {
        ctx.output(1)?.clone()
    } else {
        // eigvalsh saves no eigenvectors: recompute them.
        ctx.input(0)?.eigh()?.1
    };
    let mut inner = diag_embed(&gw)?;
    if vectors {
        let gv = ctx.dense_grad(1)?;
        // F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
        let diff = w.unsqueeze(-2)?.sub(&w.unsqueeze(-1)?)?;
        let n = w.shape().last().copied().unwrap_or(0);
        let eye = Tensor::eye(n, n, 0, w.dtype())?;
        let f = diff.add(&eye)?.reciprocal()?.sub(&eye)?;
        inner = inner.add(&f.mul(&mt(&v)?.matmul(&gv)?)?)?;
    }
    let g = v.matmul(&inner)?.matmul(&mt(&v)?)?;
    Ok(vec![Some(fold_onto_triangle(
        &g.add(&mt(&g)?)?.mul_scalar(0.5)?,
        false,
    )?)])
}

pub(super) fn eigh_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    eigen_backward(ctx, true)
}

pub(super) fn eigvalsh_backward<P>(_: &P, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    eigen_backward(ctx, false)
}

pub(super) fn cholesky_backward(upper: bool, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (f, g) = (ctx.output(0)?, ctx.dense_grad(0)?);
    // In terms of the lower factor L (U = Lᵀ, gL = gUᵀ).
    let (l, gl) = if upper {
        (mt(f)?, mt(&g)?)
    } else {
        (f.clone(), g)
    };
    let phi = mt(&l)?.matmul(&gl)?.tril(0)?;
    let phi = phi.sub(&diag_embed(&phi.diagonal(0)?)?.mul_scalar(0.5)?)?;
    let li = l.inv()?;
    let s = mt(&li)?.matmul(&phi)?.matmul(&li)?;
    let sym = s.add(&mt(&s)?)?.mul_scalar(0.5)?;
    Ok(vec![Some(fold_onto_triangle(&sym, upper)?)])
}

/// The rule of `svd` (`factors`: U and Vh are outputs 0 and 2, S output 1) and `svdvals`.
pub(super) fn singular_values_backward(
    ctx: &BackwardCtx<'_>,
    factors: bool,
) -> Result<Vec<Option<Tensor>>> {
    let (u, gs, vh) = if factors {
        for i in [0, 2] {
            let gi = ctx.dense_grad(i)?;
            let reached = gi.numel() > 0
                && gi
                    .abs()?
                    .max(None, false)?
                    .astype(DType::F64)?
                    .item::<f64>()?
                    != 0.0;
            if reached {
                return Err(ErrorKind::Autograd(
                    "svd: gradients through U and Vh are not built; only the singular values \
                     (S, or svdvals) are differentiable"
                        .into(),
                )
                .into());
            }
        }
        (
            ctx.output(0)?.clone(),
            ctx.dense_grad(1)?,
            ctx.output(2)?.clone(),
        )
    } else {
        let (u, _, vh) = ctx.input(0)?.svd(false)?;
        (u, ctx.dense_grad(0)?, vh)
    };
    // Only the first k = min(m, n) columns of U and rows of Vh pair with S.
    let k = gs.shape().last().copied().unwrap_or(0);
    let u = u.narrow(-1, 0, k)?;
    let vh = vh.narrow(-2, 0, k)?;
    Ok(vec![Some(u.mul(&gs.unsqueeze(-2)?)?.matmul(&vh)?)])
}
