//! Per-element functions of the Array API's elementwise namespace beyond [`Arith`]
//! (`crate::kernels::scalar_math`): the real floating-point functions (`acos` ... `tan`,
//! rounding, `atan2`, `hypot`, `logaddexp`, `nextafter`, Python's `//` and `%`), and the
//! integer ones (Python's `//` and `%`, bitwise operations and shifts, `sign`).
//!
//! Kept apart from [`Arith`] so that each family is implemented only for the dtypes where it
//! means something: [`RealFloat`] for `f16`, `bf16`, `f32`, `f64` (`f32` computes in `f64` and
//! the halves in `f32`, each rounding once: std's `f32` functions, e.g. `atanh` near 1, are
//! off by many ulp), [`IntMath`] for the integer types and [`Bits`] for the
//! integer types and `bool`. The dispatch macros `with_float_dtype!` and `with_int_dtype!`
//! reach them from a run-time dtype and take an `else` arm for every other dtype (the tensor
//! layer turns it into a dtype error). A new integer dtype is added by one `int_math!` line
//! and one arm of `with_int_dtype!`.
//!
//! Semantics are NumPy's (docs/design.md U1-U6): integer `//` and `%` by zero give 0; a shift
//! by a negative amount or by at least the bit width gives 0 (`>>` of a negative value: -1);
//! float `//` and `%` follow Python's `divmod` (the remainder takes the divisor's sign).
//!
//! [`Arith`]: crate::kernels::scalar_math::Arith

use half::{bf16, f16};

use crate::dtype::Element;

/// The floating-point arithmetic the kernels compute in: `f32` or `f64` (std's functions).
pub trait Flt: Copy + PartialOrd + Send + Sync + 'static {
    /// Arc cosine.
    fn acos(self) -> Self;
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// Arc sine.
    fn asin(self) -> Self;
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// Arc tangent.
    fn atan(self) -> Self;
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// `e ** x - 1`, accurate near 0.
    fn expm1(self) -> Self;
    /// `ln(1 + x)`, accurate near 0.
    fn log1p(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// `1 / x`.
    fn reciprocal(self) -> Self;
    /// Smallest integer `>= x`.
    fn ceil(self) -> Self;
    /// Largest integer `<= x`.
    fn floor(self) -> Self;
    /// Integer part (toward zero).
    fn trunc(self) -> Self;
    /// Nearest integer, ties to even.
    fn round(self) -> Self;
    /// -1, 0 or 1 by sign; NaN stays NaN; `sign(-0.0)` is `+0.0`, as in NumPy.
    fn sign(self) -> Self;
    /// NaN test.
    fn isnan(self) -> bool;
    /// Infinity test (either sign).
    fn isinf(self) -> bool;
    /// Neither NaN nor infinite.
    fn isfinite(self) -> bool;
    /// The sign bit is set (true for `-0.0` and negative NaNs).
    fn signbit(self) -> bool;
    /// Four-quadrant arc tangent of `self / o`.
    fn atan2(self, o: Self) -> Self;
    /// `|self|` with the sign of `o`.
    fn copysign(self, o: Self) -> Self;
    /// `sqrt(self^2 + o^2)` without undue overflow; infinite if either is infinite.
    fn hypot(self, o: Self) -> Self;
    /// `ln(e^self + e^o)` without overflow.
    fn logaddexp(self, o: Self) -> Self;
    /// Python's `self // o` (NumPy's `floor_divide`), except with an infinite operand:
    /// `floor(self / o)`, as the Array API's special cases say.
    fn floor_divide(self, o: Self) -> Self;
    /// Python's `self % o`: the result takes the sign of `o` (NumPy's `remainder`).
    fn remainder(self, o: Self) -> Self;
}

