//! The NaN-propagating maximum and minimum reducer ([`Extreme`]; [`Max`], [`Min`]) of
//! [`super::reduce`]: a run folded in lanes (horizontal), and a row combined into a row of
//! accumulators (vertical, a reduction over an outer axis), both with plain comparisons and
//! a separate NaN flag for `f32` and `f64`, the form the compiler vectorises.

use half::{bf16, f16};

use super::reducer::{lanes, Reducer, LANES};
use super::scalar_math::Arith;
use super::simd::{prefetch_ahead, zip_ahead};
use crate::complex::{C128, C64};
use crate::dtype::Element;

/// The extreme values of a type: the identities of `max` (`LOWEST`) and `min` (`HIGHEST`).
pub trait Bounded: Element {
    /// The lowest value (`-inf` for floats).
    const LOWEST: Self;
    /// The highest value (`+inf` for floats).
    const HIGHEST: Self;
    /// The NaN-propagating maximum (`MAX`) or minimum of a contiguous run (the identity
    /// when empty), folded in 16 independent lanes; `f32` and `f64` fold in plain
    /// comparisons with a separate NaN flag, which vectorises better.
    #[inline(always)]
    fn run_extreme<const MAX: bool>(xs: &[Self]) -> Self
    where
        Self: Arith,
    {
        lanes::<_, _, false>(
            xs,
            extreme_id::<Self, MAX>(),
            extreme::<Self, MAX>,
            extreme::<Self, MAX>,
        )
    }
    /// `acc[i]` = the NaN-propagating maximum (`MAX`) or minimum of `acc[i]` and `src[i]`;
    /// `f32` and `f64` use a plain comparison and a separate NaN flag, as `run_extreme`.
    #[inline(always)]
    fn row_extreme<const MAX: bool>(acc: &mut [Self], src: &[Self])
    where
        Self: Arith,
    {
        for (a, &x) in acc.iter_mut().zip(src) {
            *a = extreme::<Self, MAX>(*a, x);
        }
    }
    /// [`Bounded::run_extreme`] of a run streamed from memory (`simd::STREAM_BYTES`): floats
    /// ask for the lines ahead as they go; by default the plain fold.
    #[inline(always)]
    fn run_extreme_ahead<const MAX: bool>(xs: &[Self]) -> Self
    where
        Self: Arith,
    {
        Self::run_extreme::<MAX>(xs)
    }
    /// [`Bounded::row_extreme`] of a row streamed from memory, as `run_extreme_ahead`.
    #[inline(always)]
    fn row_extreme_ahead<const MAX: bool>(acc: &mut [Self], src: &[Self])
    where
        Self: Arith,
    {
        row_widest::<Self, MAX>(acc, src)
    }
}

/// `maximum` (`MAX`) or `minimum`, NaN-propagating.
#[inline(always)]
fn extreme<T: Arith, const MAX: bool>(a: T, b: T) -> T {
    if MAX {
        a.maximum(b)
    } else {
        a.minimum(b)
    }
}

/// The identity of [`extreme`]: `LOWEST` for the maximum, `HIGHEST` for the minimum.
fn extreme_id<T: Bounded, const MAX: bool>() -> T {
    if MAX {
        T::LOWEST
    } else {
        T::HIGHEST
    }
}
macro_rules! bounded {
    ($($t:ty => $lo:expr, $hi:expr);*) => {$(
        impl Bounded for $t { const LOWEST: Self = $lo; const HIGHEST: Self = $hi; }
    )*};
}
macro_rules! bounded_float {
    ($($t:ident),*) => {$(
        impl Bounded for $t {
            const LOWEST: Self = $t::NEG_INFINITY;
            const HIGHEST: Self = $t::INFINITY;
            #[inline(always)]
            fn run_extreme<const MAX: bool>(xs: &[Self]) -> Self {
                let id = extreme_id::<$t, MAX>();
                #[cfg(target_arch = "x86_64")]
                if xs.len() >= WIDE_MIN && super::simd::has_avx512() {
                    // SAFETY: the CPU has the instruction sets `wide_extreme` is compiled
                    // for (just checked).
                    return unsafe { wide_extreme::<$t, MAX>(xs, id, $t::NAN) };
                }
                flagged_extreme::<$t, MAX, false, LANES>(xs, id, $t::NAN)
            }
            #[inline(always)]
            fn row_extreme<const MAX: bool>(acc: &mut [Self], src: &[Self]) {
                #[cfg(target_arch = "x86_64")]
                if acc.len() >= WIDE_MIN && super::simd::has_avx512() {
                    // SAFETY: as in `run_extreme`.
                    return unsafe { wide_row::<$t, MAX, false>(acc, src) };
                }
                flagged_row::<$t, MAX, false>(acc, src)
            }
            #[inline(always)]
            fn run_extreme_ahead<const MAX: bool>(xs: &[Self]) -> Self {
                flagged_extreme::<$t, MAX, true, LANES>(xs, extreme_id::<$t, MAX>(), $t::NAN)
            }
            #[inline(always)]
            fn row_extreme_ahead<const MAX: bool>(acc: &mut [Self], src: &[Self]) {
                #[cfg(target_arch = "x86_64")]
                if super::simd::has_avx512() {
                    // SAFETY: as in `run_extreme`.
                    return unsafe { wide_row::<$t, MAX, true>(acc, src) };
                }
                flagged_row::<$t, MAX, true>(acc, src)
            }
        }
    )*};
}
bounded_float!(f32, f64);

