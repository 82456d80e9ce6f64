//! `nonzero` (as `argwhere`: one row of coordinates per non-zero element, in row-major
//! order), `searchsorted` (insertion points into a sorted 1-d tensor, in the order of
//! [`nan_last`]) and `isin` (membership, by binary search in a sorted copy).

use super::lanes::{fill, read};
use super::sort::nan_last;
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, IndexFacts, Result};
use crate::promote::result_type;
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// The dense kernel of `argwhere`: int64 `[count, rank]`, the coordinates of the non-zero
    /// elements (NaN is non-zero) in row-major order. A 0-d tensor is refused (NumPy 2).
    pub(crate) fn argwhere_dense(&self) -> Result<Tensor> {
        if self.rank() == 0 {
            return Err(ErrorKind::InvalidArgument(
                "nonzero of a 0-d tensor (use atleast_1d / reshape first)".into(),
            )
            .into());
        }
        let b = self.astype_contiguous(DType::Bool)?;
        let flat: Vec<usize> = read::<bool, _>(&b, |v| {
            v.iter()
                .enumerate()
                .filter(|(_, &x)| x)
                .map(|(i, _)| i)
                .collect()
        })?;
        let dims = self.shape().to_vec();
        let r = dims.len();
        fill::<i64>(&[flat.len(), r], |out| {
            for (row, &i) in out.chunks_mut(r).zip(&flat) {
                let mut rest = i;
                for d in (0..r).rev() {
                    row[d] = (rest % dims[d]) as i64;
                    rest /= dims[d];
                }
            }
            Ok(())
        })
    }

    /// The dense kernel of `searchsorted`: for each element of `x2`, the index in the sorted
    /// 1-d `self` (read through `sorter` when it is non-empty) where it would be inserted
    /// before (`right == false`) or after the equal elements. Both sides are compared in their
    /// promoted dtype.
    pub(crate) fn searchsorted_dense(
        &self,
        x2: &Tensor,
        sorter: &Tensor,
        right: bool,
    ) -> Result<Tensor> {
        if self.rank() != 1 {
            return Err(ErrorKind::InvalidArgument(format!(
                "searchsorted: x1 must be 1-d, got shape {:?}",
                self.shape()
            ))
            .into());
        }
        let dt = result_type(self.dtype(), x2.dtype())?;
        let n = self.shape()[0];
        let x1 = self.astype_contiguous(dt)?;
        let x2c = x2.astype_contiguous(dt)?;
        let order: Option<Vec<usize>> = if sorter.numel() == 0 {
            None
        } else {
            Some(sorter_indices(sorter, n)?)
        };
        with_dtype!(dt, T => {
            read::<T, _>(&x1, |a| {
                let sorted: Vec<T> = match &order {
                    Some(o) => o.iter().map(|&i| a[i]).collect(),
                    None => a.to_vec(),
                };
                read::<T, _>(&x2c, |v| {
                    fill::<i64>(x2.shape(), |out| {
                        for (o, x) in out.iter_mut().zip(v) {
                            *o = insertion_point(&sorted, x, right) as i64;
                        }
                        Ok(())
                    })
                })
            })??
        })
    }

    /// The dense kernel of `isin`: bool, `self`'s shape, whether each element equals some
    /// element of `test` (any shape), compared in the promoted dtype; `invert` negates.
    /// NaN is in no set (it equals nothing); `-0.0` and `0.0` are equal. Sorts a copy of
    /// `test` once, then one binary search per element: O((n + m) log m).
    pub(crate) fn isin_dense(&self, test: &Tensor, invert: bool) -> Result<Tensor> {
        let dt = result_type(self.dtype(), test.dtype())?;
        let x = self.astype_contiguous(dt)?;
        let t = test.astype_contiguous(dt)?;
        with_dtype!(dt, T => {
            read::<T, _>(&t, |set| {
                let mut sorted = set.to_vec();
                sorted.sort_unstable_by(nan_last);
                read::<T, _>(&x, |v| {
                    fill::<bool>(self.shape(), |out| {
                        for (o, e) in out.iter_mut().zip(v) {
                            let i = insertion_point(&sorted, e, false);
                            *o = (i < sorted.len() && sorted[i] == *e) != invert;
                        }
                        Ok(())
                    })
                })
            })??
        })
    }
}

/// Where `x` goes in the sorted `s`: before the equal elements, or after them (`right`).
fn insertion_point<T: Element>(s: &[T], x: &T, right: bool) -> usize {
    if right {
        s.partition_point(|e| nan_last(e, x).is_le())
    } else {
        s.partition_point(|e| nan_last(e, x).is_lt())
    }
}

/// The indices of `sorter`: an integer 1-d tensor of length `n` with values in `0..n`.
fn sorter_indices(sorter: &Tensor, n: usize) -> Result<Vec<usize>> {
    if !sorter.dtype().is_integer() || sorter.rank() != 1 || sorter.shape()[0] != n {
        return Err(ErrorKind::InvalidArgument(format!(
            "searchsorted: sorter must be a 1-d integer tensor of length {n}, got {} {:?}",
            sorter.dtype(),
            sorter.shape()
        ))
        .into());
    }
    let s = sorter.astype_contiguous(DType::I64)?;
    let v = read::<i64, _>(&s, <[i64]>::to_vec)?;
    v.iter()
        .map(|&i| {
            usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| {
                ErrorKind::Index(IndexFacts::Other(format!(
                    "searchsorted: sorter index {i} is out of bounds for length {n}"
                )))
                .into()
            })
        })
        .collect()
}
