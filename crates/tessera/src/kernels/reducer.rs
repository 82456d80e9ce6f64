//! What every reduction kernel shares: the [`Reducer`] trait (how elements fold into
//! accumulators) and the lane fold the compiler vectorises. `kernels/reduce.rs` drives
//! reducers over a plan; the reducers live beside it (`reduce.rs`, `extreme.rs`,
//! `truth.rs`) and import only this module, so the imports go one way.

use super::simd::{prefetch_ahead, zip_ahead, ASK_AHEAD};
use crate::dtype::Element;

/// How to reduce elements of type `T` into accumulators of type `Self::Acc`.
pub trait Reducer<T: Element>: Sync {
    /// Accumulator type.
    type Acc: Element;
    /// The starting accumulator (the identity of `combine`).
    fn identity(&self) -> Self::Acc;
    /// Combines two accumulators.
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Lifts one element to an accumulator.
    fn lift(&self, x: T) -> Self::Acc;
    /// Folds `n` elements `data[off + i * stride]` into one accumulator.
    #[inline(always)]
    fn fold_run(&self, data: &[T], off: isize, n: usize, stride: isize) -> Self::Acc {
        (0..n as isize).fold(self.identity(), |acc, i| {
            self.combine(acc, self.lift(data[(off + i * stride) as usize]))
        })
    }
    /// Combines each element of the contiguous run `src` into the accumulator beside it
    /// (`acc[i] = combine(acc[i], lift(src[i]))`): one row of a reduction over an outer axis,
    /// the vertical form of P5 in docs/design.md.
    #[inline(always)]
    fn combine_row(&self, acc: &mut [Self::Acc], src: &[T]) {
        for (a, &x) in acc.iter_mut().zip(src) {
            *a = self.combine(*a, self.lift(x));
        }
    }
    /// Whether the rows of a reduction that streams from memory ask for their lines ahead
    /// ([`Reducer::combine_row_ahead`]): as `simd::ASK_AHEAD` by default; float `max`/`min`
    /// always (on 2026-12-06, 16 Mi `f32` `max(axis=0)` 3.4 ms with the hints, 4.0 without,
    /// while `sum(axis=0)` ran 4% faster without them).
    const ROWS_ASK_AHEAD: bool = ASK_AHEAD;
    /// [`Reducer::fold_run`] of a contiguous run (`data[off..off + n]`) of a reduction that
    /// streams from memory (`simd::STREAM_BYTES`): the reducers whose loops gain ask for the
    /// lines ahead as they go; by default the plain fold.
    #[inline(always)]
    fn fold_run_ahead(&self, data: &[T], off: usize, n: usize) -> Self::Acc {
        self.fold_run(data, off as isize, n, 1)
    }
    /// [`Reducer::combine_row`] of a reduction that streams from memory, asking for the lines
    /// of `src` ahead as it goes (`simd::zip_ahead`).
    #[inline(always)]
    fn combine_row_ahead(&self, acc: &mut [Self::Acc], src: &[T]) {
        zip_ahead(acc, src, |a, x| self.combine(a, self.lift(x)))
    }
}

/// Independent accumulators of the inner loops (two AVX2 registers of `f32`).
pub(super) use super::simd::LANES;

/// `xs` folded into [`LANES`] interleaved accumulators by `step`, which are then combined
/// pairwise by `merge` (the loop the compiler vectorises: no bounds checks, no dependence
/// between lanes). With `AHEAD` (a run streamed from memory), each step first asks for the
/// lines ahead ([`prefetch_ahead`]): the same arithmetic in the same order.
#[inline(always)]
pub(super) fn lanes<T: Copy, A: Copy, const AHEAD: bool>(
    xs: &[T],
    id: A,
    step: impl Fn(A, T) -> A,
    merge: impl Fn(A, A) -> A,
) -> A {
    let mut r = [id; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for (k, c) in (&mut chunks).enumerate() {
        if AHEAD {
            prefetch_ahead(xs, k * LANES, LANES);
        }
        for j in 0..LANES {
            r[j] = step(r[j], c[j]);
        }
    }
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for j in 0..w {
            r[j] = merge(r[j], r[j + w]);
        }
    }
    chunks.remainder().iter().fold(r[0], |a, &x| step(a, x))
}