/// `a` unless `x` is beyond it (`MAX`: greater, else less), so a NaN `x` replaces `a`: one
/// `vmaxps`/`vminps` in a vector loop. The callers keep a NaN flag beside it.
#[inline(always)]
fn beyond<T: PartialOrd, const MAX: bool>(a: T, x: T) -> T {
    if (MAX && a > x) || (!MAX && a < x) {
        a
    } else {
        x
    }
}

/// The maximum (`MAX`) or minimum of `xs` in `W` lanes of plain comparisons ([`beyond`]) and
/// a separate any-NaN flag, NaN if `xs` holds one: the same value as the NaN-propagating
/// fold, in the form the compiler vectorises. With `AHEAD` (a run streamed from memory), each
/// step first asks for the lines ahead.
#[inline(always)]
fn flagged_extreme<T: Copy + PartialOrd, const MAX: bool, const AHEAD: bool, const W: usize>(
    xs: &[T],
    id: T,
    nan: T,
) -> T {
    let mut r = [id; W];
    let mut seen = [false; W];
    let mut chunks = xs.chunks_exact(W);
    for (k, c) in (&mut chunks).enumerate() {
        if AHEAD {
            prefetch_ahead(xs, k * W, W);
        }
        for j in 0..W {
            r[j] = beyond::<T, MAX>(r[j], c[j]);
            #[allow(clippy::eq_op)]
            let is_nan = c[j] != c[j];
            seen[j] |= is_nan;
        }
    }
    let (mut m, mut any) = (id, false);
    for j in 0..W {
        m = beyond::<T, MAX>(m, r[j]);
        any |= seen[j];
    }
    for &x in chunks.remainder() {
        m = beyond::<T, MAX>(m, x);
        #[allow(clippy::eq_op)]
        let is_nan = x != x;
        any |= is_nan;
    }
    if any {
        nan
    } else {
        m
    }
}
/// Runs of at least this many elements take the AVX-512 copies of the float loops
/// ([`wide_extreme`], [`wide_row`]) when the CPU has it: 512-bit loads keep more of a long
/// run's cache lines in flight (a 4096 x 4096 f32 `max(axis=1)`: 3.0 -> 2.4 ms on one
/// thread, docs/performance.md); a shorter run stays inline in the caller's AVX2 copy.
#[cfg(target_arch = "x86_64")]
const WIDE_MIN: usize = 256;

/// Lanes of [`wide_extreme`]'s main loop: four 512-bit registers of `f32` (eight of `f64`),
/// so that four `vmaxps` chains (4 cycles each) overlap; with [`LANES`], one register of
/// `f32`, a run in cache waited on a single chain.
#[cfg(target_arch = "x86_64")]
const WIDE_LANES: usize = 64;

/// [`flagged_extreme`] compiled for AVX-512 (F, VL, DQ, BW).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
fn wide_extreme<T: Copy + PartialOrd, const MAX: bool>(xs: &[T], id: T, nan: T) -> T {
    let (body, tail) = xs.split_at(xs.len() - xs.len() % WIDE_LANES);
    let a = flagged_extreme::<T, MAX, false, WIDE_LANES>(body, id, nan);
    let b = flagged_extreme::<T, MAX, false, LANES>(tail, id, nan);
    // A NaN `b` comes through `beyond`; a NaN `a` would not.
    #[allow(clippy::eq_op)]
    if a != a {
        nan
    } else {
        beyond::<T, MAX>(a, b)
    }
}