macro_rules! flt {
    ($($t:ident),*) => {$(
        impl Flt for $t {
            fn acos(self) -> Self { $t::acos(self) }
            // std's acosh/asinh form `x + ~x` and overflow past MAX / 2 (asinh(9e307) is inf);
            // there ln(2|x|) = ln|x| + ln 2 is exact to an ulp.
            fn acosh(self) -> Self {
                if self > $t::MAX / 4.0 { self.ln() + std::f64::consts::LN_2 as $t } else { $t::acosh(self) }
            }
            fn asin(self) -> Self { $t::asin(self) }
            fn asinh(self) -> Self {
                if self.abs() > $t::MAX / 4.0 {
                    (self.abs().ln() + std::f64::consts::LN_2 as $t).copysign(self)
                } else {
                    $t::asinh(self)
                }
            }
            fn atan(self) -> Self { $t::atan(self) }
            fn atanh(self) -> Self { $t::atanh(self) }
            fn cos(self) -> Self { $t::cos(self) }
            fn cosh(self) -> Self { $t::cosh(self) }
            fn expm1(self) -> Self { $t::exp_m1(self) }
            fn log1p(self) -> Self { $t::ln_1p(self) }
            fn log2(self) -> Self { $t::log2(self) }
            fn log10(self) -> Self { $t::log10(self) }
            fn sinh(self) -> Self { $t::sinh(self) }
            fn tan(self) -> Self { $t::tan(self) }
            fn reciprocal(self) -> Self { 1.0 / self }
            fn ceil(self) -> Self { $t::ceil(self) }
            fn floor(self) -> Self { $t::floor(self) }
            fn trunc(self) -> Self { $t::trunc(self) }
            fn round(self) -> Self { $t::round_ties_even(self) }
            fn sign(self) -> Self {
                if self > 0.0 {
                    1.0
                } else if self < 0.0 {
                    -1.0
                } else if self == 0.0 {
                    0.0
                } else {
                    self // NaN
                }
            }
            fn isnan(self) -> bool { $t::is_nan(self) }
            fn isinf(self) -> bool { $t::is_infinite(self) }
            fn isfinite(self) -> bool { $t::is_finite(self) }
            fn signbit(self) -> bool { $t::is_sign_negative(self) }
            fn atan2(self, o: Self) -> Self { $t::atan2(self, o) }
            fn copysign(self, o: Self) -> Self { $t::copysign(self, o) }
            fn hypot(self, o: Self) -> Self { $t::hypot(self, o) }
            fn logaddexp(self, o: Self) -> Self {
                if self == o {
                    // Equal infinities (and equal finite values): no `inf - inf`.
                    return self + std::f64::consts::LN_2 as $t;
                }
                let d = self - o;
                if d > 0.0 {
                    self + (-d).exp().ln_1p()
                } else if d <= 0.0 {
                    o + d.exp().ln_1p()
                } else {
                    d // NaN
                }
            }
            fn floor_divide(self, o: Self) -> Self {
                if self.is_infinite() || o.is_infinite() {
                    // The standard's special cases (`inf // 2 == inf`, `-1 // inf == -0`),
                    // where NumPy's divmod-based quotient gives NaN or -1.
                    return (self / o).floor();
                }
                divmod(self, o).0
            }
            fn remainder(self, o: Self) -> Self { divmod(self, o).1 }
        }
    )*};
}
flt!(f32, f64);

