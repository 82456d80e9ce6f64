//! The one strided-copy kernel behind every materialisation (docs/design.md §1): `contiguous`, `copy`,
//! `to_vec`, expand materialisation, `repeat`/`tile`, `assign` and `fill_`.
//!
//! The caller plans the copy with [`Plan<2>`] (operand 0 = destination, operand 1 = source);
//! this module picks the inner loop from the simplified plan:
//!
//! - both inner strides 1: `copy_from_slice` (memcpy), or for copies larger than the cache a
//!   streaming copy (non-temporal stores, source prefetched across runs; see [`super::stream`]);
//! - source inner stride 0: `fill` (broadcast fill);
//! - destination inner stride 1, source inner stride -1: a reversed copy (flip);
//! - destination inner stride 1, source stride 1 on the next-outer dim: a cache-blocked
//!   transpose of [`TILE`]×[`TILE`] tiles (see [`super::transpose`]);
//! - otherwise a strided gather/scatter.
//!
//! Large copies run in parallel with rayon: the plan is split along its outermost dim when the
//! destination parts of the halves are disjoint, ordered intervals, so the destination slice is
//! split with `split_at_mut` and no `unsafe` is needed.

use super::elementwise::PAR_MIN;
use super::plan::Plan;
use super::stream::{should_stream, StreamCopy};
use super::transpose::{is_transpose, transpose_slabs, TILE};
use crate::dtype::Element;
use crate::error::Result;
use crate::shape::contiguous_strides;

/// Parallel pieces are not split below this many elements.
const GRAIN: usize = 1 << 15;

/// Plans a copy from a strided source into the C-contiguous `dst` of shape `dims`.
pub(crate) fn contiguous_plan(
    dims: &[usize],
    src_strides: &[isize],
    src_offset: usize,
) -> Result<Plan<2>> {
    let dst_strides = contiguous_strides(dims)?;
    Ok(Plan::new(
        dims,
        [&dst_strides, src_strides],
        [0, src_offset],
    ))
}

/// Copies `src` into `dst` along `plan` (operand 0 = `dst`, operand 1 = `src`).
///
/// The plan's destination must not overlap itself (no two iteration points with the same
/// destination offset; callers reject stride 0 on dims of size > 1). Offsets must lie inside
/// the slices (they come from bounds-checked layouts); a violation panics, never corrupts.
pub(crate) fn copy_strided<T: Element>(plan: &Plan<2>, dst: &mut [T], src: &[T]) {
    if plan.numel == 0 {
        return;
    }
    let item = std::mem::size_of::<T>();
    let stream = (plan.inner_stride(0), plan.inner_stride(1)) == (1, 1)
        && should_stream(plan.numel * item, plan.inner_len() * item);
    // Copies go parallel from the elementwise drivers' measured cut-over (docs/design.md P3:
    // a copy costs what `a.T + a.T` costs there; at 64 Ki elements a transposing copy took
    // 31 us on one thread and 45 on two when the pool had gone to sleep between calls).
    if plan.numel >= super::parallel::cut_over(PAR_MIN) && super::parallel::enabled() {
        copy_par(plan.clone(), dst, src, stream);
    } else {
        copy_seq(plan, dst, src, stream);
    }
}

/// Recursively halves the plan along its outermost dim and copies the halves with
/// `rayon::join`; `plan.offsets[0]` is relative to `dst`.
fn copy_par<T: Element>(plan: Plan<2>, dst: &mut [T], src: &[T], stream: bool) {
    let mid = match split_point(&plan) {
        Some(mid) if plan.numel > GRAIN => mid,
        _ => return copy_seq(&plan, dst, src, stream),
    };
    let n0 = plan.dims[0];
    let (ds0, ss0) = (plan.strides[0][0], plan.strides[1][0]);
    let at = (plan.offsets[0] + mid as isize * ds0) as usize;
    let mut lo = plan.clone();
    lo.dims[0] = mid;
    lo.numel = plan.numel / n0 * mid;
    let mut hi = plan;
    hi.dims[0] = n0 - mid;
    hi.numel -= lo.numel;
    hi.offsets[0] = 0;
    hi.offsets[1] += mid as isize * ss0;
    // Every destination offset of `lo` is < `at` and every one of `hi` is >= `at`
    // (`split_point` checked the outer stride exceeds the span of the inner dims).
    let (a, b) = dst.split_at_mut(at);
    rayon::join(
        || copy_par(lo, a, src, stream),
        || copy_par(hi, b, src, stream),
    );
}

