//! The Array API's elementwise functions beyond `tensor/arith.rs`: trigonometric,
//! hyperbolic, logarithmic and rounding functions, predicates (`isnan` ...), bitwise and
//! logical operations, Python's `//` and `%`, `atan2`, `copysign`, `hypot`, `logaddexp`,
//! `nextafter`. Dense kernels only: the public methods run through the registry
//! (`ops/methods/ufunc.rs`, docs/design.md G1).
//!
//! Dtype rules (docs/design.md U1):
//! - Float functions (`acos` ... `tan`, `reciprocal`, `atan2`, `copysign`, `hypot`,
//!   `logaddexp`, `nextafter`) keep float dtypes; integers and bool compute in
//!   [`float_result`] (as `sqrt` does).
//! - `ceil`, `floor`, `trunc`, `round`, `sign`, `positive` keep every numeric dtype
//!   (integers are returned unchanged, as copies, by the rounding ones); bool is an error.
//! - `isnan`, `isinf`, `isfinite`, `signbit` accept every real dtype and give bool.
//! - `bitwise_and/or/xor/invert`: integers and bool; the shifts: integers only.
//! - `floor_divide`, `remainder`: the promoted dtype; two bools give `int8` (NumPy).
//! - `logical_and/or/xor/not`: any real dtype, read as `x != 0`; the result is bool.
//! - Complex dtypes (U7): the float functions, `round`, `sign`, `positive`, `isnan`,
//!   `isinf` and `isfinite`; `ceil`/`floor`/`trunc`/`signbit` are real-only.
//! - Any other dtype is a [`ErrorKind::DType`] error.

use super::arith::{op_enum, zip_into};
use super::distinct::Distinct;
use super::flat::zip_dense;
use super::map::{map_into, map_new};
use super::vector_math::{vector_math, vector_math2, VecFn, VecFn2};
use super::Tensor;
use crate::complex::{C128, C64};
use crate::dtype::{DType, Element};
use crate::error::{DTypeFacts, ErrorKind, Result, TesseraError};
use crate::kernels::real_math::{with_float_dtype, with_int_dtype, Bits, Flt, IntMath, RealFloat};
use crate::kernels::vmath;
use crate::promote::{float_result, result_type};
use crate::with_dtype;

op_enum!(
    /// Elementwise functions of one tensor (the standard's names).
    MathOp {
        /// Arc cosine.
        Acos => "acos",
        /// Inverse hyperbolic cosine.
        Acosh => "acosh",
        /// Arc sine.
        Asin => "asin",
        /// Inverse hyperbolic sine.
        Asinh => "asinh",
        /// Arc tangent.
        Atan => "atan",
        /// Inverse hyperbolic tangent.
        Atanh => "atanh",
        /// Cosine.
        Cos => "cos",
        /// Hyperbolic cosine.
        Cosh => "cosh",
        /// `exp(x) - 1`, accurate near 0.
        Expm1 => "expm1",
        /// `log(1 + x)`, accurate near 0.
        Log1p => "log1p",
        /// Base-2 logarithm.
        Log2 => "log2",
        /// Base-10 logarithm.
        Log10 => "log10",
        /// Hyperbolic sine.
        Sinh => "sinh",
        /// Tangent.
        Tan => "tan",
        /// `1 / x`.
        Reciprocal => "reciprocal",
        /// Smallest integer `>= x` (integers unchanged).
        Ceil => "ceil",
        /// Largest integer `<= x` (integers unchanged).
        Floor => "floor",
        /// Integer part toward zero (integers unchanged).
        Trunc => "trunc",
        /// Nearest integer, ties to even (integers unchanged).
        Round => "round",
        /// -1, 0 or 1 by sign (NaN stays NaN).
        Sign => "sign",
        /// `+x` (a copy).
        Positive => "positive",
        /// NaN test.
        Isnan => "isnan",
        /// Infinity test.
        Isinf => "isinf",
        /// Neither NaN nor infinite.
        Isfinite => "isfinite",
        /// The sign bit is set.
        Signbit => "signbit",
        /// `~x`.
        BitwiseInvert => "bitwise_invert",
        /// `not x`.
        LogicalNot => "logical_not",
    }
);

