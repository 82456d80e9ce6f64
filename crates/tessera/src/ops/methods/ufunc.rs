//! The Array API's elementwise methods of `Tensor` beyond `arith.rs` (`acos` ... `nextafter`,
//! bitwise and logical operations, Python's `//` and `%`, `clip`), each run through its
//! registry op (and so recorded by autograd). Dtype rules: `tensor/ufunc.rs`.

use std::slice;

use super::call1;
use crate::dtype::Scalar;
use crate::error::Result;
use crate::ops::defs::NoParams;
use crate::ops::dispatch::plain_dense;
use crate::tensor::ufunc::{MathBinaryOp, MathOp};
use crate::tensor::Tensor;

impl Tensor {
    /// Applies the elementwise function `op`, into a new tensor (order: design.md P6) of
    /// [`MathOp::result_dtype`].
    ///
    /// ```
    /// use tessera::{DType, MathOp, Tensor};
    /// let t = Tensor::from_slice(&[-1.5f32, 0.5, 2.5], &[3]).unwrap();
    /// assert_eq!(t.math(MathOp::Round).unwrap().to_vec::<f32>().unwrap(), vec![-2.0, 0.0, 2.0]);
    /// let i = Tensor::from_slice(&[1i32, 100], &[2]).unwrap();
    /// assert_eq!(i.math(MathOp::Log10).unwrap().dtype(), DType::F64);
    /// assert!(Tensor::from_slice(&[1.0f64], &[1]).unwrap().math(MathOp::BitwiseInvert).is_err());
    /// ```
    pub fn math(&self, op: MathOp) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.math_dense(op);
        }
        call1(op.name(), &NoParams {}, slice::from_ref(self))
    }

    /// `op(self, other)` with broadcasting and type promotion, into a new tensor (order:
    /// design.md P6) of [`MathBinaryOp::result_dtype`].
    ///
    /// ```
    /// use tessera::{MathBinaryOp, Tensor};
    /// let a = Tensor::from_slice(&[-7i64, 7], &[2]).unwrap();
    /// let b = Tensor::from_slice(&[2i64], &[1]).unwrap();
    /// let r = a.math_binary(&b, MathBinaryOp::Remainder).unwrap();
    /// assert_eq!(r.to_vec::<i64>().unwrap(), vec![1, 1]);
    /// ```
    pub fn math_binary(&self, other: &Tensor, op: MathBinaryOp) -> Result<Tensor> {
        if plain_dense(&[self, other]) {
            return self.math_binary_dense(other, op);
        }
        call1(op.name(), &NoParams {}, &[self.clone(), other.clone()])
    }

    /// `op(self, s)` with a weak scalar right operand (as [`Tensor::binary_scalar`]).
    pub fn math_binary_scalar(&self, s: impl Into<Scalar>, op: MathBinaryOp) -> Result<Tensor> {
        self.math_binary(&self.weak_scalar(s.into())?, op)
    }

    /// `op(s, self)` with a weak scalar left operand (e.g. `2 // t`).
    pub fn rmath_binary_scalar(&self, s: impl Into<Scalar>, op: MathBinaryOp) -> Result<Tensor> {
        self.weak_scalar(s.into())?.math_binary(self, op)
    }

    /// In place: `self = op(self, s)` with a weak scalar (see [`Tensor::math_binary_`]).
    pub fn math_binary_scalar_(&self, s: impl Into<Scalar>, op: MathBinaryOp) -> Result<()> {
        self.math_binary_(&self.weak_scalar(s.into())?, op)
    }

    /// The standard's `clip`: `minimum(maximum(self, min), max)` with either bound optional,
    /// broadcast, and the result converted back to `self`'s dtype (a copy when both are
    /// `None`). NaN in `self` or a bound propagates; where `min > max` the result is `max`
    /// (NumPy). Differentiable through `maximum` and `minimum`.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[-2.0f64, 0.5, 3.0, f64::NAN], &[4]).unwrap();
    /// let lo = Tensor::scalar(0.0, tessera::DType::F64).unwrap();
    /// let hi = Tensor::scalar(1.0, tessera::DType::F64).unwrap();
    /// let c = t.clip(Some(&lo), Some(&hi)).unwrap().to_vec::<f64>().unwrap();
    /// assert_eq!(&c[..3], &[0.0, 0.5, 1.0]);
    /// assert!(c[3].is_nan());
    /// ```
    pub fn clip(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        let plain = |b: Option<&Tensor>| b.is_none_or(|b| plain_dense(&[b]));
        if plain_dense(&[self]) && plain(min) && plain(max) {
            if let Some(r) = self.clip_scalar_bounds(min, max)? {
                return Ok(r);
            }
        }
        let mut r = match min {
            Some(lo) => self.maximum(lo)?,
            None => self.math(MathOp::Positive)?,
        };
        if let Some(hi) = max {
            r = r.minimum(hi)?;
        }
        if r.dtype() != self.dtype() {
            r = r.astype(self.dtype())?;
        }
        Ok(r)
    }
}

macro_rules! named_math {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "` (see [`Tensor::math`]).")]
            pub fn $name(&self) -> Result<Tensor> {
                self.math(MathOp::$op)
            }
        )*}
    };
}
named_math!(acos => Acos, acosh => Acosh, asin => Asin, asinh => Asinh, atan => Atan,
    atanh => Atanh, cos => Cos, cosh => Cosh, expm1 => Expm1, log1p => Log1p, log2 => Log2,
    log10 => Log10, sinh => Sinh, tan => Tan, reciprocal => Reciprocal, ceil => Ceil,
    floor => Floor, trunc => Trunc, round => Round, sign => Sign, positive => Positive,
    isnan => Isnan, isinf => Isinf, isfinite => Isfinite, signbit => Signbit,
    bitwise_invert => BitwiseInvert, logical_not => LogicalNot);

macro_rules! named_math_binary {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "` (see [`Tensor::math_binary`]).")]
            pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                self.math_binary(other, MathBinaryOp::$op)
            }
        )*}
    };
}
named_math_binary!(atan2 => Atan2, copysign => Copysign, hypot => Hypot,
    logaddexp => Logaddexp, nextafter => Nextafter, floor_divide => FloorDivide,
    remainder => Remainder, bitwise_and => BitwiseAnd, bitwise_or => BitwiseOr,
    bitwise_xor => BitwiseXor, bitwise_left_shift => BitwiseLeftShift,
    bitwise_right_shift => BitwiseRightShift, logical_and => LogicalAnd,
    logical_or => LogicalOr, logical_xor => LogicalXor);