/// Where to halve the outermost dim, if the destination parts of the halves are disjoint,
/// ordered intervals: the outer destination stride exceeds the reach of all inner dims
/// (destination strides are >= 0 after planning).
fn split_point(plan: &Plan<2>) -> Option<usize> {
    let n0 = *plan.dims.first()?;
    let ds = &plan.strides[0];
    let inner_reach: isize = plan.dims[1..]
        .iter()
        .zip(&ds[1..])
        .map(|(&d, &s)| (d as isize - 1) * s)
        .sum();
    if n0 < 2 || ds[0] <= inner_reach {
        return None;
    }
    let mid = if plan.rank() == 2 && is_transpose(plan) {
        // Keep whole tile rows in each half.
        n0 / 2 / TILE * TILE
    } else {
        n0 / 2
    };
    (mid > 0).then_some(mid)
}

/// Single-threaded copy: the blocked transpose, a streaming copy of contiguous runs (when
/// `stream`, decided on the whole copy), or one inner loop per run.
fn copy_seq<T: Element>(plan: &Plan<2>, dst: &mut [T], src: &[T], stream: bool) {
    if plan.numel == 0 {
        return;
    }
    if is_transpose(plan) {
        return transpose_slabs(plan, dst, src);
    }
    let n = plan.inner_len();
    let (ds, ss) = (plan.inner_stride(0) as usize, plan.inner_stride(1));
    if stream && (ds, ss) == (1, 1) {
        let mut copy = StreamCopy::new(dst, src, true);
        plan.for_each_run(0..plan.runs(), |[d, s]| copy.run(d as usize, s as usize, n));
        return copy.finish();
    }
    plan.for_each_run(0..plan.runs(), |[d, s]| {
        copy_run(dst, d as usize, ds, src, s as usize, ss, n)
    });
}

/// One run of `n` elements: `dst[d + i*ds] = src[s + i*ss]` for `i < n`.
#[inline]
fn copy_run<T: Element>(
    dst: &mut [T],
    d: usize,
    ds: usize,
    src: &[T],
    s: usize,
    ss: isize,
    n: usize,
) {
    if n == 1 {
        dst[d] = src[s];
        return;
    }
    let dst_run = &mut dst[d..=d + (n - 1) * ds];
    match (ds, ss) {
        (1, 1) => dst_run.copy_from_slice(&src[s..s + n]),
        (1, 0) => dst_run.fill(src[s]),
        (1, -1) => {
            for (x, y) in dst_run.iter_mut().zip(src[s + 1 - n..=s].iter().rev()) {
                *x = *y;
            }
        }
        (_, 0) => dst_run.iter_mut().step_by(ds).for_each(|x| *x = src[s]),
        _ => {
            let dst_it = dst_run.iter_mut().step_by(ds);
            let step = ss.unsigned_abs();
            if ss > 0 {
                zip_copy(dst_it, src[s..=s + (n - 1) * step].iter().step_by(step));
            } else {
                zip_copy(
                    dst_it,
                    src[s - (n - 1) * step..=s].iter().rev().step_by(step),
                );
            }
        }
    }
}

