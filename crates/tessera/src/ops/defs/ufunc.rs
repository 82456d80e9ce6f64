//! Registry entries of the Array API's elementwise functions beyond `math.rs` (dense
//! kernels in `tensor/ufunc.rs`; backward rules in `ufunc_grads.rs`). Sparse inputs take the
//! logged dense fallback (docs/design.md O3).

use super::shape_ops::NoParams;
use super::ufunc_grads::{binary_backward, binary_rule, unary_backward, unary_rule, Rule};
use crate::layout::broadcast_shapes;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::TensorMeta;
use crate::tensor::ufunc::{MathBinaryOp, MathOp};

/// The registry text of each unary function.
fn unary_doc(op: MathOp) -> &'static str {
    use MathOp::*;
    match op {
        Acos => "Elementwise arc cosine (principal value in [0, pi]; NaN outside [-1, 1]). Integers compute in float (as `sqrt`).",
        Acosh => "Elementwise inverse hyperbolic cosine (NaN below 1).",
        Asin => "Elementwise arc sine (NaN outside [-1, 1]).",
        Asinh => "Elementwise inverse hyperbolic sine.",
        Atan => "Elementwise arc tangent.",
        Atanh => "Elementwise inverse hyperbolic tangent (+-inf at +-1, NaN outside [-1, 1]).",
        Cos => "Elementwise cosine.",
        Cosh => "Elementwise hyperbolic cosine.",
        Expm1 => "Elementwise `exp(x) - 1`, accurate near 0.",
        Log1p => "Elementwise `log(1 + x)`, accurate near 0.",
        Log2 => "Elementwise base-2 logarithm.",
        Log10 => "Elementwise base-10 logarithm.",
        Sinh => "Elementwise hyperbolic sine.",
        Tan => "Elementwise tangent.",
        Reciprocal => "Elementwise `1 / x` (integers compute in float, unlike NumPy's integer `reciprocal`).",
        Ceil => "Elementwise ceiling; integer inputs are returned unchanged (same dtype); bool is an error.",
        Floor => "Elementwise floor; integer inputs are returned unchanged (same dtype); bool is an error.",
        Trunc => "Elementwise truncation toward zero; integer inputs are returned unchanged; bool is an error.",
        Round => "Elementwise rounding to the nearest integer, ties to even; integer inputs are returned unchanged; bool is an error.",
        Sign => "Elementwise sign: -1, 0 or 1 in the input's dtype (NaN stays NaN; both zeros give +0.0, as NumPy); bool is an error.",
        Positive => "Elementwise `+x` (a copy); bool is an error.",
        Isnan => "Elementwise NaN test, a bool tensor (false for integers and bool).",
        Isinf => "Elementwise infinity test, a bool tensor (false for integers and bool).",
        Isfinite => "Elementwise finiteness test, a bool tensor (true for integers and bool).",
        Signbit => "Elementwise sign-bit test, a bool tensor (true for -0.0 and negative NaNs; `x < 0` for integers).",
        BitwiseInvert => "Elementwise `~x` (two's complement for integers, logical not for bool; an error for floats).",
        LogicalNot => "Elementwise logical not of `x != 0`, a bool tensor.",
    }
}

