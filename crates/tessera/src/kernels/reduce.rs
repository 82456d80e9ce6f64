//! Reduction kernels (sum and product; max and min from `kernels/extreme.rs`, any, all and
//! the non-zero count from `kernels/truth.rs`) over any set of axes, built on [`Plan`].
//!
//! The plan's operand 0 is the *input* and operand 1 the accumulator buffer, which has
//! stride 0 on the reduced axes. Sorting by the input's strides makes the traversal follow
//! input memory order; the innermost run is then either
//! - a reduced axis (accumulator stride 0): the run is folded to one value (floats by
//!   pairwise summation, as NumPy) and combined into its accumulator, or
//! - a kept axis: the run is combined elementwise into a run of accumulators (a vectorised
//!   row update; summation along the reduced axes is then sequential, as in NumPy).
//!
//! Above [`PAR_MIN`] elements, when the output is small next to the input, the outermost
//! plan dim is split across threads, each with private accumulators, combined in order.

use crate::complex::{C128, C64};
use half::{bf16, f16};
use rayon::prelude::*;

use super::elementwise::PAR_MIN;
pub use super::extreme::{Bounded, Extreme, Max, Min};
use super::plan::Plan;
use super::reducer::lanes;
pub use super::reducer::Reducer;
use super::scalar_math::{convert, Arith};
use super::simd::{ASK_AHEAD, STREAM_BYTES};
pub use super::truth::{All, Any, CountNonzero};
use crate::dtype::Element;
use crate::error::{ErrorKind, Result};
use crate::storage::{checked_numel, try_vec, try_with_capacity};

/// The accumulator type of a sum: `i64` for bool and signed integers, `u64` for unsigned
/// integers (both wrap, as NumPy's), `f32` for `f16`/`bf16`/`f32`, `f64` for `f64`.
pub trait SumAcc: Element {
    /// Accumulator type.
    type Acc: Arith;
}
macro_rules! sum_acc {
    ($($t:ty => $a:ty),*) => {$( impl SumAcc for $t { type Acc = $a; } )*};
}
sum_acc!(bool => i64, u8 => u64, i8 => i64, u16 => u64, i16 => i64, u32 => u64, i32 => i64,
    u64 => u64, i64 => i64,
    f16 => f32, bf16 => f32, f32 => f32, f64 => f64, C64 => C64, C128 => C128);

/// Summation with pairwise folding of runs.
pub struct Sum;

impl<T: SumAcc> Reducer<T> for Sum {
    type Acc = T::Acc;
    fn identity(&self) -> T::Acc {
        T::Acc::default()
    }
    fn combine(&self, a: T::Acc, b: T::Acc) -> T::Acc {
        a.add(b)
    }
    fn lift(&self, x: T) -> T::Acc {
        convert(x)
    }
    #[inline(always)]
    fn fold_run(&self, data: &[T], off: isize, n: usize, stride: isize) -> T::Acc {
        if stride == 1 {
            sum_run::<T, false>(&data[off as usize..off as usize + n])
        } else {
            pairwise(n, |s, l| {
                let mut acc = T::Acc::default();
                for i in s..s + l {
                    acc = acc.add(convert(data[(off + i as isize * stride) as usize]));
                }
                acc
            })
        }
    }
    #[inline(always)]
    fn fold_run_ahead(&self, data: &[T], off: usize, n: usize) -> T::Acc {
        sum_run::<T, true>(&data[off..off + n])
    }
}

/// The pairwise sum of a contiguous run ([`Sum`]); `AHEAD` asks for the lines ahead as it
/// goes (a run streamed from memory), with the same additions in the same order.
#[inline(always)]
fn sum_run<T: SumAcc, const AHEAD: bool>(run: &[T]) -> T::Acc {
    pairwise(run.len(), |s, l| {
        lanes::<_, _, AHEAD>(
            &run[s..s + l],
            T::Acc::default(),
            |a, x| a.add(convert(x)),
            Arith::add,
        )
    })
}