#[inline]
fn zip_copy<'a, 'b, T: Element>(
    dst: impl Iterator<Item = &'a mut T>,
    src: impl Iterator<Item = &'b T>,
) {
    for (x, y) in dst.zip(src) {
        *x = *y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Naive reference: element by element, index arithmetic only.
    fn naive(dims: &[usize], s: [&[isize]; 2], o: [usize; 2], dst: &mut [i64], src: &[i64]) {
        let n: usize = dims.iter().product();
        for lin in 0..n {
            let (mut rem, mut a, mut b) = (lin, o[0] as isize, o[1] as isize);
            for i in (0..dims.len()).rev() {
                let x = (rem % dims[i]) as isize;
                rem /= dims[i];
                a += x * s[0][i];
                b += x * s[1][i];
            }
            dst[a as usize] = src[b as usize];
        }
    }

    fn check(dims: &[usize], s: [&[isize]; 2], o: [usize; 2], dst_len: usize) {
        let src: Vec<i64> = (0..4096).collect();
        let mut want = vec![-1i64; dst_len];
        naive(dims, s, o, &mut want, &src);
        let mut got = vec![-1i64; dst_len];
        let plan = Plan::new(dims, s, o);
        copy_strided(&plan, &mut got, &src);
        assert_eq!(got, want, "{dims:?} {s:?} {o:?}");
        // The sequential path gives the same result.
        for stream in [false, true] {
            let mut seq = vec![-1i64; dst_len];
            copy_seq(&plan, &mut seq, &src, stream);
            assert_eq!(seq, want);
        }
    }

    #[test]
    fn every_inner_loop_matches_the_naive_copy() {
        check(&[], [&[], &[]], [3, 7], 5); // rank 0
        check(&[0, 4], [&[4, 1], &[4, 1]], [0, 0], 4); // empty
        check(&[3, 5], [&[5, 1], &[5, 1]], [0, 2], 15); // memcpy
        check(&[3, 5], [&[5, 1], &[1, 0]], [0, 2], 15); // fill
        check(&[3, 5], [&[5, 1], &[5, -1]], [0, 14], 15); // flip
        check(&[3, 5], [&[5, 1], &[2, 7]], [0, 0], 15); // gather
        check(&[3, 5], [&[10, 2], &[0, 3]], [1, 0], 30); // scatter, gather
        check(&[3, 5], [&[-10, -2], &[0, 0]], [29, 9], 30); // negative dst, fill
        check(&[40, 70], [&[70, 1], &[1, 40]], [0, 0], 2800); // transpose
        check(&[40, 70], [&[70, 1], &[1, -40]], [0, 2760], 2800); // transpose, flipped
        check(&[40, 70], [&[70, 1], &[-1, 40]], [0, 39], 2800); // transpose of a flip
        check(&[40, 70], [&[70, 1], &[-1, -40]], [0, 2799], 2800); // both flipped
        check(&[67, 45], [&[45, 1], &[-1, 67]], [0, 66], 3015); // edge tiles
        let batch_of_flips: [&[isize]; 2] = [&[1155, 35, 1], &[1155, -1, 33]];
        check(&[2, 33, 35], batch_of_flips, [0, 32], 2310);
        check(&[3, 33, 35], [&[1155, 35, 1], &[1, 105, 3]], [0, 0], 3465); // batched
    }

    #[test]
    #[cfg_attr(miri, ignore = "copies past 8 MiB are too slow to interpret")]
    fn a_copy_larger_than_the_cache_streams_and_matches() {
        // The right half of a [1024, 2048] i64 matrix: 8 MiB in 8 KiB runs, so it streams.
        let (r, c) = (1024usize, 2048usize);
        assert!(should_stream(r * c / 2 * 8, c / 2 * 8));
        let src: Vec<i64> = (0..(r * c) as i64).collect();
        let plan = Plan::new(
            &[r, c / 2],
            [&[c as isize / 2, 1], &[c as isize, 1]],
            [0, c / 2],
        );
        let mut got = vec![-1i64; r * c / 2];
        copy_strided(&plan, &mut got, &src);
        let want: Vec<i64> = src
            .chunks(c)
            .flat_map(|row| row[c / 2..].to_vec())
            .collect();
        assert!(got == want);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "large enough to split across threads: too slow to interpret"
    )]
    fn parallel_split_matches_the_naive_copy() {
        // Large enough for the parallel path: dense, strided destination and transpose.
        let (r, c) = (300usize, 260usize);
        let src: Vec<i64> = (0..(r * c * 2) as i64).collect();
        let cases: [([isize; 2], [isize; 2], usize); 4] = [
            ([c as isize, 1], [1, r as isize], r * c),
            ([2 * c as isize, 2], [c as isize, 1], 2 * r * c),
            ([c as isize, 1], [c as isize, -1], r * c),
            ([c as isize, 1], [0, 1], r * c),
        ];
        for (ds, ss, len) in cases {
            let o = [0, if ss[1] < 0 { c - 1 } else { 0 }];
            let mut want = vec![-1i64; len];
            naive(&[r, c], [&ds, &ss], o, &mut want, &src);
            let mut got = vec![-1i64; len];
            copy_strided(&Plan::new(&[r, c], [&ds, &ss], o), &mut got, &src);
            assert_eq!(got, want, "{ds:?} {ss:?}");
        }
    }
}
