//! `sort` and `argsort` along one axis, and the scatter that undoes a sort (the backward of
//! `sort`).
//!
//! The order is NumPy's ([`nan_last`]). Descending order is the reverse comparison, so NaNs
//! come first, as in NumPy's `flip(sort(x))`; a stable sort keeps equal elements (`-0.0` and
//! `0.0`, NaNs) in their input order in both directions, as the standard asks. `argsort` is
//! always stable: it sorts `(value, index)` pairs, so ties fall back to the index and the
//! fast unstable sort gives the stable answer. Large inputs sort on rayon's pool: lanes in
//! parallel when there are many, else one lane with rayon's parallel sort.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::lanes::{fill, parallel, parallel_from, read, Lanes, PAR_MIN_LANES};
use super::{partition_copy, radix};
use crate::dtype::Element;
use crate::error::Result;
use crate::storage::try_with_capacity;
use crate::tensor::Tensor;
use crate::with_dtype;

/// NumPy's sort order: values ascending with `-0.0 == 0.0`; NaN (any element unequal to
/// itself) after every other value and equal to every other NaN. A total preorder.
#[inline]
pub(crate) fn nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    match a.partial_cmp(b) {
        Some(o) => o,
        None => is_nan(a).cmp(&is_nan(b)),
    }
}

/// Whether `a` is NaN (the one value unequal to itself).
#[inline]
#[allow(clippy::eq_op)]
pub(crate) fn is_nan<T: PartialEq>(a: &T) -> bool {
    a != a
}

/// The comparison for `descending` order.
#[inline]
fn directed<T: Element>(a: &T, b: &T, descending: bool) -> Ordering {
    if descending {
        nan_last(b, a)
    } else {
        nan_last(a, b)
    }
}

/// Sorts one lane in place.
fn sort_lane<T: Element>(v: &mut [T], descending: bool, stable: bool, par: bool) -> Result<()> {
    if let (Some(key), true) = (radix::key_fn::<T>(), radix::sorts_by_key(v.len())) {
        return radix::sort_by_key(v, key, descending, par);
    }
    let cmp = |a: &T, b: &T| directed(a, b, descending);
    // Equal integers (and bools) are indistinguishable: stability only matters for floats.
    let stable = stable && T::DTYPE.is_float();
    match (stable, par) {
        (true, true) => v.par_sort_by(cmp),
        (true, false) => v.sort_by(cmp),
        (false, true) => v.par_sort_unstable_by(cmp),
        (false, false) => v.sort_unstable_by(cmp),
    }
    Ok(())
}

/// Writes the stable sorting permutation of `v` into `idx`.
fn argsort_lane<T: Element>(v: &[T], idx: &mut [i64], descending: bool, par: bool) -> Result<()> {
    if let (Some(key), true) = (radix::key_fn::<T>(), v.len() >= radix::KEYED_MIN) {
        return radix::argsort(v, key, descending, idx);
    }
    let mut pairs: Vec<(T, i64)> = try_with_capacity(v.len())?;
    pairs.extend(v.iter().copied().zip(0i64..));
    let cmp = |a: &(T, i64), b: &(T, i64)| directed(&a.0, &b.0, descending).then(a.1.cmp(&b.1));
    if par {
        pairs.par_sort_unstable_by(cmp);
    } else {
        pairs.sort_unstable_by(cmp);
    }
    for (o, p) in idx.iter_mut().zip(&pairs) {
        *o = p.1;
    }
    Ok(())
}

/// Runs `f` on every lane pair (`src` lanes of `n` elements, `dst` lanes of `m`), on rayon's
/// pool when there are many lanes and enough work (from [`PAR_MIN_LANES`] elements); `f`
/// is told whether to parallelise within the lane instead.
pub(crate) fn for_lanes<A: Sync, B: Send>(
    src: &[A],
    n: usize,
    dst: &mut [B],
    m: usize,
    f: impl Fn(&[A], &mut [B], bool) -> Result<()> + Sync,
) -> Result<()> {
    for_lanes_from(PAR_MIN_LANES, src, n, dst, m, f)
}

