//! Streaming copies: the inner loop of large copies made of contiguous runs.
//!
//! A copy much larger than the cache gains nothing from leaving its destination in the cache,
//! and a source read in runs (a column block of a matrix: 8 KiB of every 16 KiB row) defeats
//! the hardware prefetcher at every run start. Streaming such copies ran at contiguous
//! `memcpy` speed or better where plain copies of runs did not; below about 8 MiB the plain
//! copies win (the data stays in the cache), hence [`STREAM_MIN_BYTES`].
//!
//! [`StreamCopy`] takes the runs one by one and copies each with non-temporal stores (no read
//! for ownership of the destination, no cache pollution) while prefetching the source
//! 8 KiB further along the sequence of runs, across run boundaries. It keeps the
//! runs of the last 8 KiB queued to know where to prefetch. A run's lines are copied in spans
//! over which the prefetch position stays inside one queued run, so the inner loop only steps
//! pointers (stepping the queue on every line made the copy about twice as slow).
//!
//! Each line is one AVX-512 store where the CPU has AVX-512F (detected at run time), four SSE2
//! stores otherwise; the wide stores were faster when two processes stream at once.
//!
//! Measured figures: docs/performance.md (copy engine).

use crate::dtype::Element;

/// Copies whose destination has at least this many bytes stream.
pub const STREAM_MIN_BYTES: usize = 8 << 20;
/// Runs shorter than this are copied at once (the per-run cost of streaming outweighs it).
pub const STREAM_MIN_RUN_BYTES: usize = 256;
/// How far ahead, in bytes of the run sequence, the source is prefetched.
const AHEAD: usize = 8 << 10;
/// Runs queued at most (so runs of [`STREAM_MIN_RUN_BYTES`] still see [`AHEAD`] bytes); a
/// power of two, so ring positions are masks.
const RING: usize = (AHEAD / STREAM_MIN_RUN_BYTES + 1).next_power_of_two();
/// A cache line: the unit of non-temporal stores and prefetches.
pub(super) const LINE: usize = 64;

/// Whether a copy of `bytes` destination bytes in runs of `run_bytes` should stream.
pub fn should_stream(bytes: usize, run_bytes: usize) -> bool {
    cfg!(target_arch = "x86_64") && bytes >= STREAM_MIN_BYTES && run_bytes >= STREAM_MIN_RUN_BYTES
}

/// One queued run, in bytes: destination offset, source offset, length.
#[derive(Clone, Copy, Default)]
struct Run {
    dst: usize,
    src: usize,
    len: usize,
}

/// Copies runs of `src` into `dst`, streaming when asked (see the module docs); the copy is
/// complete when the value is dropped (or [`StreamCopy::finish`] returns). Runs must not
/// overlap in `dst` (they may be copied in any order), and must lie inside both slices:
/// a run outside them panics, like slice indexing, before anything of it is copied.
///
/// (The module is crate-private; its unit tests below copy runs like the doc's column block.)
pub struct StreamCopy<'a, T: Element> {
    dst: &'a mut [T],
    src: &'a [T],
    stream: bool,
    /// Whether to stream with AVX-512 stores (the CPU has them).
    wide: bool,
    queue: Queue,
}

/// The queued runs and the prefetch position.
struct Queue {
    /// Queued runs: `runs[(popped + k) % RING]` for `k < pushed - popped`.
    runs: [Run; RING],
    pushed: usize,
    popped: usize,
    /// Bytes queued beyond the oldest run.
    behind_front: usize,
    /// The prefetch position: queued run number `pf.run` (counted like `pushed`); `None`
    /// until the first run is copied.
    pf: Option<Prefetch>,
}

/// Where the source is prefetched: byte `off` of queued run number `run`, whose source
/// starts at `src` and has `len` bytes (0 while `run` is not queued yet).
#[derive(Clone, Copy)]
struct Prefetch {
    run: usize,
    off: usize,
    src: usize,
    len: usize,
}

impl Queue {
    fn len(&self) -> usize {
        self.pushed - self.popped
    }

    fn push(&mut self, run: Run) {
        if self.len() > 0 {
            self.behind_front += run.len;
        }
        self.runs[self.pushed % RING] = run;
        self.pushed += 1;
    }

    fn pop(&mut self) -> Run {
        let run = self.runs[self.popped % RING];
        self.popped += 1;
        if self.len() > 0 {
            self.behind_front -= self.runs[self.popped % RING].len;
        }
        run
    }