op_enum!(
    /// Elementwise functions of two broadcast tensors (the standard's names).
    MathBinaryOp {
        /// Four-quadrant arc tangent of `x1 / x2`.
        Atan2 => "atan2",
        /// `|x1|` with the sign of `x2`.
        Copysign => "copysign",
        /// `sqrt(x1^2 + x2^2)`.
        Hypot => "hypot",
        /// `log(exp(x1) + exp(x2))`.
        Logaddexp => "logaddexp",
        /// The next representable value after `x1` toward `x2`.
        Nextafter => "nextafter",
        /// Python's `x1 // x2`.
        FloorDivide => "floor_divide",
        /// Python's `x1 % x2` (the sign of `x2`).
        Remainder => "remainder",
        /// `x1 & x2`.
        BitwiseAnd => "bitwise_and",
        /// `x1 | x2`.
        BitwiseOr => "bitwise_or",
        /// `x1 ^ x2`.
        BitwiseXor => "bitwise_xor",
        /// `x1 << x2`.
        BitwiseLeftShift => "bitwise_left_shift",
        /// `x1 >> x2`.
        BitwiseRightShift => "bitwise_right_shift",
        /// `x1 and x2`.
        LogicalAnd => "logical_and",
        /// `x1 or x2`.
        LogicalOr => "logical_or",
        /// `x1 xor x2`.
        LogicalXor => "logical_xor",
    }
);

/// A real dtype: bool, an integer or a real float.
fn is_real(d: DType) -> bool {
    d == DType::Bool || d.is_integer() || d.is_float()
}

fn unsupported(op: &str, dtype: DType, hint: &'static str) -> TesseraError {
    ErrorKind::DType(DTypeFacts::Unsupported {
        op: op.into(),
        dtype,
        hint,
    })
    .into()
}

/// The dtype a float function computes in: floats kept, integers and bool by
/// [`float_result`].
fn float_fn_dtype(op: &str, d: DType) -> Result<DType> {
    match d {
        d if d.is_float() || d.is_complex() => Ok(d),
        d if d.is_integer() || d == DType::Bool => Ok(float_result(d)),
        d => Err(unsupported(op, d, "")),
    }
}

impl MathOp {
    /// True for the functions of a real float (`acos` ... `reciprocal`).
    pub const fn is_float_fn(self) -> bool {
        use MathOp::*;
        matches!(
            self,
            Acos | Acosh
                | Asin
                | Asinh
                | Atan
                | Atanh
                | Cos
                | Cosh
                | Expm1
                | Log1p
                | Log2
                | Log10
                | Sinh
                | Tan
                | Reciprocal
        )
    }

    /// The dtype of the result for an input of dtype `d` (see the module docs).
    pub fn result_dtype(self, d: DType) -> Result<DType> {
        use MathOp::*;
        match self {
            _ if self.is_float_fn() => float_fn_dtype(self.name(), d),
            Round | Sign | Positive if d.is_complex() => Ok(d),
            Isnan | Isinf | Isfinite if d.is_complex() => Ok(DType::Bool),
            Ceil | Floor | Trunc | Round | Sign | Positive => match d {
                d if d.is_float() || d.is_integer() => Ok(d),
                d => Err(unsupported(self.name(), d, " (numeric dtypes only)")),
            },
            Isnan | Isinf | Isfinite | Signbit | LogicalNot if is_real(d) => Ok(DType::Bool),
            BitwiseInvert if d.is_integer() || d == DType::Bool => Ok(d),
            BitwiseInvert => Err(unsupported(
                self.name(),
                d,
                " (integer and bool dtypes only)",
            )),
            _ => Err(unsupported(self.name(), d, "")),
        }
    }
}

impl MathBinaryOp {
    /// True for the functions of real floats (`atan2` ... `nextafter`).
    pub const fn is_float_fn(self) -> bool {
        use MathBinaryOp::*;
        matches!(self, Atan2 | Copysign | Hypot | Logaddexp | Nextafter)
    }

    /// True for `logical_and`, `logical_or`, `logical_xor`.
    pub const fn is_logical(self) -> bool {
        use MathBinaryOp::*;
        matches!(self, LogicalAnd | LogicalOr | LogicalXor)
    }

    /// The dtype of the result for operands of dtypes `a` and `b` (see the module docs).
    pub fn result_dtype(self, a: DType, b: DType) -> Result<DType> {
        use MathBinaryOp::*;
        let t = result_type(a, b)?;
        match self {
            _ if self.is_float_fn() => float_fn_dtype(self.name(), t),
            _ if self.is_logical() && is_real(t) => Ok(DType::Bool),
            FloorDivide | Remainder => match t {
                DType::Bool => Ok(DType::I8),
                t if t.is_float() || t.is_integer() => Ok(t),
                t => Err(unsupported(self.name(), t, "")),
            },
            BitwiseAnd | BitwiseOr | BitwiseXor if t.is_integer() || t == DType::Bool => Ok(t),
            BitwiseLeftShift | BitwiseRightShift if t.is_integer() => Ok(t),
            _ if t.is_float() => Err(unsupported(
                self.name(),
                t,
                " (integer dtypes only, and bool for and/or/xor)",
            )),
            _ => Err(unsupported(self.name(), t, "")),
        }
    }
}