/// Python's `divmod` on floats, as NumPy computes it: the remainder `fmod(a, b)` moved to
/// the divisor's sign, and the quotient `(a - r) / b` rounded to the nearest integer (it is
/// one up to rounding). A zero divisor gives `a / b` and NaN.
fn divmod<T>(a: T, b: T) -> (T, T)
where
    T: Flt + From<i8>,
    T: std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
    T: std::ops::Div<Output = T> + std::ops::Rem<Output = T>,
{
    let (zero, one, half) = (T::from(0), T::from(1), T::from(1) / T::from(2));
    let m = a % b;
    if b == zero {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    let m = if m != zero {
        if (b < zero) != (m < zero) {
            div = div - one;
            m + b
        } else {
            m
        }
    } else {
        zero.copysign(b)
    };
    let q = if div != zero {
        let f = div.floor();
        if div - f > half {
            f + one
        } else {
            f
        }
    } else {
        zero.copysign(a / b)
    };
    (q, m)
}

/// A real floating-point element type: computes in [`RealFloat::W`] and rounds once.
pub trait RealFloat: Element {
    /// The type the functions compute in (`f64` for `f32`, `f32` for the halves).
    type W: Flt;
    /// The value in the compute type (exact).
    fn lift(self) -> Self::W;
    /// The computed value rounded to this type.
    fn lower(w: Self::W) -> Self;
    /// The next representable value of this type after `self` toward `o` (C's `nextafter`:
    /// `o` if they are equal, NaN if either is NaN).
    fn nextafter(self, o: Self) -> Self;
    /// Python's `self // o` ([`Flt::floor_divide`]) computed in this type's own precision
    /// (the halves in `f32`), as NumPy does: the intermediate quotient's rounding decides
    /// the result when it is huge.
    fn floor_divide(self, o: Self) -> Self;
    /// Python's `self % o` ([`Flt::remainder`]), in this type's own precision.
    fn remainder(self, o: Self) -> Self;
}

/// The bits of the next value after `x` toward `y` (not equal, neither NaN), given `x`'s
/// bits and the type's sign bit.
fn next_bits(x: f64, y: f64, bits: u64, sign: u64) -> u64 {
    if x == 0.0 {
        // The smallest subnormal, with the sign of the direction.
        1 | if y < 0.0 { sign } else { 0 }
    } else if (y > x) == (x > 0.0) {
        bits + 1 // away from zero: the magnitude grows
    } else {
        bits - 1
    }
}

macro_rules! real_float {
    ($($t:ty => $w:ty, $lift:expr, $lower:expr, $bits:ty, $div:ty, $to:expr, $from:expr);* $(;)?) => {$(
        impl RealFloat for $t {
            type W = $w;
            #[inline(always)]
            fn lift(self) -> $w { ($lift)(self) }
            #[inline(always)]
            fn lower(w: $w) -> Self { ($lower)(w) }
            fn nextafter(self, o: Self) -> Self {
                let (x, y) = (self.to_f64(), o.to_f64());
                if x.is_nan() || y.is_nan() {
                    return Self::from_f64(f64::NAN);
                }
                if x == y {
                    return o;
                }
                let sign = 1u64 << (8 * std::mem::size_of::<$t>() - 1);
                <$t>::from_bits(next_bits(x, y, self.to_bits() as u64, sign) as $bits)
            }
            fn floor_divide(self, o: Self) -> Self {
                ($from)(Flt::floor_divide(($to)(self), ($to)(o)))
            }
            fn remainder(self, o: Self) -> Self {
                ($from)(Flt::remainder(($to)(self), ($to)(o)))
            }
        }
    )*};
}
real_float! {
    f32 => f64, |x: f32| x as f64, |w: f64| w as f32, u32, f32, |x| x, |w| w;
    f64 => f64, |x| x, |w| w, u64, f64, |x| x, |w| w;
    f16 => f32, f16::to_f32, f16::from_f32, u16, f32, f16::to_f32, f16::from_f32;
    bf16 => f32, bf16::to_f32, bf16::from_f32, u16, f32, bf16::to_f32, bf16::from_f32;
}

/// Bitwise operations: the integer types and `bool` (where they are the logical ones).
pub trait Bits: Element {
    /// `self & o`.
    fn and(self, o: Self) -> Self;
    /// `self | o`.
    fn or(self, o: Self) -> Self;
    /// `self ^ o`.
    fn xor(self, o: Self) -> Self;
    /// `!self` (two's complement; logical not for bool).
    fn not(self) -> Self;
}

/// Integer functions with NumPy's total definitions (no panics, no UB).
pub trait IntMath: Bits {
    /// Python's `self // o`; `x // 0 == 0`; `MIN // -1` wraps to `MIN`.
    fn floor_divide(self, o: Self) -> Self;
    /// Python's `self % o` (sign of `o`); `x % 0 == 0`.
    fn remainder(self, o: Self) -> Self;
    /// `self << o`; 0 when `o` is negative or at least the bit width.
    fn shl(self, o: Self) -> Self;
    /// `self >> o` (arithmetic for signed types); when `o` is negative or at least the bit
    /// width: -1 for a negative `self`, else 0.
    fn shr(self, o: Self) -> Self;
    /// -1, 0 or 1.
    fn sign(self) -> Self;
}

macro_rules! int_math {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn and(self, o: Self) -> Self { self & o }
            fn or(self, o: Self) -> Self { self | o }
            fn xor(self, o: Self) -> Self { self ^ o }
            fn not(self) -> Self { !self }
        }
        #[allow(unused_comparisons)] // `< 0` is false for the unsigned types
        impl IntMath for $t {
            fn floor_divide(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                let q = self.wrapping_div(o);
                if self.wrapping_rem(o) != 0 && ((self < 0) != (o < 0)) { q - 1 } else { q }
            }
            fn remainder(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) { r.wrapping_add(o) } else { r }
            }
            fn shl(self, o: Self) -> Self {
                // A negative amount wraps to a huge one: both are "too far".
                if (o as u64) < <$t>::BITS as u64 { self << (o as u32) } else { 0 }
            }
            fn shr(self, o: Self) -> Self {
                if (o as u64) < <$t>::BITS as u64 {
                    self >> (o as u32)
                } else if self < 0 {
                    !0
                } else {
                    0
                }
            }
            fn sign(self) -> Self {
                ((self > 0) as $t).wrapping_sub((self < 0) as $t)
            }
        }
    )*};
}
int_math!(u8, i8, i16, u16, i32, u32, i64, u64);