/// [`for_lanes`] for a kernel whose cut-over is `min` elements ([`parallel_from`]).
pub(crate) fn for_lanes_from<A: Sync, B: Send>(
    min: usize,
    src: &[A],
    n: usize,
    dst: &mut [B],
    m: usize,
    f: impl Fn(&[A], &mut [B], bool) -> Result<()> + Sync,
) -> Result<()> {
    if dst.is_empty() {
        return Ok(());
    }
    let lanes = dst.len() / m;
    let big = parallel_from(src.len().max(dst.len()), min);
    let src_lane = |k: usize| &src[k * n..(k + 1) * n];
    if big && lanes >= crate::kernels::parallel::num_threads() {
        dst.par_chunks_mut(m)
            .enumerate()
            .try_for_each(|(k, d)| f(src_lane(k), d, false))
    } else {
        for (k, d) in dst.chunks_mut(m).enumerate() {
            f(src_lane(k), d, big)?;
        }
        Ok(())
    }
}

impl Tensor {
    /// The dense kernel of [`Tensor::sort`]: a sorted copy along `axis`.
    pub(crate) fn sort_dense(&self, axis: isize, descending: bool, stable: bool) -> Result<Tensor> {
        let l = Lanes::new(self, axis)?;
        let n = l.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&l.data, |src| {
                fill::<T>(&l.dims_with(n), |dst| {
                    let big = parallel(dst.len());
                    // One long lane: its first partition writes the copy.
                    if l.count == 1 && partition_copy::sort_copy(src, dst, descending, big) {
                        return Ok(());
                    }
                    // A short float lane without ties, or a short integer lane, sorts from
                    // `src` into `dst` in one pass; the others are copied and sorted in place.
                    let lane = |s: &[T], d: &mut [T], par: bool| {
                        if !descending && radix::sort_untied_into(s, d) {
                            return Ok(());
                        }
                        d.copy_from_slice(s);
                        sort_lane(d, descending, stable, par)
                    };
                    let w = n.max(1);
                    if big && l.count >= crate::kernels::parallel::num_threads() {
                        dst.par_chunks_mut(w)
                            .zip(src.par_chunks(w))
                            .try_for_each(|(d, s)| lane(s, d, false))
                    } else {
                        dst.chunks_mut(w).zip(src.chunks(w)).try_for_each(|(d, s)| lane(s, d, big))
                    }
                })
            })??
        });
        l.restore(out)
    }

    /// The dense kernel of [`Tensor::argsort`]: the int64 indices that sort along `axis`
    /// (stable).
    pub(crate) fn argsort_dense(&self, axis: isize, descending: bool) -> Result<Tensor> {
        let l = Lanes::new(self, axis)?;
        let n = l.len;
        let out = with_dtype!(self.dtype(), T => {
            read::<T, _>(&l.data, |src| {
                fill::<i64>(&l.dims_with(n), |dst| {
                    for_lanes(src, n, dst, n, |v, idx, par| argsort_lane(v, idx, descending, par))
                })
            })??
        });
        l.restore(out)
    }

    /// `g` scattered back through the sort of `self` along `axis`: `out[.., idx[j]] = g[.., j]`
    /// where `idx` is the stable `argsort` of `self` (the backward of `sort`).
    pub(crate) fn unsort_dense(&self, g: &Tensor, axis: isize, descending: bool) -> Result<Tensor> {
        let idx = Lanes::new(&self.argsort_dense(axis, descending)?, axis)?;
        let gl = Lanes::new(g, axis)?;
        let n = idx.len;
        let out = with_dtype!(g.dtype(), T => {
            read::<i64, _>(&idx.data, |ix| {
                read::<T, _>(&gl.data, |gv| {
                    fill::<T>(&idx.dims_with(n), |dst| {
                        for (k, d) in dst.chunks_mut(n.max(1)).enumerate() {
                            let lane = k * n..(k + 1) * n;
                            for (&i, &v) in ix[lane.clone()].iter().zip(&gv[lane]) {
                                d[i as usize] = v;
                            }
                        }
                        Ok(())
                    })
                })
            })???
        });
        idx.restore(out)
    }
}
