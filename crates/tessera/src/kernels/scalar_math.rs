//! Per-element arithmetic for every [`Element`] type: the scalar functions the elementwise
//! and reduction kernels apply.
//!
//! Semantics follow NumPy: integer arithmetic wraps; `maximum`/`minimum` propagate NaN;
//! `f16`/`bf16` compute in `f32` and round back once. Operations that NumPy rejects for a
//! dtype (`bool - bool`, `-bool`, integer `pow` with a negative exponent) or computes in
//! another dtype (integer `/` and `sqrt`, ...) are checked and cast by the tensor layer
//! before a kernel runs; the implementations here for those cases are total (never panic)
//! but are not reached through the public API.

use half::{bf16, f16};
use num_complex::Complex;

use crate::complex::{C128, C64};
use crate::dtype::Element;

/// Arithmetic on one element type. Implemented for every element type, so kernels can be
/// instantiated for every dtype by [`with_dtype!`](crate::with_dtype).
pub trait Arith: Element {
    /// `self + o` (wrapping for integers; logical or for bool).
    fn add(self, o: Self) -> Self;
    /// `self - o` (wrapping for integers).
    fn sub(self, o: Self) -> Self;
    /// `self * o` (wrapping for integers; logical and for bool).
    fn mul(self, o: Self) -> Self;
    /// `self / o` (floats; integer types truncate, `x / 0 == 0`).
    fn div(self, o: Self) -> Self;
    /// The larger value; NaN if either is NaN.
    fn maximum(self, o: Self) -> Self;
    /// The smaller value; NaN if either is NaN.
    fn minimum(self, o: Self) -> Self;
    /// `self ** o` (wrapping for integers; a negative integer exponent gives 0).
    fn pow(self, o: Self) -> Self;
    /// `-self` (wrapping for integers).
    fn neg(self) -> Self;
    /// `|self|` (wrapping: `abs(i8::MIN) == i8::MIN`, as NumPy).
    fn abs(self) -> Self;
    /// `self * self`.
    fn square(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// `e ** self`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// `max(self, 0)`, NaN kept.
    fn relu(self) -> Self;
}

/// Wrapping integer power by squaring; a negative exponent gives 0 (rejected earlier).
/// `base^e` with wrapping products (NumPy's integer power), the exponent unsigned so that a
/// uint64 exponent past `i64::MAX` keeps its value (negative exponents are 0, at the caller).
fn int_pow(mut base: i64, mut e: u64) -> i64 {
    let mut acc = 1i64;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    acc
}

macro_rules! via_f64 {
    ($($name:ident),*) => {$(
        fn $name(self) -> Self { Self::from_f64(self.to_f64().$name()) }
    )*};
}

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn div(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_div(o) } }
            fn maximum(self, o: Self) -> Self { if o > self { o } else { self } }
            fn minimum(self, o: Self) -> Self { if o < self { o } else { self } }
            fn pow(self, o: Self) -> Self {
                if o < Self::default() { 0 } else { int_pow(self as i64, o as u64) as $t }
            }
            fn neg(self) -> Self { self.wrapping_neg() }
            fn abs(self) -> Self {
                if self < Self::default() { self.wrapping_neg() } else { self }
            }
            fn square(self) -> Self { self.wrapping_mul(self) }
            via_f64!(sqrt, exp, ln, sin, tanh);
            fn relu(self) -> Self { self.maximum(0) }
        }
    )*};
}
int_arith!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, o: Self) -> Self { self + o }
            fn sub(self, o: Self) -> Self { self - o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div(self, o: Self) -> Self { self / o }
            #[allow(clippy::eq_op)]
            fn maximum(self, o: Self) -> Self {
                if self > o || self != self { self } else { o }
            }
            #[allow(clippy::eq_op)]
            fn minimum(self, o: Self) -> Self {
                if self < o || self != self { self } else { o }
            }
            fn pow(self, o: Self) -> Self { self.powf(o) }
            fn neg(self) -> Self { -self }
            fn abs(self) -> Self { <$t>::abs(self) }
            fn square(self) -> Self { self * self }
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            fn exp(self) -> Self { <$t>::exp(self) }
            fn ln(self) -> Self { <$t>::ln(self) }
            fn sin(self) -> Self { <$t>::sin(self) }
            fn tanh(self) -> Self { <$t>::tanh(self) }
            #[allow(clippy::eq_op)]
            fn relu(self) -> Self { if self > 0.0 || self != self { self } else { 0.0 } }
        }
    )*};
}
float_arith!(f32, f64);