/// [`flagged_row`] compiled for AVX-512 (F, VL, DQ, BW), whose masked stores are plain
/// ones: the AVX2 copy of a streamed row (`AHEAD`) stores with `vmaskmovps`, and a 4096 x
/// 4096 `f32` `max(axis=0)` took 8.2 ms at one thread, 2.4 times NumPy's time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
fn wide_row<T: Copy + PartialOrd, const MAX: bool, const AHEAD: bool>(acc: &mut [T], src: &[T]) {
    flagged_row::<T, MAX, AHEAD>(acc, src)
}

/// [`Bounded::row_extreme`] for floats: `x` replaces `acc[i]` only when beyond it (one
/// `vmaxps`/`vminps` per 8 lanes), so a NaN already in `acc[i]` stays (every comparison with
/// it is false); a NaN in `src` sets a flag for the row, and a second pass, run only then,
/// copies those NaNs in. With `AHEAD` (a row streamed from memory), each step of [`LANES`]
/// first asks for the lines ahead.
#[inline(always)]
fn flagged_row<T: Copy + PartialOrd, const MAX: bool, const AHEAD: bool>(acc: &mut [T], src: &[T]) {
    let mut any = false;
    // `acc[i]` stays unless `x` is beyond it, so a NaN `acc[i]` stays and a NaN `x` only
    // sets the flag.
    let mut step = |a: T, x: T| {
        #[allow(clippy::eq_op)]
        let is_nan = x != x;
        any |= is_nan;
        beyond::<T, MAX>(x, a)
    };
    if AHEAD {
        zip_ahead(acc, src, step);
    } else {
        for (a, &x) in acc.iter_mut().zip(src) {
            *a = step(*a, x);
        }
    }
    if any {
        for (a, &x) in acc.iter_mut().zip(src) {
            #[allow(clippy::eq_op)]
            if x != x {
                *a = x;
            }
        }
    }
}
/// The integer types (and `bool`): a total order, so a run folds with `Ord::max`/`min`,
/// the form LLVM turns into a vector reduction (`vpmaxsq` for `i64` with AVX-512; the
/// interleaved lanes of [`lanes`] became gathers across 16-element chunks there, and a 16 Mi
/// `i64` `max()` took 1.4-1.6 times NumPy's time), in an AVX-512 copy for long runs.
macro_rules! bounded_int {
    ($($t:ty => $lo:expr, $hi:expr);*) => {$(
        impl Bounded for $t {
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
            #[inline(always)]
            fn run_extreme<const MAX: bool>(xs: &[Self]) -> Self {
                #[cfg(target_arch = "x86_64")]
                if xs.len() >= WIDE_MIN && super::simd::has_avx512() {
                    // SAFETY: the CPU has the instruction sets `wide_ord_extreme` is
                    // compiled for (just checked).
                    return unsafe { wide_ord_extreme::<$t, MAX>(xs) };
                }
                ord_extreme::<$t, MAX>(xs)
            }
        }
    )*};
}

/// The maximum (`MAX`) or minimum of `xs` under a total order (the identity when empty).
#[inline(always)]
fn ord_extreme<T: Bounded + Ord, const MAX: bool>(xs: &[T]) -> T {
    let id = extreme_id::<T, MAX>();
    if MAX {
        xs.iter().copied().fold(id, Ord::max)
    } else {
        xs.iter().copied().fold(id, Ord::min)
    }
}

/// [`ord_extreme`] compiled for AVX-512 (F, VL, DQ, BW).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
fn wide_ord_extreme<T: Bounded + Ord, const MAX: bool>(xs: &[T]) -> T {
    ord_extreme::<T, MAX>(xs)
}
bounded_int!(bool => false, true; u8 => u8::MIN, u8::MAX; i8 => i8::MIN, i8::MAX;
    u16 => u16::MIN, u16::MAX; i16 => i16::MIN, i16::MAX; u32 => u32::MIN, u32::MAX;
    i32 => i32::MIN, i32::MAX; u64 => u64::MIN, u64::MAX; i64 => i64::MIN, i64::MAX);
bounded!(f16 => f16::NEG_INFINITY, f16::INFINITY; bf16 => bf16::NEG_INFINITY, bf16::INFINITY;
    C64 => C64::new(f32::NEG_INFINITY, f32::NEG_INFINITY), C64::new(f32::INFINITY, f32::INFINITY);
    C128 => C128::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
        C128::new(f64::INFINITY, f64::INFINITY));

