//! Elementwise, reduction and product methods of `Tensor`, each run through its registry op
//! (and so recorded by autograd). Dtype and broadcasting rules: `tensor/arith.rs`,
//! `tensor/reduce.rs`, `tensor/matmul.rs`.

use std::slice;

use super::{call1, single};
use crate::dtype::Scalar;
use crate::error::Result;
use crate::ops::defs::{DotParams, NoParams, ReduceParams};
use crate::ops::dispatch::plain_dense;
use crate::ops::registry::registry;
use crate::tensor::arith::{BinaryOp, CompareOp, UnaryOp};
use crate::tensor::Tensor;

/// `dot(a, b)` with typed parameters (the backward of `dot` calls it too).
pub(crate) fn dot_with(a: &Tensor, b: &Tensor, p: &DotParams) -> Result<Tensor> {
    call1("dot", p, &[a.clone(), b.clone()])
}

fn reduce_params(axes: Option<&[isize]>, keepdims: bool) -> ReduceParams {
    ReduceParams {
        axis: axes.map(<[isize]>::to_vec),
        keepdims,
    }
}

impl Tensor {
    /// Applies an elementwise function, returning a new tensor (order: design.md P6) of
    /// [`UnaryOp::result_dtype`].
    ///
    /// ```
    /// use tessera::{Tensor, UnaryOp};
    /// let t = Tensor::from_slice(&[-1.0f64, 4.0], &[2]).unwrap();
    /// assert_eq!(t.unary(UnaryOp::Abs).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 4.0]);
    /// ```
    pub fn unary(&self, op: UnaryOp) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.unary_dense(op);
        }
        call1(op.name(), &NoParams {}, slice::from_ref(self))
    }

    /// `op(self, other)` with broadcasting and type promotion, into a new tensor (order:
    /// design.md P6).
    ///
    /// Errors: [`crate::ErrorKind::ShapeMismatch`] when the shapes do not broadcast,
    /// [`crate::ErrorKind::DType`] when the dtypes have no common type or the op is not
    /// defined for it, [`crate::ErrorKind::InvalidArgument`] for an integer `pow` with a
    /// negative exponent.
    ///
    /// ```
    /// use tessera::{BinaryOp, DType, Tensor};
    /// let a = Tensor::from_slice(&[1i32, 2, 3], &[3, 1]).unwrap();
    /// let b = Tensor::from_slice(&[0.5f32, 1.5], &[2]).unwrap();
    /// let c = a.binary(&b, BinaryOp::Add).unwrap();
    /// assert_eq!((c.dtype(), c.shape()), (DType::F64, &[3usize, 2][..]));
    /// assert_eq!(c.to_vec::<f64>().unwrap(), vec![1.5, 2.5, 2.5, 3.5, 3.5, 4.5]);
    /// ```
    pub fn binary(&self, other: &Tensor, op: BinaryOp) -> Result<Tensor> {
        if plain_dense(&[self, other]) {
            return self.binary_dense(other, op);
        }
        call1(op.name(), &NoParams {}, &[self.clone(), other.clone()])
    }

    /// `op(self, other)` elementwise with broadcasting, compared in the promoted dtype; the
    /// result is a `bool` tensor.
    pub fn compare(&self, other: &Tensor, op: CompareOp) -> Result<Tensor> {
        if plain_dense(&[self, other]) {
            return self.compare_dense(other, op);
        }
        call1(op.name(), &NoParams {}, &[self.clone(), other.clone()])
    }

    /// `op(self, s)` with a weak scalar ([`crate::promote::result_type_scalar`]): `f32 + 2.5`
    /// stays `f32`, `i32 + 2.5` is `f64`.
    pub fn binary_scalar(&self, s: impl Into<Scalar>, op: BinaryOp) -> Result<Tensor> {
        self.binary(&self.weak_scalar(s.into())?, op)
    }

    /// `op(s, self)` with a weak scalar on the left (e.g. `2 - t`).
    pub fn rbinary_scalar(&self, s: impl Into<Scalar>, op: BinaryOp) -> Result<Tensor> {
        self.weak_scalar(s.into())?.binary(self, op)
    }

    /// `op(self, s)` with a weak scalar; the result is `bool`.
    pub fn compare_scalar(&self, s: impl Into<Scalar>, op: CompareOp) -> Result<Tensor> {
        self.compare(&self.weak_scalar(s.into())?, op)
    }

    /// Arithmetic mean over `axes` (all when `None`): the sum divided by the count, computed
    /// in the sum's accumulator and `f64`; see the `tensor::reduce` module docs for dtypes.
    pub fn mean(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        call1(
            "mean",
            &reduce_params(axes, keepdims),
            slice::from_ref(self),
        )
    }

    /// Maximum over `axes` (all when `None`); NaN propagates; an empty reduction is an error.
    pub fn max(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        call1("max", &reduce_params(axes, keepdims), slice::from_ref(self))
    }

    /// Minimum over `axes` (all when `None`); NaN propagates; an empty reduction is an error.
    pub fn min(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        call1("min", &reduce_params(axes, keepdims), slice::from_ref(self))
    }

    /// NumPy `matmul`: `[.., m, k] @ [.., k, n] -> [.., m, n]` with the batch dims broadcast,
    /// a 1-D lhs as a row and a 1-D rhs as a column (their added dim dropped); see
    /// `tensor/matmul.rs` for dtypes and docs/design.md M1, M2.
    ///
    /// Errors: `InvalidArgument` for a 0-D operand, `ShapeMismatch` when the inner dims differ
    /// or the batch dims do not broadcast, `DType` when the dtypes have no common type.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    /// let b = Tensor::from_slice(&[1f32, 0., 0., 1., 1., 1.], &[3, 2]).unwrap();
    /// let c = a.matmul(&b).unwrap();
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![4., 5., 10., 11.]);
    /// assert!(a.matmul(&a).is_err());
    /// // A stack of two [2, 3] matrices times the shared b.
    /// let s = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[2, 2, 3]).unwrap();
    /// assert_eq!(s.matmul(&b).unwrap().shape(), &[2, 2, 2]);
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        single(
            registry()
                .def::<NoParams>("matmul")?
                .call(&NoParams {}, &[self.clone(), other.clone()])?,
        )
    }

    /// NumPy `dot` of 1-D or 2-D operands; a csr lhs runs the sparse kernels (see the `dot`
    /// op in docs/ops.md).
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        dot_with(
            self,
            other,
            &DotParams {
                transpose_a: false,
                parallel: true,
            },
        )
    }
}

