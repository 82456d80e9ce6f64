//! The Array API's statistical and utility reductions built from registry ops (so each is
//! differentiable where its pieces are): `prod`, `var`, `std`, `all`, `any`, `count_nonzero`.
//! `prod`, `all`, `any` and `count_nonzero` of a dense tensor that records no gradient run
//! one reduction kernel instead (`tensor::reduce`); the composed form serves sparse tensors
//! and gradients. Rules: docs/design.md A8.

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::layout::normalize_axes;
use crate::ops::dispatch::plain_dense;
use crate::tensor::arith::CompareOp;
use crate::tensor::reduce::Truth;
use crate::tensor::Tensor;

/// The reduced axes (all when `None`) and the kept ones, in order.
fn split_axes(rank: usize, axes: Option<&[isize]>) -> Result<(Vec<usize>, Vec<usize>)> {
    let red = match axes {
        None => (0..rank).collect(),
        Some(a) => normalize_axes(a, rank)?.into_vec(),
    };
    let keep = (0..rank).filter(|d| !red.contains(d)).collect();
    Ok((red, keep))
}

/// The result shape of a reduction over `red`.
fn reduced_shape(dims: &[usize], red: &[usize], keepdims: bool) -> Vec<isize> {
    dims.iter()
        .enumerate()
        .filter_map(|(d, &n)| match (red.contains(&d), keepdims) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(n as isize),
        })
        .collect()
}

impl Tensor {
    /// The product over `axes` (all when `None`); the dtype is `cumulative_prod`'s (bool and
    /// integers in int64 unless `dtype` is given); the empty product is 1.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    /// assert_eq!(t.prod(Some(&[0]), false, None).unwrap().to_vec::<i64>().unwrap(), vec![3, 8]);
    /// ```
    pub fn prod(
        &self,
        axes: Option<&[isize]>,
        keepdims: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if plain_dense(&[self]) {
            let dt = crate::arrayfns::cumulative::cumulative_dtype(self.dtype(), dtype);
            return self.prod_dense(axes, keepdims, dt);
        }
        // Sparse, or recording gradients: from `cumulative_prod`, which has both.
        let (red, keep) = split_axes(self.rank(), axes)?;
        let n: usize = red.iter().map(|&d| self.shape()[d]).product();
        let perm: Vec<isize> = keep.iter().chain(&red).map(|&d| d as isize).collect();
        let mut flat: Vec<isize> = keep.iter().map(|&d| self.shape()[d] as isize).collect();
        flat.push(n as isize);
        let running =
            self.permute(&perm)?
                .reshape(&flat)?
                .cumulative_prod(Some(-1), dtype, true)?;
        running
            .narrow(-1, n, 1)?
            .reshape(&reduced_shape(self.shape(), &red, keepdims))
    }

    /// The variance over `axes` with `correction` degrees of freedom removed from the count
    /// (NumPy's `ddof`); integers give float64. A count at or below `correction` divides by 0.
    pub fn var(&self, axes: Option<&[isize]>, correction: f64, keepdims: bool) -> Result<Tensor> {
        let (red, _) = split_axes(self.rank(), axes)?;
        let n: usize = red.iter().map(|&d| self.shape()[d]).product();
        let mean = self.mean(axes, true)?;
        let dev = self.sub(&mean)?;
        let ss = dev.square()?.sum(axes, keepdims)?;
        ss.div_scalar((n as f64 - correction).max(0.0))
    }

    /// The standard deviation: the square root of [`Tensor::var`].
    pub fn std(&self, axes: Option<&[isize]>, correction: f64, keepdims: bool) -> Result<Tensor> {
        self.var(axes, correction, keepdims)?.sqrt()
    }

    /// Whether every element over `axes` is true (non-zero; NaN is true); true when empty.
    pub fn all(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.truth_dense(axes, keepdims, Truth::All);
        }
        let falses = self
            .astype(DType::Bool)?
            .compare_scalar(Scalar::Bool(false), CompareOp::Eq)?
            .sum(axes, keepdims)?;
        falses.compare_scalar(0, CompareOp::Eq)
    }

    /// Whether any element over `axes` is true (non-zero; NaN is true); false when empty.
    pub fn any(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.truth_dense(axes, keepdims, Truth::Any);
        }
        self.count_nonzero(axes, keepdims)?
            .compare_scalar(0, CompareOp::Gt)
    }

    /// The number of non-zero elements over `axes` (int64; NaN counts).
    pub fn count_nonzero(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.truth_dense(axes, keepdims, Truth::Count);
        }
        self.astype(DType::Bool)?.sum(axes, keepdims)
    }
}