/// Product, the runs folded in 16 interleaved partial products (NumPy's SIMD loops
/// reorder products too); accumulated as [`Sum`] is (`f16`/`bf16` in `f32`, integers in
/// 64 bits, wrapping).
pub struct Prod;

impl<T: SumAcc> Reducer<T> for Prod {
    type Acc = T::Acc;
    fn identity(&self) -> T::Acc {
        T::Acc::from_i64(1)
    }
    fn combine(&self, a: T::Acc, b: T::Acc) -> T::Acc {
        a.mul(b)
    }
    fn lift(&self, x: T) -> T::Acc {
        convert(x)
    }
    #[inline(always)]
    fn fold_run(&self, data: &[T], off: isize, n: usize, stride: isize) -> T::Acc {
        let one = T::Acc::from_i64(1);
        if stride == 1 {
            prod_run::<T, false>(&data[off as usize..off as usize + n])
        } else {
            (0..n as isize).fold(one, |a, i| {
                a.mul(convert(data[(off + i * stride) as usize]))
            })
        }
    }
    #[inline(always)]
    fn fold_run_ahead(&self, data: &[T], off: usize, n: usize) -> T::Acc {
        prod_run::<T, true>(&data[off..off + n])
    }
}

/// The product of a contiguous run ([`Prod`]) in lanes; `AHEAD` as for [`sum_run`].
#[inline(always)]
fn prod_run<T: SumAcc, const AHEAD: bool>(run: &[T]) -> T::Acc {
    let one = T::Acc::from_i64(1);
    lanes::<_, _, AHEAD>(run, one, |a, x| a.mul(convert(x)), Arith::mul)
}

/// Elements per block of a pairwise sum; each block is summed in 16 interleaved
/// partial sums (16 sequential additions each, as NumPy's 8 lanes over blocks of 128).
const BLOCK: usize = 256;

/// The sum of `leaf(start, len)` over blocks of [`BLOCK`] elements covering `0..n`, the
/// block sums added as a balanced binary tree (a binary counter over a stack of partial
/// sums): the rounding error grows like O(log n) rather than O(n).
#[inline(always)]
fn pairwise<A: Arith>(n: usize, leaf: impl Fn(usize, usize) -> A) -> A {
    let mut stack = [A::default(); usize::BITS as usize];
    let mut top = 0;
    for (b, start) in (0..n).step_by(BLOCK).enumerate() {
        let mut s = leaf(start, BLOCK.min(n - start));
        let mut k = b;
        while k & 1 == 1 {
            top -= 1;
            s = stack[top].add(s);
            k >>= 1;
        }
        stack[top] = s;
        top += 1;
    }
    (0..top)
        .rev()
        .fold(A::default(), |acc, i| stack[i].add(acc))
}

