//! Run-time choice of the instruction set for the innermost loops (docs/design.md P1).
//!
//! The crate is built for the baseline of its target (x86-64: SSE2 only), so a loop compiled
//! the usual way uses 128-bit vectors, and `floor`, `round` and friends are library calls.
//! [`with_simd`] runs a closure through a copy of itself compiled with AVX2 and FMA enabled
//! when the CPU has them (checked once, cached by `std`): the closure is inlined into that
//! copy, so every loop in it is vectorised 256 bits wide and rounding is one instruction. On
//! other CPUs and architectures the closure runs as built.
//!
//! Loops that run often call it once per run of elements, so each kernel closure is compiled
//! twice (baseline and AVX2) and nothing else is. The closure has two call sites, so LLVM
//! inlines it only while it judges it small: the elementwise drivers and the reductions use
//! their own `#[target_feature]` copies instead (`kernels/elementwise/runs.rs`,
//! `kernels/reduce.rs`), into which the run is inlined by force and which take the kernel
//! closure as a reference parameter, so its captured state stays in registers. One closure
//! must not be handed to two such wrappers (or called besides): LLVM then compiles it once,
//! out of line, for the baseline only (seen in perf: a comparison loop in SSE2). Loops that
//! want a third copy (AVX-512) are `#[inline(always)]` functions called from one
//! `#[target_feature]` function per instruction set, as `tensor/flat.rs` does.

use super::stream::LINE;

/// Whether this CPU has AVX2 and FMA (cached by `std` after the first query).
#[inline]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU has the AVX-512 subsets that 512-bit loops over floats and integers use
/// (F, VL, DQ, BW) besides AVX2 and FMA (cached by `std`).
#[inline]
pub(crate) fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        has_avx2() && has!("avx512f") && has!("avx512vl") && has!("avx512dq") && has!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether a loop writing `O` from `A` narrows (a comparison of `f64` into `bool`) and this
/// CPU has AVX-512, whose mask registers pack such results: the loops that narrow take their
/// AVX-512 copy then (`tensor/flat.rs`, `kernels/elementwise/runs.rs`).
#[inline]
pub(crate) fn narrows_on_avx512<O, A>() -> bool {
    std::mem::size_of::<O>() < std::mem::size_of::<A>() && has_avx512()
}

