//! `argmax` and `argmin` along one axis or over the flattened tensor: the index of the first
//! extreme element, or of the first NaN when there is one (NumPy's rule: NaN is the extreme
//! value both ways). An empty lane has no extreme: an error, as in NumPy.

use super::lanes::{fill, read, Lanes};
use super::sort::{for_lanes, is_nan};
use crate::dtype::Element;
use crate::error::{Result, TesseraError};
use crate::tensor::Tensor;
use crate::with_dtype;

/// The index of the first maximum (`max`) or minimum of a non-empty lane; the first NaN wins.
fn arg_extreme<T: Element>(v: &[T], max: bool) -> i64 {
    let mut best = 0;
    let mut bv = v[0];
    if is_nan(&bv) {
        return 0;
    }
    for (i, &x) in v.iter().enumerate().skip(1) {
        if is_nan(&x) {
            return i as i64;
        }
        if (max && x > bv) || (!max && x < bv) {
            best = i;
            bv = x;
        }
    }
    best as i64
}

impl Tensor {
    /// The dense kernel of [`Tensor::argmax`] (`max`) and [`Tensor::argmin`].
    pub(crate) fn arg_extreme_dense(
        &self,
        axis: Option<isize>,
        keepdims: bool,
        max: bool,
    ) -> Result<Tensor> {
        let name = if max { "argmax" } else { "argmin" };
        let flattened = axis.is_none();
        let (src, axis) = match axis {
            Some(a) => (self.clone(), a),
            None => (self.reshape_dense(&[-1])?, 0),
        };
        let l = Lanes::new(&src, axis)?;
        if l.len == 0 {
            return Err(TesseraError::InvalidArgument(format!(
                "{name} of an empty sequence (axis of length 0)"
            )));
        }
        let n = l.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&l.data, |s| {
                fill::<i64>(&l.dims_with(1), |dst| {
                    for_lanes(s, n, dst, 1, |v, d, _| {
                        d[0] = arg_extreme(v, max);
                        Ok(())
                    })
                })
            })??
        });
        let out = l.restore(out)?;
        let mut dims: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        match ((!flattened).then_some(l.axis), keepdims) {
            (None, true) => dims.iter_mut().for_each(|d| *d = 1),
            (None, false) => dims.clear(),
            (Some(a), true) => dims[a] = 1,
            (Some(a), false) => {
                dims.remove(a);
            }
        }
        out.reshape_dense(&dims)
    }
}