/// Reduces `data` seen through (`dims`, `strides`, `offset`) over the dims where
/// `reduced[d]` is true. Returns one accumulator per kept index, row-major over the kept
/// dims (the identity where nothing was reduced).
pub fn reduce<T: Element, R: Reducer<T>>(
    data: &[T],
    dims: &[usize],
    strides: &[isize],
    offset: usize,
    reduced: &[bool],
    r: &R,
) -> Result<Vec<R::Acc>> {
    // A dim the input broadcasts (stride 0, size n > 1) is reduced at size 1 first. Kept, it
    // holds the same results at every index: repeat them n times (`t.max(axis=1)` of a
    // broadcast row reduces the row once, not once per copy). Reduced, it adds the same
    // partial results n times: combine them n times by doubling (O(log n) passes and
    // roundings, like a pairwise sum; exact for max/min and for integers, which wrap as
    // repeated additions do).
    if let Some(d) = (0..dims.len()).find(|&d| strides[d] == 0 && dims[d] > 1) {
        let mut once = dims.to_vec();
        once[d] = 1;
        let part = reduce(data, &once, strides, offset, reduced, r)?;
        return if reduced[d] {
            combine_times(part, dims[d], r)
        } else {
            repeat_along(part, dims, reduced, d)
        };
    }
    let mut acc_strides = vec![0isize; dims.len()];
    let mut out_n = 1usize;
    for d in (0..dims.len()).rev() {
        if !reduced[d] {
            acc_strides[d] = isize::try_from(out_n)
                .map_err(|_| ErrorKind::ShapeOverflow(format!("{dims:?} kept by a reduction")))?;
            out_n = checked_numel(&[out_n, dims[d]])?;
        }
    }
    // Sized by the kept dims of a possibly broadcast view: fallible (an error, not an abort).
    let mut acc = try_vec(r.identity(), out_n)?;
    let plan = Plan::new(dims, [strides, &acc_strides], [offset, 0]);
    if plan.numel == 0 {
        return Ok(acc);
    }
    // An input past the caches streams from memory (each thread's part too).
    let ahead = plan.numel.saturating_mul(std::mem::size_of::<T>()) >= STREAM_BYTES;
    let threads = super::parallel::num_threads();
    if plan.numel >= super::parallel::cut_over(PAR_MIN)
        && super::parallel::enabled()
        && out_n * 8 <= plan.numel
        && plan.dims[0] > 1
    {
        let d0 = plan.dims[0];
        let chunk = d0.div_ceil(2 * threads);
        let partials: Vec<Vec<R::Acc>> = (0..d0.div_ceil(chunk))
            .into_par_iter()
            .map(|c| -> Result<Vec<R::Acc>> {
                let (lo, hi) = (c * chunk, ((c + 1) * chunk).min(d0));
                let mut sub = plan.clone();
                sub.dims[0] = hi - lo;
                sub.numel = plan.numel / d0 * (hi - lo);
                for k in 0..2 {
                    sub.offsets[k] += lo as isize * plan.strides[k][0];
                }
                let mut part = try_vec(r.identity(), out_n)?;
                run_plan(data, &sub, &mut part, r, ahead);
                Ok(part)
            })
            .collect::<Result<_>>()?;
        for part in partials {
            for (a, p) in acc.iter_mut().zip(part) {
                *a = r.combine(*a, p);
            }
        }
    } else {
        run_plan(data, &plan, &mut acc, r, ahead);
    }
    Ok(acc)
}

/// Each accumulator of `base` combined with itself `times` times, by doubling.
fn combine_times<T: Element, R: Reducer<T>>(
    mut base: Vec<R::Acc>,
    times: usize,
    r: &R,
) -> Result<Vec<R::Acc>> {
    let mut acc = try_vec(r.identity(), base.len())?;
    let mut k = times;
    while k > 0 {
        if k & 1 == 1 {
            acc.iter_mut()
                .zip(&base)
                .for_each(|(a, &b)| *a = r.combine(*a, b));
        }
        k >>= 1;
        if k > 0 {
            base.iter_mut().for_each(|b| *b = r.combine(*b, *b));
        }
    }
    Ok(acc)
}

/// The accumulators of a reduction whose kept dim `d` was reduced at size 1 (`part`),
/// repeated `dims[d]` times along it, in the row-major order of the kept dims.
fn repeat_along<A: Copy>(
    part: Vec<A>,
    dims: &[usize],
    reduced: &[bool],
    d: usize,
) -> Result<Vec<A>> {
    let kept = |range: std::ops::Range<usize>| -> usize {
        range.filter(|&k| !reduced[k]).map(|k| dims[k]).product()
    };
    // `part` is [outer][inner] with the kept dims before and after `d`.
    let (outer, inner, times) = (kept(0..d), kept(d + 1..dims.len()), dims[d]);
    let mut out = try_with_capacity(checked_numel(&[part.len(), times])?)?;
    for o in 0..outer {
        let row = &part[o * inner..(o + 1) * inner];
        for _ in 0..times {
            out.extend_from_slice(row);
        }
    }
    Ok(out)
}