impl Bits for bool {
    fn and(self, o: Self) -> Self {
        self & o
    }
    fn or(self, o: Self) -> Self {
        self | o
    }
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    fn not(self) -> Self {
        !self
    }
}

/// Runs `$body` with `$T` bound to the float type of `$dtype`, or evaluates `$other` for a
/// dtype that is not a real float.
macro_rules! with_float_dtype {
    ($dtype:expr, $T:ident => $body:expr, else => $other:expr) => {
        match $dtype {
            $crate::DType::F16 => {
                type $T = half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}
pub(crate) use with_float_dtype;

/// Runs `$body` with `$T` bound to the integer type of `$dtype`, or evaluates `$other` for
/// any other dtype (bool included).
macro_rules! with_int_dtype {
    ($dtype:expr, $T:ident => $body:expr, else => $other:expr) => {
        match $dtype {
            $crate::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::DType::I16 => {
                type $T = i16;
                $body
            }
            $crate::DType::U16 => {
                type $T = u16;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}
pub(crate) use with_int_dtype;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_division_rules() {
        assert_eq!(IntMath::floor_divide(-7i32, 2), -4);
        assert_eq!(IntMath::remainder(-7i32, 2), 1);
        assert_eq!(IntMath::remainder(7i8, -2), -1);
        assert_eq!(IntMath::floor_divide(i8::MIN, -1), i8::MIN);
        assert_eq!(IntMath::remainder(i8::MIN, -1), 0);
        assert_eq!(IntMath::floor_divide(5u8, 0), 0);
        assert_eq!(IntMath::remainder(5i64, 0), 0);
        assert_eq!(Flt::floor_divide(-7.0f64, 2.0), -4.0);
        assert_eq!(Flt::remainder(-7.0f64, 2.0), 1.0);
        assert_eq!(Flt::remainder(7.0f64, -2.0), -1.0);
        assert!(Flt::remainder(0.0f64, -2.0).is_sign_negative());
        assert_eq!(Flt::floor_divide(1.0f64, 0.0), f64::INFINITY);
        assert!(Flt::remainder(1.0f64, 0.0).is_nan());
        assert!(Flt::floor_divide(-0.5f64, 2.0) == -1.0);
        assert!(Flt::floor_divide(0.5f64, -2.0) == -1.0);
        assert!(Flt::floor_divide(0.0f64, -2.0).is_sign_negative());
        assert_eq!(Flt::floor_divide(f64::INFINITY, 2.0), f64::INFINITY);
        assert_eq!(Flt::floor_divide(f64::NEG_INFINITY, 2.0), f64::NEG_INFINITY);
        assert!(Flt::floor_divide(-1.0f64, f64::INFINITY).is_sign_negative());
        assert_eq!(Flt::floor_divide(-1.0f64, f64::INFINITY), 0.0);
        assert!(Flt::floor_divide(f64::INFINITY, f64::INFINITY).is_nan());
        assert_eq!(Flt::remainder(-5.0f64, f64::INFINITY), f64::INFINITY);
        assert_eq!(Flt::sign(-0.0f64).to_bits(), 0);
    }

    #[test]
    fn shifts_as_numpy() {
        assert_eq!(IntMath::shl(1i8, 7), i8::MIN);
        assert_eq!(IntMath::shl(1i8, 8), 0);
        assert_eq!(IntMath::shl(1i32, -1), 0);
        assert_eq!(IntMath::shr(-8i32, 1), -4);
        assert_eq!(IntMath::shr(-8i32, 40), -1);
        assert_eq!(IntMath::shr(-8i64, -3), -1);
        assert_eq!(IntMath::shr(200u8, 9), 0);
        assert_eq!(IntMath::shr(200u8, 1), 100);
        assert_eq!(IntMath::sign(0u8), 0);
        assert_eq!(IntMath::sign(-3i64), -1);
    }

    #[test]
    fn inverse_hyperbolics_do_not_overflow_near_max() {
        // Values from NumPy: arcsinh(8.98846567e307) = 709.7827128929043 = arccosh(...),
        // float32 arcsinh(3e38) = 89.28999 (std's formulas give inf for both).
        let near = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * b.abs();
        assert!(near(Flt::asinh(8.98846567e307f64), 709.7827128929043));
        assert!(near(Flt::asinh(-8.98846567e307f64), -709.7827128929043));
        assert!(near(Flt::acosh(8.98846567e307f64), 709.7827128929043));
        assert!((Flt::asinh(3.0e38f32) - 89.28999).abs() < 1e-4);
        assert_eq!(Flt::asinh(0.5f64), 0.5f64.asinh());
    }

    #[test]
    fn nextafter_steps_one_ulp() {
        assert_eq!(1.0f64.nextafter(2.0), 1.0 + f64::EPSILON);
        assert_eq!(1.0f32.nextafter(0.0), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(0.0f64.nextafter(-1.0), -f64::from_bits(1));
        assert_eq!((-0.0f64).nextafter(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(f16::ONE.nextafter(f16::MAX), f16::ONE + f16::EPSILON);
        assert_eq!(bf16::ZERO.nextafter(bf16::ONE), bf16::from_bits(1));
        assert!(f64::NAN.nextafter(1.0).is_nan());
        assert_eq!(f64::MAX.nextafter(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn logaddexp_special_values() {
        assert_eq!(Flt::logaddexp(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(
            Flt::logaddexp(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(Flt::logaddexp(1000.0f64, 0.0), 1000.0);
        assert!(Flt::logaddexp(f64::NAN, 1.0).is_nan());
        assert!((Flt::logaddexp(0.0f64, 0.0) - std::f64::consts::LN_2).abs() < 1e-15);
    }
}