macro_rules! half_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            fn add(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
            fn sub(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() - o.to_f32()) }
            fn mul(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() * o.to_f32()) }
            fn div(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() / o.to_f32()) }
            fn maximum(self, o: Self) -> Self {
                <$t>::from_f32(Arith::maximum(self.to_f32(), o.to_f32()))
            }
            fn minimum(self, o: Self) -> Self {
                <$t>::from_f32(Arith::minimum(self.to_f32(), o.to_f32()))
            }
            fn pow(self, o: Self) -> Self { <$t>::from_f32(self.to_f32().powf(o.to_f32())) }
            fn neg(self) -> Self { -self }
            fn abs(self) -> Self { <$t>::from_f32(self.to_f32().abs()) }
            fn square(self) -> Self { self.mul(self) }
            fn sqrt(self) -> Self { <$t>::from_f32(self.to_f32().sqrt()) }
            fn exp(self) -> Self { <$t>::from_f32(self.to_f32().exp()) }
            fn ln(self) -> Self { <$t>::from_f32(self.to_f32().ln()) }
            fn sin(self) -> Self { <$t>::from_f32(self.to_f32().sin()) }
            fn tanh(self) -> Self { <$t>::from_f32(self.to_f32().tanh()) }
            fn relu(self) -> Self { <$t>::from_f32(Arith::relu(self.to_f32())) }
        }
    )*};
}
half_arith!(f16, bf16);

// Complex arithmetic through num-complex. `maximum`/`minimum` use NumPy's lexicographic order
// (NaN in either part propagates); `relu` has no meaning for complex numbers (the tensor layer
// refuses it) and is the identity here; `abs` is `|z|` as a complex number with zero
// imaginary part (the tensor layer returns its real part in the real dtype).
macro_rules! complex_arith {
    ($($t:ident($f:ty)),*) => {$(
        impl Arith for $t {
            fn add(self, o: Self) -> Self { $t(self.0 + o.0) }
            fn sub(self, o: Self) -> Self { $t(self.0 - o.0) }
            fn mul(self, o: Self) -> Self { $t(self.0 * o.0) }
            fn div(self, o: Self) -> Self {
                let (a, b, c, d) = (self.0.re, self.0.im, o.0.re, o.0.im);
                // Smith's algorithm, as NumPy: scaled by the divisor's larger part, so no
                // intermediate overflows where the quotient is finite (num-complex's
                // `(ac + bd) / (c² + d²)` overflows past `sqrt(MAX)`); a zero divisor gives
                // the parts divided by zero (`inf` or NaN).
                let (ca, da) = (c.abs(), d.abs());
                if ca >= da {
                    if ca == 0.0 && da == 0.0 {
                        $t::new(a / ca, b / ca)
                    } else {
                        let rat = d / c;
                        let scl = 1.0 / (c + d * rat);
                        $t::new((a + b * rat) * scl, (b - a * rat) * scl)
                    }
                } else {
                    let rat = c / d;
                    let scl = 1.0 / (d + c * rat);
                    $t::new((a * rat + b) * scl, (b * rat - a) * scl)
                }
            }
            fn maximum(self, o: Self) -> Self {
                if self.0.is_nan() || (!o.0.is_nan() && self >= o) { self } else { o }
            }
            fn minimum(self, o: Self) -> Self {
                if self.0.is_nan() || (!o.0.is_nan() && self <= o) { self } else { o }
            }
            fn pow(self, o: Self) -> Self {
                if o.0 == Complex::new(0.0, 0.0) { $t::new(1.0, 0.0) } else { $t(self.0.powc(o.0)) }
            }
            fn neg(self) -> Self { $t(-self.0) }
            fn abs(self) -> Self { $t::new(self.0.norm(), 0.0) }
            fn square(self) -> Self { $t(self.0 * self.0) }
            // In f64 (a complex64 result that fits is not lost to an f32 intermediate).
            fn sqrt(self) -> Self { super::complex_math::via_f64(self, super::complex_math::sqrt) }
            fn exp(self) -> Self { super::complex_math::via_f64(self, super::complex_math::exp) }
            fn ln(self) -> Self { super::complex_math::via_f64(self, super::complex_math::ln) }
            fn sin(self) -> Self { super::complex_math::via_f64(self, super::complex_math::sin) }
            fn tanh(self) -> Self { super::complex_math::via_f64(self, super::complex_math::tanh) }
            fn relu(self) -> Self { self }
        }
    )*};
}
complex_arith!(C64(f32), C128(f64));

