//! Backward rules of the functions in `ufunc.rs` (docs/design.md U5): the smooth functions
//! get their derivative; the piecewise-constant ones (`ceil`, `floor`, `trunc`, `round`,
//! `sign`, `floor_divide`) a zero gradient, as PyTorch; functions with bool or integer-only
//! results, and `nextafter`, declare why they have none.

use crate::autograd::{BackwardCtx, Saves};
use crate::error::Result;
use crate::ops::grad_util::{cast_to, reduce_to};
use crate::tensor::ufunc::{MathBinaryOp, MathOp};
use crate::tensor::Tensor;

/// A function's gradient: a rule (its text and what it saves), or why there is none.
pub(crate) enum Rule {
    /// A backward rule: its text for docs/ops.md and the tensors it reads.
    Backward(&'static str, Saves),
    /// No gradient, and why.
    None(&'static str),
}

const BOOL_OUT: &str = "the output is bool, which has no gradient";
const INT_ONLY: &str = "defined for integer and bool dtypes only, which have no gradient";
const ZERO: &str = "dx = 0 (piecewise constant: zero almost everywhere, as PyTorch)";
const X1_X2_Y: Saves = Saves {
    inputs: &[0, 1],
    outputs: &[0],
};

/// The gradient of each unary function.
pub(crate) fn unary_rule(op: MathOp) -> Rule {
    use MathOp::*;
    use Rule::Backward as B;
    match op {
        Acos => B("dx = -g / sqrt(1 - x^2)", Saves::X),
        Acosh => B("dx = g / sqrt(x^2 - 1)", Saves::X),
        Asin => B("dx = g / sqrt(1 - x^2)", Saves::X),
        Asinh => B("dx = g / sqrt(x^2 + 1)", Saves::X),
        Atan => B("dx = g / (1 + x^2)", Saves::X),
        Atanh => B("dx = g / (1 - x^2)", Saves::X),
        Cos => B("dx = -g * sin(x)", Saves::X),
        Cosh => B("dx = g * sinh(x)", Saves::X),
        Expm1 => B("dx = g * (y + 1)", Saves::Y),
        Log1p => B("dx = g / (1 + x)", Saves::X),
        Log2 => B("dx = g / (x * ln 2)", Saves::X),
        Log10 => B("dx = g / (x * ln 10)", Saves::X),
        Sinh => B("dx = g * cosh(x)", Saves::X),
        Tan => B("dx = g * (1 + y^2)", Saves::Y),
        Reciprocal => B("dx = -g * y^2", Saves::Y),
        Positive => B("dx = g", Saves::NOTHING),
        Ceil | Floor | Trunc | Round | Sign => B(ZERO, Saves::NOTHING),
        Isnan | Isinf | Isfinite | Signbit | LogicalNot => Rule::None(BOOL_OUT),
        BitwiseInvert => Rule::None(INT_ONLY),
    }
}

/// The gradient of each binary function.
pub(crate) fn binary_rule(op: MathBinaryOp) -> Rule {
    use MathBinaryOp::*;
    use Rule::Backward as B;
    match op {
        Atan2 => B(
            "dx1 = g * x2 / (x1^2 + x2^2), dx2 = -g * x1 / (x1^2 + x2^2) (each summed back to \
             its input's shape)",
            Saves::X1_X2,
        ),
        Copysign => B(
            "dx1 = g * sign(x1) * sign(y) (0 at x1 = 0), dx2 = 0 (summed back to each input's \
             shape)",
            X1_X2_Y,
        ),
        Hypot => B(
            "dx1 = g * x1 / y, dx2 = g * x2 / y (each summed back to its input's shape)",
            X1_X2_Y,
        ),
        Logaddexp => B(
            "dx1 = g * exp(x1 - y), dx2 = g * exp(x2 - y) (each summed back to its input's \
             shape)",
            X1_X2_Y,
        ),
        Remainder => B(
            "dx1 = g, dx2 = -g * floor_divide(x1, x2) (each summed back to its input's shape)",
            Saves::X1_X2,
        ),
        FloorDivide => B(
            "dx1 = dx2 = 0 (piecewise constant: zero almost everywhere, as PyTorch)",
            Saves::NOTHING,
        ),
        Nextafter => Rule::None(
            "a one-ulp step: the output equals x1 up to rounding and does not vary with x2 \
             almost everywhere; no gradient is defined (as PyTorch)",
        ),
        BitwiseAnd | BitwiseOr | BitwiseXor | BitwiseLeftShift | BitwiseRightShift => {
            Rule::None(INT_ONLY)
        }
        LogicalAnd | LogicalOr | LogicalXor => Rule::None(BOOL_OUT),
    }
}

/// `1 - x^2`, `x^2 - 1` or `x^2 + 1` as `sign * x^2 + c`.
fn square_plus(x: &Tensor, sign: f64, c: f64) -> Result<Tensor> {
    x.square()?.mul_scalar(sign)?.add_scalar(c)
}

/// A zero gradient of the shape and dtype of `g`.
fn zeros_like(g: &Tensor) -> Result<Tensor> {
    Tensor::zeros(g.shape(), g.dtype())
}

/// The backward rule of unary function `op`.
pub(crate) fn unary_backward(op: MathOp, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    use MathOp::*;
    let g = ctx.grad(0);
    let x = || ctx.input(0);
    let y = || ctx.output(0);
    let dx = match op {
        Acos => g.div(&square_plus(x()?, -1.0, 1.0)?.sqrt()?)?.neg()?,
        Acosh => g.div(&square_plus(x()?, 1.0, -1.0)?.sqrt()?)?,
        Asin => g.div(&square_plus(x()?, -1.0, 1.0)?.sqrt()?)?,
        Asinh => g.div(&square_plus(x()?, 1.0, 1.0)?.sqrt()?)?,
        Atan => g.div(&square_plus(x()?, 1.0, 1.0)?)?,
        Atanh => g.div(&square_plus(x()?, -1.0, 1.0)?)?,
        Cos => g.mul(&x()?.sin()?)?.neg()?,
        Cosh => g.mul(&x()?.sinh()?)?,
        Expm1 => g.mul(&y()?.add_scalar(1)?)?,
        Log1p => g.div(&x()?.add_scalar(1)?)?,
        Log2 => g.div(&x()?.mul_scalar(std::f64::consts::LN_2)?)?,
        Log10 => g.div(&x()?.mul_scalar(std::f64::consts::LN_10)?)?,
        Sinh => g.mul(&x()?.cosh()?)?,
        Tan => g.mul(&square_plus(y()?, 1.0, 1.0)?)?,
        Reciprocal => g.mul(&y()?.square()?)?.neg()?,
        Positive => g.clone(),
        _ => zeros_like(g)?,
    };
    Ok(vec![Some(cast_to(dx, ctx.input_meta(0))?)])
}

/// The backward rule of binary function `op`.
pub(crate) fn binary_backward(
    op: MathBinaryOp,
    ctx: &BackwardCtx<'_>,
) -> Result<Vec<Option<Tensor>>> {
    use MathBinaryOp::*;
    let g = ctx.grad(0);
    let (n1, n2) = (ctx.needs(0), ctx.needs(1));
    let (d1, d2): (Option<Tensor>, Option<Tensor>) = match op {
        Atan2 => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            let r2 = x1.square()?.add(&x2.square()?)?;
            let gr = g.div(&r2)?;
            (
                n1.then(|| gr.mul(x2)).transpose()?,
                n2.then(|| gr.mul(x1)?.neg()).transpose()?,
            )
        }
        Copysign => {
            let (x1, y) = (ctx.input(0)?, ctx.output(0)?);
            let d1 = n1
                .then(|| g.mul(&x1.sign()?)?.mul(&y.sign()?))
                .transpose()?;
            (d1, n2.then(|| zeros_like(g)).transpose()?)
        }
        Hypot => {
            let (x1, x2, y) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
            let gy = g.div(y)?;
            (
                n1.then(|| gy.mul(x1)).transpose()?,
                n2.then(|| gy.mul(x2)).transpose()?,
            )
        }
        Logaddexp => {
            let (x1, x2, y) = (ctx.input(0)?, ctx.input(1)?, ctx.output(0)?);
            (
                n1.then(|| g.mul(&x1.sub(y)?.exp()?)).transpose()?,
                n2.then(|| g.mul(&x2.sub(y)?.exp()?)).transpose()?,
            )
        }
        Remainder => {
            let (x1, x2) = (ctx.input(0)?, ctx.input(1)?);
            (
                Some(g.clone()),
                n2.then(|| g.mul(&x1.floor_divide(x2)?)?.neg())
                    .transpose()?,
            )
        }
        _ => (
            n1.then(|| zeros_like(g)).transpose()?,
            n2.then(|| zeros_like(g)).transpose()?,
        ),
    };
    let back = |d: Option<Tensor>, i: usize| -> Result<Option<Tensor>> {
        match d {
            Some(d) if ctx.needs(i) => Ok(Some(reduce_to(&d, ctx.input_meta(i))?)),
            _ => Ok(None),
        }
    };
    Ok(vec![back(d1, 0)?, back(d2, 1)?])
}