impl Tensor {
    /// The dense kernel of [`Tensor::math`]: a new tensor (order: design.md P6) of
    /// [`MathOp::result_dtype`].
    #[allow(clippy::bool_comparison)] // `x < zero` is instantiated for T = bool too
    pub(crate) fn math_dense(&self, op: MathOp) -> Result<Tensor> {
        use MathOp::*;
        let dt = op.result_dtype(self.dtype())?;
        let src_dt = self.dtype();
        let bad = || unsupported(op.name(), src_dt, "");
        if src_dt.is_complex() {
            let out = Tensor::for_overwrite_in_order(self.layout(), dt)?;
            match src_dt {
                DType::C64 => self.complex_math_into::<C64>(op, &out)?,
                _ => self.complex_math_into::<C128>(op, &out)?,
            }
            return Ok(out);
        }
        match op {
            Isnan | Isinf | Isfinite | Signbit => {
                with_float_dtype!(src_dt, T => {
                    macro_rules! run {
                        ($f:path) => {
                            map_new::<bool, T>(self, |x| $f(x.lift()))
                        };
                    }
                    match op {
                        Isnan => run!(Flt::isnan),
                        Isinf => run!(Flt::isinf),
                        Isfinite => run!(Flt::isfinite),
                        _ => run!(Flt::signbit),
                    }
                }, else => {
                    // Integers and bool: finite, never NaN or infinite.
                    with_dtype!(src_dt, T => {
                        let zero = T::default();
                        match op {
                            Signbit => map_new::<bool, T>(self, move |x| x < zero),
                            Isfinite => map_new::<bool, T>(self, |_| true),
                            _ => map_new::<bool, T>(self, |_| false),
                        }
                    })
                })
            }
            // `x == 0` (NaN is true, so its logical not is false, as NumPy has it; `-0.0` is
            // false): a map, whose narrowing loops run on AVX-512. It went through the
            // comparison with a scalar tensor before, which cost 0.29 us at 16 elements.
            LogicalNot => with_dtype!(src_dt, T => {
                let zero = T::default();
                map_new::<bool, T>(self, move |x| x == zero)
            }),
            BitwiseInvert => {
                if dt == DType::Bool {
                    map_new::<bool, bool>(self, |x| !x)
                } else {
                    with_int_dtype!(dt, T => map_new::<T, T>(self, |x| x.not()),
                        else => Err(bad()))
                }
            }
            Ceil | Floor | Trunc | Round | Positive if !dt.is_float() => {
                with_dtype!(src_dt, T => map_new::<T, T>(self, |x| x))
            }
            // Rounding is exact in any precision: f32 rounds in f32 (one vector instruction
            // under AVX, docs/design.md P1) rather than through f64 as the other functions.
            Ceil | Floor | Trunc | Round if dt == DType::F32 && src_dt == DType::F32 => match op {
                Ceil => map_new::<f32, f32>(self, |x| x.ceil()),
                Floor => map_new::<f32, f32>(self, |x| x.floor()),
                Trunc => map_new::<f32, f32>(self, |x| x.trunc()),
                _ => map_new::<f32, f32>(self, |x| x.round_ties_even()),
            },
            Sign if !dt.is_float() => {
                with_int_dtype!(dt, T => map_new::<T, T>(self, IntMath::sign),
                    else => Err(bad()))
            }
            _ => {
                let src = self.astype_if(dt)?;
                let vector = match op {
                    Cos => Some(VecFn::Cos),
                    Tan => Some(VecFn::Tan),
                    Asin => Some(VecFn::Asin),
                    Acos => Some(VecFn::Acos),
                    Atan => Some(VecFn::Atan),
                    Sinh => Some(VecFn::Sinh),
                    Cosh => Some(VecFn::Cosh),
                    Asinh => Some(VecFn::Asinh),
                    Acosh => Some(VecFn::Acosh),
                    Atanh => Some(VecFn::Atanh),
                    Expm1 => Some(VecFn::Expm1),
                    Log1p => Some(VecFn::Log1p),
                    Log2 => Some(VecFn::Log2),
                    Log10 => Some(VecFn::Log10),
                    _ => None,
                };
                if let Some(f) = vector {
                    if let Some(out) = vector_math(f, &src)? {
                        return Ok(out);
                    }
                }
                with_float_dtype!(dt, T => {
                    // One monomorphised kernel per function (see `Tensor::unary_dense`).
                    macro_rules! run {
                        ($f:path) => {
                            map_new::<T, T>(&src, |x| T::lower($f(x.lift())))
                        };
                    }
                    match op {
                        Acos => run!(Flt::acos),
                        Acosh => run!(Flt::acosh),
                        Asin => run!(Flt::asin),
                        Asinh => run!(Flt::asinh),
                        Atan => run!(Flt::atan),
                        Atanh => run!(Flt::atanh),
                        Cos => run!(Flt::cos),
                        Cosh => run!(Flt::cosh),
                        Expm1 => run!(Flt::expm1),
                        Log1p => run!(Flt::log1p),
                        Log2 => run!(Flt::log2),
                        Log10 => run!(Flt::log10),
                        Sinh => run!(Flt::sinh),
                        Tan => run!(Flt::tan),
                        Reciprocal => run!(Flt::reciprocal),
                        Ceil => run!(Flt::ceil),
                        Floor => run!(Flt::floor),
                        Trunc => run!(Flt::trunc),
                        Round => run!(Flt::round),
                        Sign => run!(Flt::sign),
                        Positive => map_new::<T, T>(&src, |x| x),
                        _ => Err(bad()),
                    }
                }, else => Err(bad()))
            }
        }
    }