impl Arith for bool {
    fn add(self, o: Self) -> Self {
        self | o
    }
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn div(self, o: Self) -> Self {
        self & o
    }
    fn maximum(self, o: Self) -> Self {
        self | o
    }
    fn minimum(self, o: Self) -> Self {
        self & o
    }
    fn pow(self, o: Self) -> Self {
        self | !o
    }
    fn neg(self) -> Self {
        self
    }
    fn abs(self) -> Self {
        self
    }
    fn square(self) -> Self {
        self
    }
    via_f64!(sqrt, exp, ln, sin, tanh);
    fn relu(self) -> Self {
        self
    }
}

/// Converts one element to another type: between integers (and bool) through `i64` (wrapping
/// into narrower integers, as NumPy's `astype`; `u64` keeps its bit pattern), to or from a
/// float through `f64` (saturating into integers, NaN to 0; non-zero, including NaN, to
/// `true`).
#[inline(always)]
pub fn convert<S: Element, D: Element>(s: S) -> D {
    if S::DTYPE.is_complex() || D::DTYPE.is_complex() {
        // Both parts kept between complex types; a real type takes the real part (NumPy).
        let (re, im) = s.to_complex();
        D::from_complex(re, im)
    } else if S::DTYPE.is_float() || D::DTYPE.is_float() {
        D::from_f64(s.to_f64())
    } else {
        D::from_i64(s.to_i64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_semantics() {
        assert_eq!(Arith::add(250u8, 10), 4);
        assert_eq!(Arith::abs(i8::MIN), i8::MIN);
        assert_eq!(Arith::pow(3i32, 4), 81);
        assert_eq!(Arith::pow(2i8, 9), 0);
        assert!(Arith::maximum(1.0f64, f64::NAN).is_nan());
        assert!(Arith::minimum(f32::NAN, 1.0).is_nan());
        assert!(Arith::maximum(f16::NAN, f16::ONE).is_nan());
        assert_eq!(Arith::relu(-2i64), 0);
        assert_eq!(Arith::sqrt(bf16::from_f32(4.0)), bf16::from_f32(2.0));
        assert_eq!(convert::<f32, i8>(300.0), 127);
        assert_eq!(convert::<i64, u8>(300), 44);
        assert!(convert::<f64, bool>(f64::NAN));
        assert_eq!(convert::<u64, f64>(u64::MAX), 18446744073709551615.0);
        assert_eq!(convert::<u64, i16>(u64::MAX - 1), -2);
        assert_eq!(convert::<i8, u64>(-1), u64::MAX);
        assert_eq!(convert::<f64, u16>(-3.0), 0);
        assert_eq!(Arith::add(u16::MAX, 1), 0);
        assert_eq!(Arith::mul(u64::MAX, 2), u64::MAX - 1);
        let (a, b) = (C128::new(1.0, 2.0), C128::new(3.0, -1.0));
        assert_eq!(Arith::mul(a, b), C128::new(5.0, 5.0));
        assert_eq!(Arith::div(C128::new(2.0, 4.0), C128::new(2.0, 0.0)), a);
        let q = Arith::div(C128::new(5.0, 5.0), b); // (1+2i), up to rounding
        assert!((q.re() - 1.0).abs() < 1e-15 && (q.im() - 2.0).abs() < 1e-15);
        // Smith's algorithm: no overflow for a huge divisor, inf/NaN for a zero one (NumPy).
        let huge = C128::new(1e300, 1e300);
        assert_eq!(Arith::div(huge, huge), C128::new(1.0, 0.0));
        let z = Arith::div(C128::new(1.0, 0.0), C128::new(0.0, 0.0));
        assert!(z.re().is_infinite() && z.im().is_nan());
        assert_eq!(
            convert::<C64, C128>(C64::new(1.5, -2.0)),
            C128::new(1.5, -2.0)
        );
        assert_eq!(convert::<C128, f32>(C128::new(1.5, -2.0)), 1.5);
        assert_eq!(convert::<i64, C64>(-3), C64::new(-3.0, 0.0));
        assert!(Arith::maximum(C64::new(f32::NAN, 0.0), C64::new(1.0, 0.0))
            .0
            .re
            .is_nan());
        assert_eq!(
            Arith::maximum(C64::new(1.0, 0.0), C64::new(1.0, 2.0)),
            C64::new(1.0, 2.0)
        );
    }
}