/// The serial traversal of one (sub-)plan into `acc`.
/// With `ahead` (an input past the caches), the rows of reducers that gain from it
/// (`Reducer::ROWS_ASK_AHEAD`) ask for their lines ahead, and with `simd::ASK_AHEAD` on, the
/// runs and every reducer's rows do.
fn run_plan<T: Element, R: Reducer<T>>(
    data: &[T],
    plan: &Plan<2>,
    acc: &mut [R::Acc],
    r: &R,
    ahead: bool,
) {
    let n = plan.inner_len();
    let (si, so) = (plan.inner_stride(0), plan.inner_stride(1));
    plan.for_each_run(0..plan.runs(), |o| {
        run_one_simd(data, n, (si, so, ahead), o, acc, r)
    });
}

/// [`run_one`] compiled for AVX2 and FMA when the CPU has them. A `#[target_feature]` function
/// into which `run_one` is inlined by force, rather than a `with_simd` closure: that closure
/// has two call sites (the AVX2 copy and the fallback), so LLVM's inliner weighs its size,
/// and on 2026-12-03 it left every instance out of line, compiled for SSE2 alone: `min` of a
/// 256 x 256 `int64` ran a scalar compare-and-move loop at 3.0 NumPy's time, `all(axis=0)`
/// of `f64` 2.0, `sum` of 16 Mi `f32` 1.08 (0.68 the day before). Forced inlining does not
/// depend on that weighing.
#[inline(always)]
fn run_one_simd<T: Element, R: Reducer<T>>(
    data: &[T],
    n: usize,
    s: (isize, isize, bool),
    o: [isize; 2],
    acc: &mut [R::Acc],
    r: &R,
) {
    /// [`run_one`] compiled for AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn avx2<T: Element, R: Reducer<T>>(
        data: &[T],
        n: usize,
        s: (isize, isize, bool),
        o: [isize; 2],
        acc: &mut [R::Acc],
        r: &R,
    ) {
        run_one(data, n, s, o, acc, r)
    }
    #[cfg(target_arch = "x86_64")]
    if super::simd::has_avx2() {
        // SAFETY: `avx2` only needs the features `has_avx2` has just confirmed.
        return unsafe { avx2(data, n, s, o, acc, r) };
    }
    run_one(data, n, s, o, acc, r)
}

