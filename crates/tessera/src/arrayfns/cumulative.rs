//! `cumulative_sum` and `cumulative_prod` along one axis, and the backward kernel of
//! `cumulative_prod`.
//!
//! The result dtype is the given `dtype`, else the `sum` reduction's rule (bool and integers
//! accumulate in int64, floats in their own dtype); the input is converted first and each
//! step rounds in that dtype, like NumPy's `add.accumulate`. Integers wrap. `axis` may be
//! omitted only for a 1-d input (the standard's rule); a 0-d input has no axis to run along.
//! With `include_initial` each lane starts with the identity (0 or 1) and is one longer.

use super::lanes::{fill, read, Lanes};
use super::sort::for_lanes_from;
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result};
use crate::kernels::elementwise::PAR_MIN;
use crate::kernels::scalar_math::Arith;
use crate::tensor::reduce::reduction_dtype;
use crate::tensor::Tensor;
use crate::with_dtype;

/// Sum or product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accumulate {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
}

impl Accumulate {
    fn name(self) -> &'static str {
        match self {
            Accumulate::Sum => "cumulative_sum",
            Accumulate::Prod => "cumulative_prod",
        }
    }
}

/// The axis of a cumulative function: `axis`, or 0 for a 1-d input when it is `None`.
pub(crate) fn cumulative_axis(name: &str, rank: usize, axis: Option<isize>) -> Result<isize> {
    match (axis, rank) {
        (_, 0) => Err(ErrorKind::InvalidArgument(format!(
            "{name} of a 0-d tensor (it needs at least one dim)"
        ))
        .into()),
        (Some(a), _) => Ok(a),
        (None, 1) => Ok(0),
        (None, r) => Err(ErrorKind::InvalidArgument(format!(
            "{name}: axis is required for a tensor of rank {r}"
        ))
        .into()),
    }
}

/// The result dtype of a cumulative function.
pub(crate) fn cumulative_dtype(x: DType, dtype: Option<DType>) -> DType {
    dtype.unwrap_or_else(|| reduction_dtype("sum", x))
}

/// `d[i] = v[0] op v[1] op ... op v[i]`, left to right (the first value is `v[0]` itself:
/// `0 + -0.0` would lose the sign).
///
/// `op` is a parameter and matched once per lane, outside the loops: matched per element
/// inside a closure that captured it by reference, it was reloaded from memory after every
/// store to `d` (which might alias it, as far as the compiler knew), and the int64 running
/// sum took 4-5 cycles an element instead of one.
fn accumulate_lane<T: Arith + Copy>(op: Accumulate, v: &[T], d: &mut [T]) {
    let (Some((&first, rest)), Some((d0, d_rest))) = (v.split_first(), d.split_first_mut()) else {
        return;
    };
    *d0 = first;
    let mut acc = first;
    match op {
        Accumulate::Sum => {
            for (o, &x) in d_rest.iter_mut().zip(rest) {
                acc = acc.add(x);
                *o = acc;
            }
        }
        Accumulate::Prod => {
            for (o, &x) in d_rest.iter_mut().zip(rest) {
                acc = acc.mul(x);
                *o = acc;
            }
        }
    }
}

impl Tensor {
    /// The dense kernel of [`Tensor::cumulative_sum`] and [`Tensor::cumulative_prod`].
    pub(crate) fn cumulative_dense(
        &self,
        op: Accumulate,
        axis: Option<isize>,
        dtype: Option<DType>,
        include_initial: bool,
    ) -> Result<Tensor> {
        let axis = cumulative_axis(op.name(), self.rank(), axis)?;
        let dt = cumulative_dtype(self.dtype(), dtype);
        let x = if self.dtype() == dt {
            self.clone()
        } else {
            self.astype_dense(dt)?
        };
        let l = Lanes::new(&x, axis)?;
        let n = l.len;
        let m = n + include_initial as usize;
        let out = with_dtype!(dt, T => {
            read::<T, _>(&l.data, |src| {
                fill::<T>(&l.dims_with(m), |dst| {
                    let identity = T::from_i64((op == Accumulate::Prod) as i64);
                    // An add or multiply an element: the reductions' cut-over (at 64 Ki a
                    // sleeping pool made two threads 2-4x slower than one).
                    for_lanes_from(PAR_MIN, src, n, dst, m, |v, d, _| {
                        let d = if include_initial {
                            d[0] = identity;
                            &mut d[1..]
                        } else {
                            d
                        };
                        accumulate_lane(op, v, d);
                        Ok(())
                    })
                })
            })??
        });
        l.restore(out)
    }

    /// The gradient of `cumulative_prod` (without the initial element) along `axis`, for
    /// `self` = x and output gradient `g` of the same shape and dtype: dx_i = sum over k >= i
    /// of g_k * prod_{j <= k, j != i} x_j, computed without division (zeros are fine) as
    /// prefix_{i-1} * s_i with s_i = g_i + x_{i+1} * s_{i+1}.
    pub(crate) fn cumprod_backward_dense(&self, g: &Tensor, axis: isize) -> Result<Tensor> {
        let xl = Lanes::new(self, axis)?;
        let gl = Lanes::new(&g.astype_dense(self.dtype())?, axis)?;
        let n = xl.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&xl.data, |xs| {
                read::<T, _>(&gl.data, |gs| {
                    fill::<T>(&xl.dims_with(n), |dst| {
                        for (k, d) in dst.chunks_mut(n.max(1)).enumerate() {
                            let x = &xs[k * n..(k + 1) * n];
                            let g = &gs[k * n..(k + 1) * n];
                            // d_i <- s_i, right to left.
                            let mut s = T::from_i64(0);
                            for i in (0..n).rev() {
                                s = if i + 1 < n { g[i].add(x[i + 1].mul(s)) } else { g[i] };
                                d[i] = s;
                            }
                            let mut prefix = T::from_i64(1);
                            for i in 0..n {
                                d[i] = prefix.mul(d[i]);
                                prefix = prefix.mul(x[i]);
                            }
                        }
                        Ok(())
                    })
                })
            })???
        });
        xl.restore(out)
    }
}
