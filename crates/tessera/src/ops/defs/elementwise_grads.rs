//! Backward rules of the elementwise ops: unary functions, binary operations with
//! broadcasting (each gradient summed back to its input's shape and dtype), scalar operands.

use crate::autograd::BackwardCtx;
use crate::error::Result;
use crate::ops::grad_util::{cast_to, reduce_to};
use crate::tensor::arith::{BinaryOp, CompareOp, UnaryOp};
use crate::tensor::ufunc::MathOp;
use crate::tensor::Tensor;

/// What each unary rule saves (`X`: the input; `Y`: the output).
pub(crate) fn unary_saves(op: UnaryOp) -> crate::autograd::Saves {
    use crate::autograd::Saves;
    match op {
        UnaryOp::Neg => Saves::NOTHING,
        UnaryOp::Sqrt | UnaryOp::Exp | UnaryOp::Tanh => Saves::Y,
        _ => Saves::X,
    }
}

/// The rule of each unary op, in words.
pub(crate) fn unary_doc(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "dx = -g",
        UnaryOp::Abs => "dx = g * sign(x) (0 at x = 0)",
        UnaryOp::Sqrt => "dx = g / (2 * y) (inf at x = 0)",
        UnaryOp::Exp => "dx = g * y",
        UnaryOp::Log => "dx = g / x",
        UnaryOp::Square => "dx = 2 * g * x",
        UnaryOp::Sin => "dx = g * cos(x)",
        UnaryOp::Tanh => "dx = g * (1 - y^2)",
        UnaryOp::Relu => "dx = g where x > 0, else 0 (0 at x = 0, as PyTorch)",
    }
}

/// `mask` (a bool tensor) as 0/1 in `like`'s dtype.
fn as_float(mask: Tensor, like: &Tensor) -> Result<Tensor> {
    mask.astype(like.dtype())
}

/// The backward rule of unary op `op`.
pub(crate) fn unary_backward(op: UnaryOp, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let g = ctx.grad(0);
    let dx = match op {
        UnaryOp::Neg => g.neg()?,
        UnaryOp::Abs => {
            let x = ctx.input(0)?;
            let sign = as_float(x.compare_scalar(0, CompareOp::Gt)?, g)?
                .sub(&as_float(x.compare_scalar(0, CompareOp::Lt)?, g)?)?;
            g.mul(&sign)?
        }
        UnaryOp::Sqrt => g.div(&ctx.output(0)?.mul_scalar(2)?)?,
        UnaryOp::Exp => g.mul(ctx.output(0)?)?,
        UnaryOp::Log => g.div(ctx.input(0)?)?,
        UnaryOp::Square => g.mul(ctx.input(0)?)?.mul_scalar(2)?,
        // `cos(x)` itself: `sin(x + pi/2)` rounded `x + pi/2` first, which costs all the
        // relative accuracy near a zero of the cosine (1e-12 at x = pi/2 + 2e-4).
        UnaryOp::Sin => g.mul(&ctx.input(0)?.math(MathOp::Cos)?)?,
        UnaryOp::Tanh => {
            let y = ctx.output(0)?;
            g.mul(&y.square()?.rbinary_scalar(1, BinaryOp::Sub)?)?
        }
        UnaryOp::Relu => g.mul(&as_float(
            ctx.input(0)?.compare_scalar(0, CompareOp::Gt)?,
            g,
        )?)?,
    };
    Ok(vec![Some(cast_to(dx, ctx.input_meta(0))?)])
}

/// What each binary rule saves: `add` and `subtract` need only the gradient.
pub(crate) fn binary_saves(op: BinaryOp) -> crate::autograd::Saves {
    match op {
        BinaryOp::Add | BinaryOp::Sub => crate::autograd::Saves::NOTHING,
        _ => crate::autograd::Saves::X1_X2,
    }
}

/// The rule of each binary op, in words.
pub(crate) fn binary_doc(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "dx1 = g, dx2 = g (each summed back to its input's shape)",
        BinaryOp::Sub => "dx1 = g, dx2 = -g (each summed back to its input's shape)",
        BinaryOp::Mul => "dx1 = g * x2, dx2 = g * x1 (each summed back to its input's shape)",
        BinaryOp::Div => {
            "dx1 = g / x2, dx2 = -g * x1 / x2^2 (each summed back to its input's shape)"
        }
        BinaryOp::Maximum => {
            "g goes to the larger input; ties split it equally, as PyTorch (summed back to each \
             input's shape)"
        }
        BinaryOp::Minimum => {
            "g goes to the smaller input; ties split it equally, as PyTorch (summed back to each \
             input's shape)"
        }
        BinaryOp::Pow => {
            "dx1 = g * x2 * x1^(x2 - 1), dx2 = g * y * ln(x1), taken as 0 where x1 = 0 (as \
             PyTorch; summed back to each input's shape)"
        }
    }
}

/// The backward rule of binary op `op`.
pub(crate) fn binary_backward(op: BinaryOp, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let g = ctx.grad(0);
    let (n1, n2) = (ctx.needs(0), ctx.needs(1));
    let (d1, d2): (Option<Tensor>, Option<Tensor>) = match op {
        BinaryOp::Add => (Some(g.clone()), Some(g.clone())),
        BinaryOp::Sub => (Some(g.clone()), n2.then(|| g.neg()).transpose()?),
        BinaryOp::Mul => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            (
                n1.then(|| g.mul(x2)).transpose()?,
                n2.then(|| g.mul(x1)).transpose()?,
            )
        }
        BinaryOp::Div => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            let d1 = g.div(x2)?;
            let d2 = n2.then(|| d1.mul(x1)?.div(x2)?.neg()).transpose()?;
            (Some(d1), d2)
        }
        BinaryOp::Maximum | BinaryOp::Minimum => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            let first = if op == BinaryOp::Maximum {
                x1.gt(x2)?
            } else {
                x1.lt(x2)?
            };
            let tie = as_float(x1.eq(x2)?, g)?.mul_scalar(0.5)?;
            let w1 = as_float(first, g)?.add(&tie)?;
            let d1 = g.mul(&w1)?;
            let d2 = n2.then(|| g.sub(&d1)).transpose()?;
            (Some(d1), d2)
        }
        BinaryOp::Pow => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            let d1 = n1
                .then(|| g.mul(x2)?.mul(&x1.pow(&x2.sub_scalar(1)?)?))
                .transpose()?;
            let d2 = n2
                .then(|| {
                    // ln(x1) with the zeros of x1 replaced by 1, so the term is 0 there.
                    let zero = as_float(x1.compare_scalar(0, CompareOp::Eq)?, g)?;
                    let ln = x1.add(&zero)?.log()?;
                    g.mul(&x1.pow(x2)?)?.mul(&ln)
                })
                .transpose()?;
            (d1, d2)
        }
    };
    let back = |d: Option<Tensor>, i: usize| -> Result<Option<Tensor>> {
        match d {
            Some(d) if ctx.needs(i) => Ok(Some(reduce_to(&d, ctx.input_meta(i))?)),
            _ => Ok(None),
        }
    };
    Ok(vec![back(d1, 0)?, back(d2, 1)?])
}