/// The NaN-propagating maximum (`MAX`) or minimum reducer: one implementation, the direction
/// a const parameter, as in every kernel of this module.
pub struct Extreme<const MAX: bool>;
/// NaN-propagating maximum.
pub type Max = Extreme<true>;
/// NaN-propagating minimum.
pub type Min = Extreme<false>;

impl<T: Arith + Bounded, const MAX: bool> Reducer<T> for Extreme<MAX> {
    type Acc = T;
    fn identity(&self) -> T {
        extreme_id::<T, MAX>()
    }
    fn combine(&self, a: T, b: T) -> T {
        extreme::<T, MAX>(a, b)
    }
    fn lift(&self, x: T) -> T {
        x
    }
    #[inline(always)]
    fn fold_run(&self, data: &[T], off: isize, n: usize, stride: isize) -> T {
        fold_extreme::<T, MAX>(data, off, n, stride)
    }
    #[inline(always)]
    fn combine_row(&self, acc: &mut [T], src: &[T]) {
        row_widest::<T, MAX>(acc, src)
    }
    const ROWS_ASK_AHEAD: bool = true;
    #[inline(always)]
    fn fold_run_ahead(&self, data: &[T], off: usize, n: usize) -> T {
        T::run_extreme_ahead::<MAX>(&data[off..off + n])
    }
    #[inline(always)]
    fn combine_row_ahead(&self, acc: &mut [T], src: &[T]) {
        T::row_extreme_ahead::<MAX>(acc, src)
    }
}

/// [`Bounded::row_extreme`] compiled for AVX-512 where the CPU has it. The row update
/// `acc[i] = if x beyond acc[i] { x } else { acc[i] }` stores back what it loaded where `x`
/// loses, and the code generator turns that into a masked store: in AVX2 `vpmaskmovq` /
/// `vmaskmovps`, microcoded on AMD (perf: 80% of `max(axis=0)` of a 256 x 256 `int64`, at
/// 2.3 NumPy's time); AVX-512's masked stores are plain ones, and it has a 64-bit integer
/// `max`.
#[inline(always)]
fn row_widest<T: Arith + Bounded, const MAX: bool>(acc: &mut [T], src: &[T]) {
    /// The row update compiled with AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    fn wide<T: Arith + Bounded, const MAX: bool>(acc: &mut [T], src: &[T]) {
        T::row_extreme::<MAX>(acc, src)
    }
    #[cfg(target_arch = "x86_64")]
    if super::simd::has_avx512() {
        // SAFETY: `wide` only needs the features `has_avx512` has just confirmed.
        return unsafe { wide::<T, MAX>(acc, src) };
    }
    T::row_extreme::<MAX>(acc, src)
}