/// Runs `f`, compiled for AVX2 and FMA when the CPU has them (see the module doc).
///
/// ```
/// use tessera::kernels::simd::with_simd;
/// let mut v = vec![1.5f32; 100];
/// with_simd(|| v.iter_mut().for_each(|x| *x = x.floor()));
/// assert!(v.iter().all(|&x| x == 1.0));
/// ```
#[inline(always)]
pub fn with_simd<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        /// `f` compiled with AVX2 and FMA: `f` has no target features of its own, so it is
        /// inlined here and its loops are vectorised for this instruction set.
        #[target_feature(enable = "avx2,fma")]
        fn avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        if has_avx2() {
            // SAFETY: `avx2` may only run on a CPU with AVX2 and FMA, which `has_avx2` has
            // just confirmed; it does nothing else than call `f`.
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// Bytes from which a loop over operands in memory streams them: with [`ASK_AHEAD`] on, each
/// step of [`LANES`] elements first asks for the lines [`PREFETCH_BYTES`] ahead
/// ([`prefetch_ahead`]); the flat drivers skew their loads (`kernels/flat.rs`). Smaller
/// operands are in cache (or soon will be), where the hints only cost: rows of 64 Ki `f32`
/// ran at 1.1-1.5 times their plain loop's time with them.
pub(crate) const STREAM_BYTES: usize = 4 << 20;

/// Whether loops over inputs of [`STREAM_BYTES`] or more ask for their lines ahead: off since
/// the fifty-third session. The forty-fifth measured the hints as a gain on this project's
/// VMs (f32 `max()` of 16 Mi elements 4.5 -> 2.9 ms at one thread); from the fifty-second
/// on, the same binaries ran 9-17% faster without them (`max()` 2.2-2.5 ms without, 2.7-2.9
/// with; `sum`, `sum(axis=0)`, `isnan` alike), and at two threads within 5% either way
/// (docs/performance.md). The rows of float `max`/`min` still ask ahead, which measured
/// faster on both days (`Reducer::ROWS_ASK_AHEAD`). The hardware prefetchers of the hosts
/// differ; turning this back on is the one switch for the rest.
pub(crate) const ASK_AHEAD: bool = false;

/// Whether a loop over `bytes` of input asks for its lines ahead ([`ASK_AHEAD`] and past
/// [`STREAM_BYTES`]).
#[inline]
pub(crate) fn asks_ahead(bytes: usize) -> bool {
    ASK_AHEAD && bytes >= STREAM_BYTES
}

/// Elements per step of the streaming loops, which call [`prefetch_ahead`] once a step.
pub(crate) const LANES: usize = 16;

/// How far ahead of a streaming loop its lines are asked for: 2 KiB, where memory-bound
/// reductions of 16 Mi elements ran fastest (1 and 4 KiB were within noise of it); without
/// the hints the hardware prefetchers of these VMs kept too few lines in flight, and a loop
/// with more work per line than a plain sum read memory slower (docs/performance.md).
const PREFETCH_BYTES: usize = 2048;

/// `out[k] = f(out[k], x[k])` for every `k`, as a streaming loop: steps of [`LANES`]
/// elements, each after asking for the lines ahead, then the tail. For row updates, whose
/// bodies have no branches (a map takes [`map_ahead`]). A select in `f` may still become a
/// masked store in an AVX2 copy (`vmaskmovps`, microcoded on AMD): `kernels/extreme.rs`
/// runs its row updates in an AVX-512 copy for that reason.
#[inline(always)]
pub(crate) fn zip_ahead<O: Copy, A: Copy>(out: &mut [O], x: &[A], mut f: impl FnMut(O, A) -> O) {
    let mut outs = out.chunks_exact_mut(LANES);
    let mut xs = x.chunks_exact(LANES);
    for (k, (o, c)) in (&mut outs).zip(&mut xs).enumerate() {
        prefetch_ahead(x, k * LANES, LANES);
        for j in 0..LANES {
            o[j] = f(o[j], c[j]);
        }
    }
    for (o, &v) in outs.into_remainder().iter_mut().zip(xs.remainder()) {
        *o = f(*o, v);
    }
}

/// `out[k] = f(x[k])` for a streaming loop: blocks of [`BLOCK_BYTES`] of `x`, each after
/// asking for the lines ahead of it, walked by a plain loop. A block of runtime length goes
/// to LLVM's loop vectoriser, which turns a branchy `f` into selects; [`zip_ahead`]'s fixed
/// steps were unrolled and packed without that, and `sign` of 16 Mi `f32` kept its
/// branches (8.3 ms -> 61 ms at one thread). Row updates stay on the steps, which ran a
/// 4096 x 4096 `f32` `sum(axis=0)` 5-10% faster than these blocks.
#[inline(always)]
pub(crate) fn map_ahead<O, A: Copy>(out: &mut [O], x: &[A], f: impl Fn(A) -> O) {
    let block = (BLOCK_BYTES / std::mem::size_of::<A>().max(1)).max(1);
    for (k, (o, c)) in out.chunks_mut(block).zip(x.chunks(block)).enumerate() {
        prefetch_ahead(x, k * block, c.len());
        for (o, &v) in o.iter_mut().zip(c) {
            *o = f(v);
        }
    }
}

/// Bytes of input per block of [`map_ahead`], whose lines are asked for together (256 to
/// 2048 ran within noise of each other).
const BLOCK_BYTES: usize = 512;

/// A hint to load the cache line holding `at` into L1 (nothing off x86-64 or under Miri). Any
/// address is fine: a prefetch never faults and reads nothing the program observes.
#[inline(always)]
fn prefetch_line(at: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` is `unsafe` only for needing SSE, which every x86-64 CPU has
        // (it is in the target's baseline); `prefetcht0` dereferences nothing and never
        // faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = at;
}

/// A hint to load the cache line of `xs[i]` (any `i`: the address is formed with
/// `wrapping_add` and never dereferenced).
#[inline(always)]
pub(crate) fn prefetch<T>(xs: &[T], i: usize) {
    prefetch_line(xs.as_ptr().wrapping_add(i).cast::<u8>());
}

/// A hint to load the cache lines of the `n` elements [`PREFETCH_BYTES`] past `xs[i]` (those
/// past the end of `xs` are asked for too, harmlessly).
#[inline(always)]
pub(crate) fn prefetch_ahead<T>(xs: &[T], i: usize, n: usize) {
    prefetch_past(xs, i, n * std::mem::size_of::<T>(), PREFETCH_BYTES);
}

/// A hint to load the cache lines of the `bytes` bytes that start `past` bytes after
/// `xs[i]` (any of them may lie past the end of `xs`: the address is formed with
/// `wrapping_add` and never dereferenced).
#[inline(always)]
fn prefetch_past<T>(xs: &[T], i: usize, bytes: usize, past: usize) {
    let at = xs
        .as_ptr()
        .cast::<u8>()
        .wrapping_add(i * std::mem::size_of::<T>() + past);
    for line in (0..bytes).step_by(LINE) {
        prefetch_line(at.wrapping_add(line));
    }
}

/// Bytes of each input per block of [`zip_near`], whose lines are asked for together before
/// the block runs (blocks of 256 and 512 bytes measured alike, 128 and 1024 slower).
const NEAR_BLOCK_BYTES: usize = 512;
/// How far past a block's start [`zip_near`] begins to ask for lines: two lines, so each
/// block asks for its own lines but the first two and for the two lines after it (one line
/// measured within 1-2% of it).
const NEAR_BYTES: usize = 2 * LINE;

/// Whether a loop of two inputs, `bytes` each, streams them from memory and takes
/// [`zip_near`]: from [`STREAM_BYTES`].
#[inline]
pub(crate) fn zips_near(bytes: usize) -> bool {
    bytes >= STREAM_BYTES
}

/// `out[k] = f(a[k], b[k])` for a loop over two inputs streamed from memory: blocks of
/// [`NEAR_BLOCK_BYTES`] of each input, each after asking for both inputs' lines from
/// [`NEAR_BYTES`] past its start, walked by a plain loop. Unlike the [`PREFETCH_BYTES`]
/// hints, these ask for lines the loop reaches within the next few hundred cycles. A
/// comparison of two 16 Mi `f32` into `bool`s (loads skewed, `kernels/flat.rs`) ran 6-9%
/// faster with them at one thread on this project's Zen 4 VMs (`f64` 6-8%, `i64` 4%) and
/// alike at two; a loop over one input ran 4-8% slower with them, so it has none
/// (docs/performance.md). Slices of one length (the zip stops at the shortest).
#[inline(always)]
pub(crate) fn zip_near<O, A: Copy>(out: &mut [O], a: &[A], b: &[A], f: impl Fn(A, A) -> O) {
    let block = (NEAR_BLOCK_BYTES / std::mem::size_of::<A>().max(1)).max(1);
    let pieces = out
        .chunks_mut(block)
        .zip(a.chunks(block))
        .zip(b.chunks(block));
    for (k, ((o, x), y)) in pieces.enumerate() {
        prefetch_past(a, k * block, NEAR_BLOCK_BYTES, NEAR_BYTES);
        prefetch_past(b, k * block, NEAR_BLOCK_BYTES, NEAR_BYTES);
        for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
            *o = f(x, y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_loops_visit_every_element_once() {
        // Lengths around the blocks of `map_ahead` and `zip_near` (128 f32, 64 f64) and
        // `zip_ahead`'s steps of 16, against the plain loops; `sign` has the branches the
        // blocks exist for.
        let sign = |x: f32| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        };
        for n in [
            0usize, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 300, 511, 513, 1000,
        ] {
            let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.7).sin() * 3.0).collect();
            let mut out = vec![9.0f32; n];
            map_ahead(&mut out, &x, sign);
            assert_eq!(out, x.iter().map(|&v| sign(v)).collect::<Vec<_>>(), "{n}");
            let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let mut twice = vec![0.0f64; n];
            map_ahead(&mut twice, &wide, |v| 2.0 * v);
            assert_eq!(twice, wide.iter().map(|v| 2.0 * v).collect::<Vec<_>>());
            let mut acc: Vec<u64> = (0..n as u64).collect();
            let ones = vec![1u64; n];
            zip_ahead(&mut acc, &ones, |a, b| a + b + 1);
            assert_eq!(acc, (0..n as u64).map(|i| i + 2).collect::<Vec<_>>());
            // `zip_near`'s blocks: 128 f32, 64 f64, 512 bytes.
            let mut below = vec![true; n];
            zip_near(&mut below, &x, &out, |a, b| a < b);
            let want: Vec<bool> = x.iter().zip(&out).map(|(a, b)| a < b).collect();
            assert_eq!(below, want, "{n}");
            let mut sum = vec![0.0f64; n];
            zip_near(&mut sum, &wide, &twice, |a, b| a + b);
            assert_eq!(sum, wide.iter().map(|v| 3.0 * v).collect::<Vec<_>>());
            let bytes: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let mut xor = vec![0u8; n];
            zip_near(&mut xor, &bytes, &bytes, |a, b| a ^ b ^ 1);
            assert!(xor.iter().all(|&v| v == 1), "{n}");
        }
    }

    #[test]
    fn both_paths_give_the_loop_result() {
        let a: Vec<f64> = (0..1000).map(|i| i as f64 * 0.37 - 150.0).collect();
        let plain: Vec<f64> = a.iter().map(|x| x.floor() + x.round_ties_even()).collect();
        let wide = with_simd(|| {
            a.iter()
                .map(|x| x.floor() + x.round_ties_even())
                .collect::<Vec<_>>()
        });
        assert_eq!(plain, wide);
    }
}