    /// The source byte offset of the prefetch position and the bytes of its run from there,
    /// if the position is inside a queued run (a position waiting past the end of the queue
    /// moves into the runs queued since).
    #[inline]
    fn prefetch_span(&mut self) -> Option<(usize, usize)> {
        let pf = self.pf?;
        if pf.off >= pf.len {
            self.advance(0)?;
        }
        let pf = self.pf?;
        Some((pf.src + pf.off, pf.len - pf.off))
    }

    /// Moves the prefetch position `bytes` further along the queue (waiting at its end when
    /// it runs out: runs queued later are prefetched from their start) and returns the
    /// source byte offset it lands on, if it is inside a queued run.
    fn advance(&mut self, bytes: usize) -> Option<usize> {
        let pf = self.pf.as_mut()?;
        let (mut k, mut off) = (pf.run, pf.off + bytes);
        // The position may be in the run being copied (`popped - 1`), never before it.
        if k + 1 < self.popped {
            (k, off) = (self.popped, 0);
        }
        while k < self.pushed && off >= self.runs[k % RING].len {
            off -= self.runs[k % RING].len;
            k += 1;
        }
        if k == self.pushed {
            // Past the queue: wait at the start of the next run to be queued.
            *pf = Prefetch {
                run: k,
                off: 0,
                src: 0,
                len: 0,
            };
            return None;
        }
        let run = self.runs[k % RING];
        *pf = Prefetch {
            run: k,
            off,
            src: run.src,
            len: run.len,
        };
        Some(run.src + off)
    }
}

impl<'a, T: Element> StreamCopy<'a, T> {
    /// A copier from `src` into `dst`; with `stream` false (or off x86-64) every run is a plain
    /// `copy_from_slice`. Decide with [`should_stream`].
    pub fn new(dst: &'a mut [T], src: &'a [T], stream: bool) -> Self {
        StreamCopy {
            dst,
            src,
            stream: stream && cfg!(target_arch = "x86_64"),
            wide: wide_stores(),
            queue: Queue {
                runs: [Run::default(); RING],
                pushed: 0,
                popped: 0,
                behind_front: 0,
                pf: None,
            },
        }
    }

    /// Copies `src[s..s + n]` into `dst[d..d + n]` (now or later, by the time the copier is
    /// done).
    pub fn run(&mut self, d: usize, s: usize, n: usize) {
        // Bounds are checked here, so a bad run panics before any of it is copied.
        let (dst, src) = (&mut self.dst[d..d + n], &self.src[s..s + n]);
        let item = std::mem::size_of::<T>();
        if !self.stream || n * item < STREAM_MIN_RUN_BYTES {
            dst.copy_from_slice(src);
            return;
        }
        if self.queue.len() == RING {
            self.copy_front();
        }
        self.queue.push(Run {
            dst: d * item,
            src: s * item,
            len: n * item,
        });
        while self.queue.len() > 0 && self.queue.behind_front >= AHEAD {
            self.copy_front();
        }
    }

    /// Copies what is still queued and orders the non-temporal stores before later accesses
    /// (as dropping does).
    pub fn finish(self) {}