/// A run folded by a NaN-propagating `maximum` or `minimum`. Both are associative and
/// commutative except for which zero a tie of `+0.0` and `-0.0` returns, so lanes may reorder
/// them; the sign of a zero maximum or minimum depends on the layout (as in NumPy, whose
/// SIMD loops reorder too: docs/design.md P5).
#[inline(always)]
fn fold_extreme<T: Arith + Bounded, const MAX: bool>(
    data: &[T],
    off: isize,
    n: usize,
    stride: isize,
) -> T {
    let id = extreme_id::<T, MAX>();
    if stride == 1 {
        T::run_extreme::<MAX>(&data[off as usize..off as usize + n])
    } else if stride == 0 && n > 0 {
        // A broadcast run repeats one value; max and min are idempotent.
        extreme::<T, MAX>(id, data[off as usize])
    } else {
        (0..n as isize).fold(id, |acc, i| {
            extreme::<T, MAX>(acc, data[(off + i * stride) as usize])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_find_a_finite_extreme_anywhere() {
        // Finite values, so that the extreme is not an infinity met early: one larger (or
        // smaller) value or one NaN at every position of runs that take the AVX-512 copy.
        for n in [256usize, 257, 300, 1000] {
            for p in 0..n {
                let mut xs: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
                xs[p] = 50.0;
                assert_eq!(f64::run_extreme::<true>(&xs), 50.0, "n {n} p {p}");
                xs[p] = -50.0;
                assert_eq!(f64::run_extreme::<false>(&xs), -50.0, "n {n} p {p}");
                let f: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                assert_eq!(f32::run_extreme::<false>(&f), -50.0, "n {n} p {p}");
                xs[p] = f64::NAN;
                assert!(f64::run_extreme::<true>(&xs).is_nan(), "n {n} p {p}");
                let mut acc = vec![1.0f64; n];
                f64::row_extreme::<true>(&mut acc, &xs);
                assert!(acc[p].is_nan() && acc.iter().filter(|a| a.is_nan()).count() == 1);
                assert!(acc
                    .iter()
                    .enumerate()
                    .all(|(i, &a)| i == p || a == xs[i].max(1.0)));
            }
        }
    }

    #[test]
    fn flagged_extremes_equal_the_nan_propagating_fold() {
        // Lengths around the lane count, values with NaNs, infinities and signed zeros at
        // pseudo-random places; the reference is the plain sequential fold.
        let pool = [
            1.5,
            -2.0,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            7.25,
            -7.25,
        ];
        let mut seed = 12345u64;
        for n in (0usize..70).chain([255, 256, 257, 319, 383, 1000]) {
            for nan_at in [None, Some(0), Some(n / 2), Some(n.saturating_sub(1))] {
                let xs: Vec<f64> = (0..n)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        if Some(i) == nan_at {
                            f64::NAN
                        } else {
                            pool[(seed >> 33) as usize % 8]
                        }
                    })
                    .collect();
                let want_max = xs
                    .iter()
                    .fold(f64::NEG_INFINITY, |a, &x| Arith::maximum(a, x));
                let want_min = xs.iter().fold(f64::INFINITY, |a, &x| Arith::minimum(a, x));
                let got_max = f64::run_extreme::<true>(&xs);
                let got_min = f64::run_extreme::<false>(&xs);
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                assert!(
                    same(got_max, want_max),
                    "max of {xs:?}: {got_max} vs {want_max}"
                );
                assert!(
                    same(got_min, want_min),
                    "min of {xs:?}: {got_min} vs {want_min}"
                );
                // The portable loop too (the calls above take the AVX-512 copy for long
                // runs when the CPU has it).
                let portable =
                    flagged_extreme::<f64, true, false, LANES>(&xs, f64::NEG_INFINITY, f64::NAN);
                assert!(same(portable, want_max), "{portable} vs {want_max}");
                // The streaming copies (which ask for the lines ahead).
                assert!(same(f64::run_extreme_ahead::<true>(&xs), want_max));
                assert!(same(f64::run_extreme_ahead::<false>(&xs), want_min));
                let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                assert!(same(f32::run_extreme::<true>(&xs32) as f64, want_max));
                assert!(same(f32::run_extreme::<false>(&xs32) as f64, want_min));
                // Integers (the lane fold) against their sequential fold.
                let ints: Vec<i64> = xs
                    .iter()
                    .map(|&x| {
                        if x.is_finite() {
                            (x * 4.0) as i64
                        } else {
                            i64::MIN
                        }
                    })
                    .collect();
                assert_eq!(
                    i64::run_extreme::<true>(&ints),
                    ints.iter().copied().max().unwrap_or(i64::MIN)
                );
                assert_eq!(
                    i64::run_extreme::<false>(&ints),
                    ints.iter().copied().min().unwrap_or(i64::MAX)
                );
                let mut irow: Vec<i64> = ints.iter().rev().copied().collect();
                let want_irow: Vec<i64> = irow.iter().zip(&ints).map(|(&a, &b)| a.min(b)).collect();
                i64::row_extreme::<false>(&mut irow, &ints);
                assert_eq!(irow, want_irow);
                // Rows: each element against a shifted copy, elementwise.
                let mut acc: Vec<f64> = xs.iter().rev().copied().collect();
                let want_row: Vec<f64> = acc
                    .iter()
                    .zip(&xs)
                    .map(|(&a, &x)| Arith::maximum(a, x))
                    .collect();
                let mut streamed = acc.clone();
                f64::row_extreme::<true>(&mut acc, &xs);
                assert!(
                    acc.iter().zip(&want_row).all(|(&a, &b)| same(a, b)),
                    "row max of {n}"
                );
                f64::row_extreme_ahead::<true>(&mut streamed, &xs);
                assert!(
                    streamed.iter().zip(&want_row).all(|(&a, &b)| same(a, b)),
                    "streamed row max of {n}"
                );
            }
        }
    }
}