    /// The dense kernel of [`Tensor::math_binary`]: `op(self, other)` with broadcasting and
    /// type promotion, into a new tensor (order: design.md P6) of [`MathBinaryOp::result_dtype`].
    pub(crate) fn math_binary_dense(&self, other: &Tensor, op: MathBinaryOp) -> Result<Tensor> {
        use MathBinaryOp::*;
        let dt = op.result_dtype(self.dtype(), other.dtype())?;
        // Logical ops read operands of one dtype in place (their truth, `x != 0`); mixed
        // dtypes are converted to bool first.
        let compute = match op.is_logical() {
            true if self.dtype() == other.dtype() => self.dtype(),
            true => DType::Bool,
            false => dt,
        };
        let bad = || unsupported(op.name(), dt, "");
        let flat = self.dtype() == compute && other.dtype() == compute;
        // `f` over the operands: one flat run when it can be, across threads from the
        // cut-over (`flat.rs`), else the general walk over the broadcast operands, converted
        // to `compute`.
        macro_rules! zip {
            ($o:ty, $t:ty, $f:expr) => {{
                if flat {
                    if let Some(out) = zip_dense::<$o, $t>(self, other, $f)? {
                        return Ok(out);
                    }
                }
                let (out, a, b) = self.zip_new(other, compute, dt)?;
                zip_into::<$o, $t>(&out, &a, &b, $f)?;
                return Ok(out);
            }};
        }
        if op.is_logical() {
            // `x != 0`, so NaN is true as NumPy has it.
            with_dtype!(compute, T => {
                let zero = T::default();
                match op {
                    LogicalAnd => zip!(bool, T, move |x: T, y: T| (x != zero) & (y != zero)),
                    LogicalOr => zip!(bool, T, move |x: T, y: T| (x != zero) | (y != zero)),
                    _ => zip!(bool, T, move |x: T, y: T| (x != zero) ^ (y != zero)),
                }
            });
        }
        if dt == DType::Bool {
            match op {
                BitwiseAnd => zip!(bool, bool, Bits::and),
                BitwiseOr => zip!(bool, bool, Bits::or),
                BitwiseXor => zip!(bool, bool, Bits::xor),
                _ => return Err(bad()),
            }
        }
        if !matches!(
            op,
            BitwiseAnd | BitwiseOr | BitwiseXor | BitwiseLeftShift | BitwiseRightShift
        ) {
            // Operands that repeat along a dim: `op` once per distinct pair (distinct.rs).
            if let Some(d) = Distinct::of(&[self, other])? {
                return d.spread(&d.operands[0].math_binary_dense(&d.operands[1], op)?);
            }
        }
        // The vectorised `atan2`, `hypot` and `logaddexp` (kernels::vmath, docs/design.md P2)
        // for `f32` and `f64` results: the flat loop, or for small calls of `atan2` and `hypot`
        // the element-wise driver with the same functions (`vector_math2` copies `logaddexp`'s
        // operands at every size); libm's through `f32` for `f16`.
        let two = match op {
            Atan2 => Some(VecFn2::Atan2),
            Hypot => Some(VecFn2::Hypot),
            Logaddexp => Some(VecFn2::Logaddexp),
            _ => None,
        };
        if let Some(f) = two {
            if let Some(out) = vector_math2(f, self, other, dt)? {
                return Ok(out);
            }
        }
        match (op, dt) {
            (Atan2, DType::F32) => zip!(f32, f32, vmath::f32::atan2),
            (Atan2, DType::F64) => zip!(f64, f64, vmath::f64::atan2),
            (Hypot, DType::F32) => zip!(f32, f32, vmath::f32::hypot),
            (Hypot, DType::F64) => zip!(f64, f64, vmath::f64::hypot),
            _ => {}
        }
        with_float_dtype!(dt, T => {
            macro_rules! run {
                ($f:path) => {
                    zip!(T, T, |x, y| T::lower($f(x.lift(), y.lift())))
                };
            }
            match op {
                Atan2 => run!(Flt::atan2),
                Copysign => run!(Flt::copysign),
                Hypot => run!(Flt::hypot),
                Logaddexp => run!(Flt::logaddexp),
                Nextafter => zip!(T, T, RealFloat::nextafter),
                FloorDivide => zip!(T, T, RealFloat::floor_divide),
                Remainder => zip!(T, T, RealFloat::remainder),
                _ => Err(bad()),
            }
        }, else => with_int_dtype!(dt, T => {
            macro_rules! run {
                ($f:path) => {
                    zip!(T, T, $f)
                };
            }
            match op {
                FloorDivide => run!(IntMath::floor_divide),
                Remainder => run!(IntMath::remainder),
                BitwiseAnd => run!(Bits::and),
                BitwiseOr => run!(Bits::or),
                BitwiseXor => run!(Bits::xor),
                BitwiseLeftShift => run!(IntMath::shl),
                BitwiseRightShift => run!(IntMath::shr),
                _ => Err(bad()),
            }
        }, else => Err(bad())))
    }

