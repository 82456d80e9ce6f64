//! NumPy's `repeat` (the Array API's): each element repeated along one axis (of the
//! flattened tensor when there is none), by one count for all or one count per element; and
//! its backward, the sum of each element's copies.

use super::lanes::{fill, read, Lanes};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::kernels::scalar_math::Arith;
use crate::tensor::Tensor;
use crate::with_dtype;

/// The per-element counts of `repeats` (a 0-d or 1-d integer tensor) for a lane of `n`.
pub(crate) fn counts(repeats: &Tensor, n: usize) -> Result<Vec<usize>> {
    if !repeats.dtype().is_integer() {
        return Err(ErrorKind::DType(crate::error::DTypeFacts::Other(format!(
            "repeat: repeats must be integers, got {}",
            repeats.dtype()
        )))
        .into());
    }
    let r = repeats.astype_contiguous(DType::I64)?;
    let v: Vec<i64> = read::<i64, _>(&r, <[i64]>::to_vec)?;
    if let Some(&bad) = v.iter().find(|&&c| c < 0) {
        return Err(ErrorKind::InvalidArgument(format!("repeat: negative count {bad}")).into());
    }
    match (repeats.rank(), v.len()) {
        (0, _) | (1, 1) => Ok(vec![v[0] as usize; n]),
        (1, m) if m == n => Ok(v.iter().map(|&c| c as usize).collect()),
        _ => Err(
            ErrorKind::ShapeMismatch(crate::error::ShapeFacts::Other(format!(
                "repeat: {} counts for an axis of length {n}",
                v.len()
            )))
            .into(),
        ),
    }
}

/// `x` flattened when `axis` is `None`, with the axis to work along.
fn source(x: &Tensor, axis: Option<isize>) -> Result<(Tensor, isize)> {
    match axis {
        Some(a) => Ok((x.clone(), a)),
        None => Ok((x.reshape_dense(&[-1])?, 0)),
    }
}

fn total(c: &[usize]) -> Result<usize> {
    c.iter()
        .try_fold(0usize, |s, &k| s.checked_add(k))
        .ok_or_else(|| {
            TesseraError::from(ErrorKind::ShapeOverflow(
                "repeat: total count overflows".into(),
            ))
        })
}

impl Tensor {
    /// The dense kernel of [`Tensor::repeat_interleave`].
    pub(crate) fn repeat_interleave_dense(
        &self,
        repeats: &Tensor,
        axis: Option<isize>,
    ) -> Result<Tensor> {
        let (x, axis) = source(self, axis)?;
        let l = Lanes::new(&x, axis)?;
        let c = counts(repeats, l.len)?;
        let m = total(&c)?;
        crate::shape::checked_numel(&l.dims_with(m))?;
        let n = l.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&l.data, |src| {
                fill::<T>(&l.dims_with(m), |dst| {
                    for (k, d) in dst.chunks_mut(m.max(1)).enumerate() {
                        let mut o = 0;
                        for (&v, &r) in src[k * n..(k + 1) * n].iter().zip(&c) {
                            d[o..o + r].fill(v);
                            o += r;
                        }
                    }
                    Ok(())
                })
            })??
        });
        l.restore(out)
    }

    /// The backward of `repeat_interleave`: `g` (the output gradient) summed over each
    /// element's copies, shaped like `self`.
    pub(crate) fn unrepeat_interleave_dense(
        &self,
        g: &Tensor,
        repeats: &Tensor,
        axis: Option<isize>,
    ) -> Result<Tensor> {
        let (x, axis) = source(self, axis)?;
        let c = counts(
            repeats,
            x.shape()[crate::layout::normalize_axis(axis, x.rank())?],
        )?;
        let gl = Lanes::new(&g.astype_dense(self.dtype())?, axis)?;
        let n = c.len();
        let m = gl.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&gl.data, |gs| {
                fill::<T>(&gl.dims_with(n), |dst| {
                    for (k, d) in dst.chunks_mut(n.max(1)).enumerate() {
                        let lane = &gs[k * m..(k + 1) * m];
                        let mut o = 0;
                        for (dv, &r) in d.iter_mut().zip(&c) {
                            *dv = lane[o..o + r].iter().fold(T::from_i64(0), |s, &v| s.add(v));
                            o += r;
                        }
                    }
                    Ok(())
                })
            })??
        });
        let dims: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        gl.restore(out)?.reshape_dense(&dims)
    }
}
