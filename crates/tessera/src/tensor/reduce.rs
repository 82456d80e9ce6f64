//! Reductions over axes: `sum`, `mean`, `max`, `min`, and the dense kernels of `prod`,
//! `any`, `all` and `count_nonzero` (NumPy semantics).
//!
//! - `axes = None` reduces every axis; axes may be negative; a repeated axis is
//!   [`ErrorKind::InvalidArgument`], an axis out of range [`ErrorKind::Index`].
//! - `sum` of bool and signed integers gives `int64`, of unsigned integers `uint64` (NumPy,
//!   the array API standard); floats keep their dtype, `f16`/`bf16` accumulating in `f32`.
//!   Float sums use pairwise summation along the innermost run, as NumPy.
//! - `mean` of bool and integers gives `f64`; floats keep their dtype. The mean of nothing
//!   is NaN (NumPy also warns); the sum of nothing is 0.
//! - `max`/`min` keep the dtype, propagate NaN, and of nothing are
//!   [`ErrorKind::InvalidArgument`] (NumPy: "zero-size array to reduction operation
//!   maximum which has no identity").

use super::Tensor;
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::kernels::reduce::{
    reduce, All, Any, CountNonzero, Extreme, Max, Min, Prod, Reducer, Sum,
};
use crate::layout::normalize_axes;
use crate::with_dtype;

/// Which axes a reduction removes, resolved against a tensor's rank.
pub(crate) struct Axes {
    pub(crate) reduced: Vec<bool>,
    /// Elements folded into each output element.
    pub(crate) count: usize,
    pub(crate) out_shape: Vec<usize>,
}