/// The registry text of each binary function.
fn binary_doc(op: MathBinaryOp) -> &'static str {
    use MathBinaryOp::*;
    match op {
        Atan2 => "Elementwise four-quadrant arc tangent of `x1 / x2` with broadcasting and promotion (integers compute in float).",
        Copysign => "Elementwise `|x1|` with the sign bit of `x2`.",
        Hypot => "Elementwise `sqrt(x1^2 + x2^2)` without undue overflow (inf if either is infinite, even with NaN).",
        Logaddexp => "Elementwise `log(exp(x1) + exp(x2))` without overflow.",
        Nextafter => "Elementwise next representable value after `x1` toward `x2` in the result dtype (`x2` when equal).",
        FloorDivide => "Elementwise Python floor division `x1 // x2` (two bools give int8; an integer division by zero gives 0, as NumPy without its warning; float division by zero gives +-inf or NaN; with an infinite operand `floor(x1 / x2)`, the standard's special cases, where NumPy gives NaN or -1).",
        Remainder => "Elementwise Python remainder `x1 % x2`, with the sign of `x2` (two bools give int8; an integer remainder by zero gives 0; float remainder by zero is NaN).",
        BitwiseAnd => "Elementwise `x1 & x2` (integers and bool).",
        BitwiseOr => "Elementwise `x1 | x2` (integers and bool).",
        BitwiseXor => "Elementwise `x1 ^ x2` (integers and bool).",
        BitwiseLeftShift => "Elementwise `x1 << x2` (integers; a shift by a negative amount or by at least the bit width gives 0, as NumPy).",
        BitwiseRightShift => "Elementwise `x1 >> x2`, arithmetic for signed types (integers; a shift by a negative amount or by at least the bit width gives -1 for negative `x1`, else 0, as NumPy).",
        LogicalAnd => "Elementwise logical and of `x1 != 0` and `x2 != 0`, a bool tensor.",
        LogicalOr => "Elementwise logical or of `x1 != 0` and `x2 != 0`, a bool tensor.",
        LogicalXor => "Elementwise logical xor of `x1 != 0` and `x2 != 0`, a bool tensor.",
    }
}

macro_rules! unary {
    ($r:ident, $($op:ident),* $(,)?) => {$(
        let def = OpDef::<NoParams>::new(
            MathOp::$op.name(),
            unary_doc(MathOp::$op),
            &["x"],
            &["y"],
            |_, m| {
                Ok(vec![TensorMeta::dense(
                    m[0].shape.clone(),
                    MathOp::$op.result_dtype(m[0].dtype)?,
                )])
            },
            |_, x| Ok(vec![x[0].math_dense(MathOp::$op)?]),
        );
        $r.add(match unary_rule(MathOp::$op) {
            Rule::Backward(doc, saves) => {
                def.backward(doc, saves, |_, ctx| unary_backward(MathOp::$op, ctx))
            }
            Rule::None(why) => def.not_differentiable(why),
        });
    )*};
}

macro_rules! binary {
    ($r:ident, $($op:ident),* $(,)?) => {$(
        let def = OpDef::<NoParams>::new(
            MathBinaryOp::$op.name(),
            binary_doc(MathBinaryOp::$op),
            &["x1", "x2"],
            &["y"],
            |_, m| {
                Ok(vec![TensorMeta::dense(
                    broadcast_shapes(&m[0].shape, &m[1].shape)?,
                    MathBinaryOp::$op.result_dtype(m[0].dtype, m[1].dtype)?,
                )])
            },
            |_, x| Ok(vec![x[0].math_binary_dense(&x[1], MathBinaryOp::$op)?]),
        );
        $r.add(match binary_rule(MathBinaryOp::$op) {
            Rule::Backward(doc, saves) => {
                def.backward(doc, saves, |_, ctx| binary_backward(MathBinaryOp::$op, ctx))
            }
            Rule::None(why) => def.not_differentiable(why),
        });
    )*};
}

pub(super) fn register(r: &mut OpTable) {
    unary!(
        r,
        Acos,
        Acosh,
        Asin,
        Asinh,
        Atan,
        Atanh,
        Cos,
        Cosh,
        Expm1,
        Log1p,
        Log2,
        Log10,
        Sinh,
        Tan,
        Reciprocal,
        Ceil,
        Floor,
        Trunc,
        Round,
        Sign,
        Positive,
        Isnan,
        Isinf,
        Isfinite,
        Signbit,
        BitwiseInvert,
        LogicalNot
    );
    binary!(
        r,
        Atan2,
        Copysign,
        Hypot,
        Logaddexp,
        Nextafter,
        FloorDivide,
        Remainder,
        BitwiseAnd,
        BitwiseOr,
        BitwiseXor,
        BitwiseLeftShift,
        BitwiseRightShift,
        LogicalAnd,
        LogicalOr,
        LogicalXor
    );
}
