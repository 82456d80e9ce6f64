//! A tensor seen as lanes along one axis: the axis moved last and the data made contiguous,
//! so that lane `k` is the slice `data[k * len..(k + 1) * len]`. Results computed in that
//! layout go back with [`Lanes::restore`] (a view: no copy).

use crate::dtype::Element;
use crate::error::Result;
use crate::layout::normalize_axis;
use crate::tensor::Tensor;

/// Lanes of a tensor along one axis.
pub(crate) struct Lanes {
    /// The input with `axis` moved last, C-contiguous.
    pub(crate) data: Tensor,
    /// The axis, resolved.
    pub(crate) axis: usize,
    /// Length of each lane.
    pub(crate) len: usize,
    /// Number of lanes (the product of the other dims).
    pub(crate) count: usize,
}

impl Lanes {
    /// The lanes of `x` along `axis` (negative counts from the end).
    pub(crate) fn new(x: &Tensor, axis: isize) -> Result<Lanes> {
        let rank = x.rank();
        let axis = normalize_axis(axis, rank)?;
        let data = if axis + 1 == rank {
            x.contiguous_dense()?
        } else {
            let mut perm: Vec<isize> = (0..rank as isize).filter(|&a| a != axis as isize).collect();
            perm.push(axis as isize);
            x.permute_dense(&perm)?.contiguous_dense()?
        };
        let len = x.shape()[axis];
        let count = x
            .shape()
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != axis)
            .map(|(_, &n)| n)
            .product();
        Ok(Lanes {
            data,
            axis,
            len,
            count,
        })
    }

    /// The shape of the lanes' layout with lanes of length `len` (the other dims, then `len`).
    pub(crate) fn dims_with(&self, len: usize) -> Vec<usize> {
        let mut d = self.data.shape().to_vec();
        if let Some(last) = d.last_mut() {
            *last = len;
        }
        d
    }

    /// `t`, laid out as lanes (shape [`Lanes::dims_with`]), seen back in the input's axis
    /// order: a view.
    pub(crate) fn restore(&self, t: Tensor) -> Result<Tensor> {
        let rank = t.rank();
        if self.axis + 1 == rank {
            return Ok(t);
        }
        let perm: Vec<isize> = (0..rank)
            .map(|d| match d.cmp(&self.axis) {
                std::cmp::Ordering::Less => d as isize,
                std::cmp::Ordering::Equal => rank as isize - 1,
                std::cmp::Ordering::Greater => d as isize - 1,
            })
            .collect();
        t.permute_dense(&perm)
    }
}

/// Runs `f` on the elements of the C-contiguous tensor `t` as one slice.
pub(crate) fn read<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    debug_assert!(t.is_contiguous());
    if t.numel() == 0 {
        // An empty view may carry any offset (a flipped empty tensor).
        return Ok(f(&[]));
    }
    let s = t.dense_storage()?.read_as::<T>();
    let o = t.layout().offset();
    Ok(f(&s[o..o + t.numel()]))
}

/// A new C-contiguous tensor of `dims` and dtype `T` whose elements `f` writes (all of them).
pub(crate) fn fill<T: Element>(
    dims: &[usize],
    f: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<Tensor> {
    let out = Tensor::for_overwrite(dims, T::DTYPE)?;
    {
        let mut w = out.dense_storage()?.write_as::<T>();
        f(&mut w[..])?;
    }
    Ok(out)
}

/// The cut-over of lane jobs of many operations an element (sorts, FFTs, set functions).
/// 64 Ki elements (a sort along 256-element rows: 183 us on one thread) won on two threads
/// when calls came back to back (146 us) and lost when other work came between them
/// (`bench_ops.py`, 2026-12-01: 460 us, rayon's hand-off to a sleeping thread on this VM);
/// from 128 Ki (364 us on one thread) the work covers the hand-off.
pub(crate) const PAR_MIN_LANES: usize = 1 << 17;

/// Whether a job over `n` elements of many operations each (a sort, an FFT) is worth
/// rayon's pool: from [`PAR_MIN_LANES`].
pub(crate) fn parallel(n: usize) -> bool {
    parallel_from(n, PAR_MIN_LANES)
}

/// Whether a job over `n` elements is worth rayon's pool, for a kernel whose cut-over is
/// `min` elements (`kernels::elementwise::PAR_MIN` for a pass of one comparison or add an
/// element, as argmax: waking the pool for 64 Ki of those took 4x the one-thread time).
pub(crate) fn parallel_from(n: usize, min: usize) -> bool {
    n >= crate::kernels::parallel::cut_over(min) && crate::kernels::parallel::enabled()
}