pub(crate) fn resolve_axes(
    shape: &[usize],
    axes: Option<&[isize]>,
    keepdims: bool,
) -> Result<Axes> {
    let rank = shape.len();
    let mut reduced = vec![axes.is_none(); rank];
    for a in normalize_axes(axes.unwrap_or(&[]), rank)? {
        reduced[a] = true;
    }
    let count = shape
        .iter()
        .zip(&reduced)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    let out_shape = shape
        .iter()
        .zip(&reduced)
        .filter_map(|(&d, &r)| match (r, keepdims) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok(Axes {
        reduced,
        count,
        out_shape,
    })
}

/// The dtype reduction `kind` (`sum`, `mean`, `max`, `min`) produces from input dtype `d`
/// (the rules in the module docs); shape/dtype inference uses it without running anything.
pub(crate) fn reduction_dtype(kind: &str, d: DType) -> DType {
    match kind {
        "sum" if d.is_unsigned_integer() => DType::U64,
        "sum" if !d.is_float() && !d.is_complex() => DType::I64,
        "mean" if !d.is_float() && !d.is_complex() => DType::F64,
        _ => d,
    }
}

impl Tensor {
    /// Runs reducer `r` over `ax`, returning the accumulators.
    pub(super) fn reduce_with<T: Element, R: Reducer<T>>(
        &self,
        ax: &Axes,
        r: &R,
    ) -> Result<Vec<R::Acc>> {
        let data = self.dense_storage()?.read_as::<T>();
        let l = self.layout();
        reduce(&data, l.dims(), l.strides(), l.offset(), &ax.reduced, r)
    }

    /// The dense kernel of [`Tensor::sum`]: the sum over `axes` (all when `None`); see the
    /// [module docs](self) for dtypes. Errors for a sparse tensor (the dense gate).
    pub(crate) fn sum_dense(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        let ax = resolve_axes(self.shape(), axes, keepdims)?;
        let dt = reduction_dtype("sum", self.dtype());
        // The accumulator type is the output dtype but for `f16`/`bf16` (accumulated in
        // `f32`): one cast of the output instead of a kernel per (input, output) pair.
        let acc = with_dtype!(self.dtype(), T => {
            Tensor::from_vec(self.reduce_with::<T, Sum>(&ax, &Sum)?, &ax.out_shape)?
        });
        acc.astype_if(dt)
    }

    /// Arithmetic mean over `axes` (all when `None`): the sum divided by the count, computed
    /// in the sum's accumulator and `f64`; see the `tensor::reduce` module docs for dtypes.
    pub(crate) fn mean_dense(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        let ax = resolve_axes(self.shape(), axes, keepdims)?;
        let dt = reduction_dtype("mean", self.dtype());
        let n = ax.count as f64;
        // Divided in `f64` (each part for complex) and rounded once to the output dtype.
        let quotient = with_dtype!(self.dtype(), T => {
            let acc = self.reduce_with::<T, Sum>(&ax, &Sum)?;
            if dt.is_complex() {
                let q = map_vec(acc, |a| {
                    let (re, im) = a.to_complex();
                    crate::complex::C128::new(re / n, im / n)
                })?;
                Tensor::from_vec(q, &ax.out_shape)?
            } else {
                Tensor::from_vec(map_vec(acc, |a| a.to_f64() / n)?, &ax.out_shape)?
            }
        });
        quotient.astype_if(dt)
    }

    /// The dense kernel of [`Tensor::prod`]: the product over `axes` in `dtype` (the
    /// input converted first), else in the sum's dtype; `f16`/`bf16` accumulate in `f32`
    /// and round once.
    pub(crate) fn prod_dense(
        &self,
        axes: Option<&[isize]>,
        keepdims: bool,
        dtype: DType,
    ) -> Result<Tensor> {
        let ax = resolve_axes(self.shape(), axes, keepdims)?;
        let x = self.astype_if(dtype)?;
        let acc = with_dtype!(dtype, T => {
            Tensor::from_vec(x.reduce_with::<T, Prod>(&ax, &Prod)?, &ax.out_shape)?
        });
        acc.astype_if(dtype)
    }

    /// The dense kernels of [`Tensor::any`] (`any`), [`Tensor::all`] and
    /// [`Tensor::count_nonzero`] (`count`): an element counts as true when it is not zero.
    pub(crate) fn truth_dense(
        &self,
        axes: Option<&[isize]>,
        keepdims: bool,
        kind: Truth,
    ) -> Result<Tensor> {
        let ax = resolve_axes(self.shape(), axes, keepdims)?;
        with_dtype!(self.dtype(), T => {
            match kind {
                Truth::Any => Tensor::from_vec(self.reduce_with::<T, Any>(&ax, &Any)?, &ax.out_shape),
                Truth::All => Tensor::from_vec(self.reduce_with::<T, All>(&ax, &All)?, &ax.out_shape),
                Truth::Count => Tensor::from_vec(
                    self.reduce_with::<T, CountNonzero>(&ax, &CountNonzero)?,
                    &ax.out_shape,
                ),
            }
        })
    }

    /// Maximum over `axes` (all when `None`); NaN propagates; an empty reduction is an error.
    pub(crate) fn max_dense(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        self.extreme(axes, keepdims, true)
    }

    /// Minimum over `axes` (all when `None`); NaN propagates; an empty reduction is an error.
    pub(crate) fn min_dense(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        self.extreme(axes, keepdims, false)
    }

    fn extreme(&self, axes: Option<&[isize]>, keepdims: bool, max: bool) -> Result<Tensor> {
        let ax = resolve_axes(self.shape(), axes, keepdims)?;
        if self.dtype().is_complex() {
            return Err(unordered(if max { "max" } else { "min" }, self.dtype()));
        }
        if ax.count == 0 {
            return Err(ErrorKind::InvalidArgument(format!(
                "zero-size reduction to {} of a tensor of shape {:?}, which has no identity",
                if max { "max" } else { "min" },
                self.shape()
            ))
            .into());
        }
        with_dtype!(self.dtype(), T => {
            let v = if max {
                self.reduce_with::<T, Max>(&ax, &Extreme)?
            } else {
                self.reduce_with::<T, Min>(&ax, &Extreme)?
            };
            Tensor::from_vec(v, &ax.out_shape)
        })
    }
}

/// Which reduction over the truth of elements [`Tensor::truth_dense`] runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Truth {
    /// Whether any element is true.
    Any,
    /// Whether every element is true.
    All,
    /// How many elements are true (`int64`).
    Count,
}

/// The error for an ordering operation on a complex dtype: the array API standard leaves
/// complex numbers unordered.
pub(crate) fn unordered(op: &str, d: DType) -> TesseraError {
    ErrorKind::DType(crate::error::DTypeFacts::Unsupported {
        op: op.into(),
        dtype: d,
        hint: " (complex numbers are unordered in the array API standard)",
    })
    .into()
}

/// `v` mapped through `f` into a vector allocated fallibly (its size comes from the shape).
fn map_vec<A, O>(v: Vec<A>, f: impl FnMut(A) -> O) -> Result<Vec<O>> {
    let mut out = crate::storage::try_with_capacity(v.len())?;
    out.extend(v.into_iter().map(f));
    Ok(out)
}