/// One run of [`run_plan`], from input offset `o[0]` and accumulator offset `o[1]`.
#[inline(always)]
fn run_one<T: Element, R: Reducer<T>>(
    data: &[T],
    n: usize,
    (si, so, ahead): (isize, isize, bool),
    o: [isize; 2],
    acc: &mut [R::Acc],
    r: &R,
) {
    let (oi, oo) = (o[0], o[1] as usize);
    if so == 0 {
        let folded = if ahead && ASK_AHEAD && si == 1 {
            r.fold_run_ahead(data, oi as usize, n)
        } else {
            r.fold_run(data, oi, n, si)
        };
        acc[oo] = r.combine(acc[oo], folded);
    } else if so == 1 && si == 1 {
        let (acc, src) = (&mut acc[oo..oo + n], &data[oi as usize..oi as usize + n]);
        if ahead && R::ROWS_ASK_AHEAD {
            r.combine_row_ahead(acc, src)
        } else {
            r.combine_row(acc, src)
        }
    } else {
        for i in 0..n as isize {
            let a = &mut acc[(oo as isize + i * so) as usize];
            *a = r.combine(*a, r.lift(data[(oi + i * si) as usize]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_is_accurate() {
        // 1e6 copies of 0.1f32: naive f32 accumulation drifts by ~1%; pairwise stays close.
        let v = vec![0.1f32; 1_000_000];
        let s = reduce(&v, &[v.len()], &[1], 0, &[true], &Sum).unwrap()[0];
        assert!((s - 100_000.0).abs() < 1.0, "{s}");
    }

    /// Naive reference: every output element folds its inputs in index order.
    fn naive_sum(data: &[f64], dims: &[usize], strides: &[isize], reduced: &[bool]) -> Vec<f64> {
        let kept: Vec<usize> = (0..dims.len()).filter(|&d| !reduced[d]).collect();
        let out_n: usize = kept.iter().map(|&d| dims[d]).product();
        let mut out = vec![0.0; out_n];
        let n: usize = dims.iter().product();
        for lin in 0..n {
            let (mut rem, mut off, mut o) = (lin, 0isize, 0usize);
            let mut idx = vec![0; dims.len()];
            for d in (0..dims.len()).rev() {
                idx[d] = rem % dims[d];
                rem /= dims[d];
                off += idx[d] as isize * strides[d];
            }
            for &d in &kept {
                o = o * dims[d] + idx[d];
            }
            out[o] += data[off as usize];
        }
        out
    }

    #[test]
    fn kept_broadcast_dims_reduce_once_and_repeat() {
        let data: Vec<f64> = (0..60).map(|x| (x * 7 % 13) as f64).collect();
        // (dims, strides, reduced): stride-0 kept dims first, last, in the middle, twice.
        let cases: [(&[usize], &[isize], &[bool]); 10] = [
            (&[4, 5], &[0, 1], &[false, true]),
            (&[5, 4], &[1, 0], &[true, false]),
            (&[3, 4, 5], &[0, 5, 1], &[false, true, false]),
            (&[3, 4, 5], &[0, 0, 1], &[false, false, true]),
            (&[2, 3, 4, 5], &[0, 20, 0, 1], &[false, true, false, true]),
            // Reduced stride-0 dims (combined by doubling): 1, 2, 5, 7 and 64 copies.
            (&[7, 5], &[0, 1], &[true, true]),
            (&[2, 5], &[0, 1], &[true, false]),
            (&[5, 3, 4], &[0, 0, 1], &[true, true, false]),
            (&[64, 1, 3], &[0, 0, 1], &[true, false, false]),
            (&[3, 5, 4], &[0, 1, 0], &[false, true, true]),
        ];
        for (dims, strides, reduced) in cases {
            let got = reduce(&data, dims, strides, 0, reduced, &Sum).unwrap();
            assert_eq!(
                got,
                naive_sum(&data, dims, strides, reduced),
                "{dims:?} {strides:?}"
            );
        }
        let got = reduce(&data, &[4, 5], &[0, 1], 0, &[false, true], &Extreme::<true>).unwrap();
        assert_eq!(got, vec![8.0; 4]); // max of 0, 7, 1, 8, 2
    }

    #[test]
    fn axes_in_any_order_and_parallel() {
        // [64, 3, 3072] (above PAR_MIN elements) summed over axes 0 and 2, input transposed in
        // memory.
        let (a, b, c) = (64usize, 3usize, 3072usize);
        assert!(a * b * c >= PAR_MIN);
        let data: Vec<i64> = (0..(a * b * c) as i64).collect();
        // Memory layout [c, b, a] contiguous; view dims [a, b, c].
        let strides = [1isize, a as isize, (a * b) as isize];
        let got = reduce(&data, &[a, b, c], &strides, 0, &[true, false, true], &Sum).unwrap();
        for (j, g) in got.iter().enumerate() {
            let mut want = 0i64;
            for i in 0..a {
                for k in 0..c {
                    want += data[i + j * a + k * a * b];
                }
            }
            assert_eq!(*g, want);
        }
        let m = reduce(
            &data,
            &[a, b, c],
            &strides,
            0,
            &[false, true, false],
            &Extreme::<true>,
        )
        .unwrap();
        assert_eq!(m.len(), a * c);
        assert_eq!(m[0], data[2 * a]);
    }

    #[test]
    fn inputs_past_the_caches_take_the_streaming_loops_with_the_same_results() {
        // 1024 x 1024 f64 (8 MiB, past `STREAM_BYTES`), integers in f64 so that sums are
        // exact in any order; one NaN at (700, 3).
        let (r, c) = (1024usize, 1024usize);
        assert!(r * c * 8 >= STREAM_BYTES);
        let mut data: Vec<f64> = (0..r * c)
            .map(|i| ((i * 37) % 1001) as f64 - 500.0)
            .collect();
        let strides = [c as isize, 1];
        let sums = reduce(&data, &[r, c], &strides, 0, &[true, false], &Sum).unwrap();
        let want = naive_sum(&data, &[r, c], &strides, &[true, false]);
        assert_eq!(sums, want);
        let total = reduce(&data, &[r, c], &strides, 0, &[true, true], &Sum).unwrap();
        assert_eq!(total, vec![want.iter().sum::<f64>()]);
        let top = data.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            reduce(&data, &[r, c], &strides, 0, &[true, true], &Extreme::<true>).unwrap(),
            vec![top]
        );
        data[700 * c + 3] = f64::NAN;
        let low = reduce(
            &data,
            &[r, c],
            &strides,
            0,
            &[true, false],
            &Extreme::<false>,
        )
        .unwrap();
        for (j, &m) in low.iter().enumerate() {
            let want = (0..r)
                .map(|i| data[i * c + j])
                .fold(f64::INFINITY, f64::min);
            assert!(
                if j == 3 { m.is_nan() } else { m == want },
                "column {j}: {m}"
            );
        }
        assert!(
            reduce(&data, &[r, c], &strides, 0, &[true, true], &Extreme::<true>).unwrap()[0]
                .is_nan()
        );
    }

    #[test]
    fn row_updates_and_lane_folds_cover_every_element() {
        // Lengths around the 16-element steps of the lane fold and the 64-element pieces of
        // the streaming loops (`*_ahead`, which ask for the lines ahead), plain and streamed,
        // against the elementwise and sequential folds. Integers: every order gives the same.
        for n in (0..70usize).chain([200, 255, 256, 257]) {
            let src: Vec<i64> = (0..n as i64).map(|i| i * 7 % 11 - 5).collect();
            let mut acc: Vec<i64> = (0..n as i64).map(|i| i % 3 + 1).collect();
            let want_sum: Vec<i64> = acc.iter().zip(&src).map(|(a, x)| a + x).collect();
            let want_prod: Vec<i64> = want_sum.iter().zip(&src).map(|(a, x)| a * x).collect();
            let mut ahead = acc.clone();
            Reducer::<i64>::combine_row(&Sum, &mut acc, &src);
            assert_eq!(acc, want_sum, "sum row of {n}");
            Reducer::<i64>::combine_row(&Prod, &mut acc, &src);
            assert_eq!(acc, want_prod, "product row of {n}");
            Reducer::<i64>::combine_row_ahead(&Sum, &mut ahead, &src);
            assert_eq!(ahead, want_sum, "streamed sum row of {n}");
            Reducer::<i64>::combine_row_ahead(&Prod, &mut ahead, &src);
            assert_eq!(ahead, want_prod, "streamed product row of {n}");
            let product: i64 = src.iter().product();
            assert_eq!(Reducer::<i64>::fold_run(&Prod, &src, 0, n, 1), product);
            assert_eq!(Reducer::<i64>::fold_run_ahead(&Prod, &src, 0, n), product);
            let total: i64 = src.iter().sum();
            assert_eq!(Reducer::<i64>::fold_run_ahead(&Sum, &src, 0, n), total);
            let most = src.iter().copied().max().unwrap_or(i64::MIN);
            assert_eq!(
                Reducer::<i64>::fold_run_ahead(&Extreme::<true>, &src, 0, n),
                most
            );
        }
    }
}