macro_rules! named_ops {
    ($($(#[$m:meta])* $name:ident, $scalar:ident => $op:ident;)*) => {
        impl Tensor {$(
            $(#[$m])*
            pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                self.binary(other, BinaryOp::$op)
            }
            #[doc = concat!("`", stringify!($name), "` with a weak scalar right operand.")]
            pub fn $scalar(&self, s: impl Into<Scalar>) -> Result<Tensor> {
                self.binary_scalar(s, BinaryOp::$op)
            }
        )*}
    };
}

named_ops! {
    /// `self + other` (see [`Tensor::binary`]).
    add, add_scalar => Add;
    /// `self - other` (see [`Tensor::binary`]).
    sub, sub_scalar => Sub;
    /// `self * other` (see [`Tensor::binary`]).
    mul, mul_scalar => Mul;
    /// True division `self / other` (see [`Tensor::binary`]).
    div, div_scalar => Div;
    /// Elementwise maximum (see [`Tensor::binary`]).
    maximum, maximum_scalar => Maximum;
    /// Elementwise minimum (see [`Tensor::binary`]).
    minimum, minimum_scalar => Minimum;
    /// `self ** other` (see [`Tensor::binary`]).
    pow, pow_scalar => Pow;
}

macro_rules! named_unary {
    ($($name:ident => $op:ident),*) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "` (see [`Tensor::unary`]).")]
            pub fn $name(&self) -> Result<Tensor> {
                self.unary(UnaryOp::$op)
            }
        )*}
    };
}
named_unary!(neg => Neg, abs => Abs, sqrt => Sqrt, exp => Exp, log => Log,
    square => Square, sin => Sin, tanh => Tanh, relu => Relu);

macro_rules! named_compare {
    ($($name:ident => $op:ident),*) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "` (see [`Tensor::compare`]).")]
            pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                self.compare(other, CompareOp::$op)
            }
        )*}
    };
}
named_compare!(eq => Eq, ne => Ne, lt => Lt, le => Le, gt => Gt, ge => Ge);