    fn flush(&mut self) {
        while self.queue.len() > 0 {
            self.copy_front();
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.stream {
            // Non-temporal stores are weakly ordered: fence them before the data is used
            // (possibly by another thread or process).
            // SAFETY: SSE is part of x86-64; a fence has no memory-safety preconditions.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
    }

    /// Copies the oldest queued run, prefetching [`AHEAD`] bytes further along the queue.
    fn copy_front(&mut self) {
        let run = self.queue.pop();
        let queue = &mut self.queue;
        if queue.pf.is_none() {
            // Start the prefetch position AHEAD bytes past this run's start.
            queue.pf = Some(Prefetch {
                run: queue.popped - 1,
                off: 0,
                src: run.src,
                len: run.len,
            });
            queue.advance(AHEAD);
        }
        let src = as_bytes(self.src);
        let (dst, src_run) = (
            &mut as_bytes_mut(self.dst)[run.dst..run.dst + run.len],
            &src[run.src..run.src + run.len],
        );
        // Up to the first cache-line boundary of the destination, and the tail after the
        // last whole line, are plain copies.
        let head = ((LINE - dst.as_ptr() as usize % LINE) % LINE).min(run.len);
        let body = (run.len - head) / LINE * LINE;
        dst[..head].copy_from_slice(&src_run[..head]);
        // The body in spans over which the prefetch position stays inside one queued run,
        // so each span's loop just steps two pointers.
        let mut at = head;
        while at < head + body {
            let left = head + body - at;
            let (n, ahead) = match queue.prefetch_span() {
                Some((pf, avail)) => {
                    let n = left.min(avail.div_ceil(LINE) * LINE);
                    (n, &src[pf..(pf + n).min(src.len())])
                }
                None => (left, &src[..0]),
            };
            stream_lines(&mut dst[at..at + n], &src_run[at..at + n], ahead, self.wide);
            if !ahead.is_empty() {
                queue.advance(n);
            }
            at += n;
        }
        dst[head + body..].copy_from_slice(&src_run[head + body..]);
    }
}

impl<T: Element> Drop for StreamCopy<'_, T> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// `src` as bytes.
fn as_bytes<T: Element>(src: &[T]) -> &[u8] {
    // SAFETY: `Element` is sealed to plain numeric types and `bool`, which have no padding,
    // so every byte of the slice is initialised; the length covers exactly the same memory.
    unsafe { std::slice::from_raw_parts(src.as_ptr().cast(), std::mem::size_of_val(src)) }
}

/// `dst` as bytes, for copying bytes of other values of the same `T` into it.
fn as_bytes_mut<T: Element>(dst: &mut [T]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`; the only writes through the result copy bytes from a slice
    // of the same `T` at the same positions within an element (runs start and end on
    // element boundaries, and the line split keeps whole bytes), so every element ends up
    // as the bytes of a valid `T` (this matters for `bool`).
    unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast(), std::mem::size_of_val(dst)) }
}

/// Copies whole cache lines from `src` into the line-aligned `dst` with non-temporal stores,
/// prefetching the line at the same offset of `ahead` (a prefix of it: it may be shorter, or
/// empty for no prefetches) before each line. With `wide`, one 64-byte AVX-512 store per line
/// (the caller checked the CPU has AVX-512F), else four SSE2 stores.
#[cfg(target_arch = "x86_64")]
#[inline]
fn stream_lines(dst: &mut [u8], src: &[u8], ahead: &[u8], wide: bool) {
    assert!(
        dst.len() == src.len()
            && dst.len().is_multiple_of(LINE)
            && (dst.as_ptr() as usize).is_multiple_of(LINE)
    );
    if cfg!(miri) {
        // Miri has no non-temporal stores or prefetches; it checks the run bookkeeping that
        // leads here, and the slices above are what the intrinsics below would touch.
        dst.copy_from_slice(src);
        return;
    }
    let (d, s, lines) = (dst.as_mut_ptr(), src.as_ptr(), dst.len() / LINE);
    let prefetched = ahead.len().div_ceil(LINE).min(lines);
    // SAFETY: `d` and `s` hold `lines` whole lines (asserted above) and `d` is line-aligned;
    // `ahead` holds more than `(prefetched - 1) * LINE` bytes. AVX-512F is present when
    // `wide` (the caller's check); SSE2 is part of x86-64.
    unsafe {
        if wide {
            lines_avx512(d, s, lines, ahead.as_ptr(), prefetched);
        } else {
            lines_sse2(d, s, lines, ahead.as_ptr(), prefetched);
        }
    }
}

/// Whether [`stream_lines`] may use AVX-512 stores: the CPU has AVX-512F.
fn wide_stores() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The lines of [`stream_lines`] with SSE2.
///
/// # Safety
/// `d` and `s` are valid for `lines * LINE` bytes (writes, reads), `d` is 16-byte aligned, and
/// `ahead + k * LINE` is inside one allocation for `k < prefetched`.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn lines_sse2(d: *mut u8, s: *const u8, lines: usize, ahead: *const u8, prefetched: usize) {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_prefetch, _mm_stream_si128, _MM_HINT_T0,
    };
    for k in 0..lines {
        // SAFETY: the function's contract (the prefetch is a hint with no architectural
        // effect; the address stays inside `ahead`).
        unsafe {
            if k < prefetched {
                _mm_prefetch::<_MM_HINT_T0>(ahead.add(k * LINE).cast());
            }
            for b in (0..LINE).step_by(16) {
                let v = _mm_loadu_si128(s.add(k * LINE + b).cast::<__m128i>());
                _mm_stream_si128(d.add(k * LINE + b).cast::<__m128i>(), v);
            }
        }
    }
}

/// The lines of [`stream_lines`] with AVX-512F: one store per line.
///
/// # Safety
/// As [`lines_sse2`], with `d` 64-byte aligned and a CPU that has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn lines_avx512(
    d: *mut u8,
    s: *const u8,
    lines: usize,
    ahead: *const u8,
    prefetched: usize,
) {
    use std::arch::x86_64::{
        __m512i, _mm512_loadu_si512, _mm512_stream_si512, _mm_prefetch, _MM_HINT_T0,
    };
    for k in 0..lines {
        // SAFETY: the function's contract.
        unsafe {
            if k < prefetched {
                _mm_prefetch::<_MM_HINT_T0>(ahead.add(k * LINE).cast());
            }
            let v = _mm512_loadu_si512(s.add(k * LINE).cast::<__m512i>());
            _mm512_stream_si512(d.add(k * LINE).cast::<__m512i>(), v);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn stream_lines(dst: &mut [u8], src: &[u8], _ahead: &[u8], _wide: bool) {
    dst.copy_from_slice(src);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs `runs` through a streaming copier and through plain slice copies.
    fn both<T: Element>(dst_len: usize, src: &[T], runs: &[(usize, usize, usize)], fill: T) {
        let mut want = vec![fill; dst_len];
        for &(d, s, n) in runs {
            want[d..d + n].copy_from_slice(&src[s..s + n]);
        }
        // Plain copies, SSE2 streaming, and AVX-512 streaming where the CPU has it.
        for (stream, wide) in [(false, false), (true, false), (true, wide_stores())] {
            let mut got = vec![fill; dst_len];
            let mut c = StreamCopy::new(&mut got, src, stream);
            c.wide = wide;
            for &(d, s, n) in runs {
                c.run(d, s, n);
            }
            c.finish();
            assert!(got == want, "stream {stream}, wide {wide}");
        }
    }

    #[test]
    fn column_blocks_tiny_runs_and_unaligned_starts() {
        // Miri interprets every element: it gets fewer rows, still more runs than the ring
        // holds and more bytes than the prefetch distance.
        let (rows, odd_runs) = if cfg!(miri) {
            (12, RING + 8)
        } else {
            (128, 300)
        };
        assert!(odd_runs > RING && rows * 1024 > AHEAD);
        let src: Vec<f32> = (0..(512 * rows).max(211 * odd_runs + 100))
            .map(|i| i as f32)
            .collect();
        // The right half of every 512-wide row (1 KiB runs), packed.
        let halves: Vec<_> = (0..rows).map(|r| (256 * r, 512 * r + 256, 256)).collect();
        both(rows * 256, &src, &halves, -1.0);
        // Odd lengths and offsets: unaligned heads, tails, runs shorter than a line, a run
        // with no whole line, more runs than the queue holds.
        let odd: Vec<_> = (0..odd_runs)
            .map(|r| (97 * r + 1, 211 * r + 3, 17 + r % 80))
            .collect();
        both(97 * odd_runs + 200, &src, &odd, -1.0);
        let bytes: Vec<bool> = (0..5000).map(|i| i % 3 == 0).collect();
        both(4096, &bytes, &[(1, 7, 4000), (4001, 0, 70)], false);
    }

    proptest! {
        #[test]
        fn streaming_equals_plain_copies(
            lens in proptest::collection::vec(1usize..3000, 1..40),
            gaps in proptest::collection::vec(0usize..100, 40),
            src_at in proptest::collection::vec(0usize..20_000, 40),
        ) {
            let src: Vec<i64> = (0..24_000).collect();
            let mut at = 0;
            let runs: Vec<_> = lens.iter().enumerate().map(|(k, &n)| {
                let d = at + gaps[k];
                at = d + n;
                (d, src_at[k].min(24_000 - n), n)
            }).collect();
            both(at + 5, &src, &runs, -7);
        }
    }

    #[test]
    #[should_panic]
    fn a_run_outside_the_source_panics() {
        let src = [1u8; 10];
        let mut dst = [0u8; 10];
        StreamCopy::new(&mut dst, &src, true).run(0, 5, 6);
    }
}