    /// In place: `self = op(self, other)` through the view `self` (docs/design.md V7), with
    /// the rules of [`Tensor::binary_`]: `other` broadcasts to `self`, the result dtype must
    /// be `self`'s, refused while grad mode records either operand (G4).
    pub fn math_binary_(&self, other: &Tensor, op: MathBinaryOp) -> Result<()> {
        self.check_inplace(op.name(), &[other])?;
        let dt = op.result_dtype(self.dtype(), other.dtype())?;
        if dt != self.dtype() {
            return Err(ErrorKind::DType(DTypeFacts::Differ {
                op: format!("{} in place", op.name()),
                what: "result",
                expected: self.dtype(),
                got: dt,
            })
            .into());
        }
        self.layout().check_writable()?;
        let other = other.with_layout(other.layout().broadcast_to(self.shape())?)?;
        // A new result, then one copy through the view: `other` may share `self`'s storage.
        self.assign(&self.math_binary_dense(&other, op)?)
    }
}

impl Tensor {
    /// The complex branch of [`Tensor::math_dense`] (docs/design.md U7): predicates read
    /// both parts, the functions run in `f64` (`kernels::complex_math`, num-complex).
    fn complex_math_into<C: Element>(&self, op: MathOp, out: &Tensor) -> Result<()> {
        use crate::kernels::complex_math as cm;
        use num_complex::Complex64 as Z;
        use MathOp::*;
        let parts = |z: C| z.to_complex();
        let f: fn(Z) -> Z = match op {
            Isnan => {
                return map_into::<bool, C>(out, self, |_, z| {
                    let (r, i) = parts(z);
                    r.is_nan() || i.is_nan()
                })
            }
            Isinf => {
                return map_into::<bool, C>(out, self, |_, z| {
                    let (r, i) = parts(z);
                    r.is_infinite() || i.is_infinite()
                })
            }
            Isfinite => {
                return map_into::<bool, C>(out, self, |_, z| {
                    let (r, i) = parts(z);
                    r.is_finite() && i.is_finite()
                })
            }
            Positive => return map_into::<C, C>(out, self, |_, z| z),
            Acos => cm::acos,
            Acosh => cm::acosh,
            Asin => cm::asin,
            Asinh => cm::asinh,
            Atan => cm::atan,
            Atanh => cm::atanh,
            Cos => cm::cos,
            Cosh => cm::cosh,
            Sinh => cm::sinh,
            Tan => cm::tan,
            Expm1 => cm::expm1,
            Log1p => cm::log1p,
            Log2 => |z| cm::ln(z) / std::f64::consts::LN_2,
            Log10 => |z| cm::ln(z) / std::f64::consts::LN_10,
            Reciprocal => cm::reciprocal,
            Sign => cm::sign,
            Round => cm::round,
            _ => return Err(unsupported(op.name(), self.dtype(), "")),
        };
        map_into::<C, C>(out, self, |_, z| cm::via_f64(z, f))
    }
}
