//! The flat driver: a loop over two slices laid out alike, cut into pieces across rayon's
//! threads (docs/design.md P2: the vectorised functions' flat loops).

use rayon::prelude::*;

use super::elementwise::PAR_MIN_COSTLY;
use super::simd::STREAM_BYTES;
use super::stream::LINE;

/// `run(out_piece, a_piece)` over matching pieces of two slices of one length, across
/// rayon's threads from [`PAR_MIN_COSTLY`] elements (the loops it drives are the costly
/// vectorised functions): the driver of flat loops over operands laid out
/// alike (`tensor/vector_math.rs`). Pieces are at least 4096 elements, four per thread.
/// Callers pass slices of one length (checked: a mismatch is a bug, and panics).
pub(crate) fn drive_flat<O: Send, A: Sync>(
    out: &mut [O],
    a: &[A],
    run: &(dyn Fn(&mut [O], &[A]) + Sync),
) {
    assert_eq!(
        out.len(),
        a.len(),
        "drive_flat: slices of different lengths"
    );
    let h = skew_head(a);
    if h > 0 {
        run(&mut out[..h], &a[..h]);
    }
    let (out, a) = (&mut out[h..], &a[h..]);
    let n = out.len();
    if n < super::parallel::cut_over(PAR_MIN_COSTLY) || !super::parallel::enabled() {
        return run(out, a);
    }
    let piece = piece_len(n);
    out.par_chunks_mut(piece)
        .zip(a.par_chunks(piece))
        .for_each(|(o, a)| run(o, a));
}

/// Where in its first cache line a streamed input's loads start: 16 bytes in.
const LOAD_SKEW: usize = 16;

/// The leading elements a flat driver runs on their own so that the loop over the rest of a
/// streamed input (`simd::STREAM_BYTES` or more) loads from [`LOAD_SKEW`] bytes into each
/// cache line rather than from its start; 0 for smaller inputs and for elements that cannot
/// sit there. On this project's AMD Zen 4 VMs, a comparison or predicate of 16 Mi `f32`
/// from 64-byte-aligned buffers ran 7-11% slower than the same loop with its loads 16
/// bytes in (each vector load then also touches the next line, which arrives sooner);
/// docs/performance.md has the measurements.
fn skew_head<A>(a: &[A]) -> usize {
    let size = std::mem::size_of::<A>();
    // `is_multiple_of(0)` is false for 16: zero-sized elements take no head either.
    if std::mem::size_of_val(a) < STREAM_BYTES || !LOAD_SKEW.is_multiple_of(size) {
        return 0;
    }
    let into_line = a.as_ptr() as usize % LINE;
    let bytes = (LOAD_SKEW + LINE - into_line) % LINE;
    match bytes.is_multiple_of(size) {
        true => bytes / size,
        false => 0,
    }
}

/// The piece length of the flat drivers for `n` elements: four pieces a thread, at least
/// 4096 elements each.
fn piece_len(n: usize) -> usize {
    n.div_ceil(4 * super::parallel::num_threads()).max(4096)
}

/// The loop [`drive_flat2`] runs over each piece: `(out, a, b)`.
pub(crate) type Loop2<'f, O, A> = dyn Fn(&mut [O], &[A], &[A]) + Sync + 'f;

/// [`drive_flat`] for a function of two operands: `run(out_piece, a_piece, b_piece)` over
/// matching pieces of three slices of one length (checked, as there).
pub(crate) fn drive_flat2<O: Send, A: Sync>(
    out: &mut [O],
    a: &[A],
    b: &[A],
    run: &Loop2<'_, O, A>,
) {
    let n = out.len();
    assert!(
        a.len() == n && b.len() == n,
        "drive_flat2: slices of different lengths"
    );
    let h = skew_head(a);
    if h > 0 {
        run(&mut out[..h], &a[..h], &b[..h]);
    }
    let (out, a, b) = (&mut out[h..], &a[h..], &b[h..]);
    let n = out.len();
    if n < super::parallel::cut_over(PAR_MIN_COSTLY) || !super::parallel::enabled() {
        return run(out, a, b);
    }
    let piece = piece_len(n);
    out.par_chunks_mut(piece)
        .zip(a.par_chunks(piece))
        .zip(b.par_chunks(piece))
        .for_each(|((o, a), b)| run(o, a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drive_flat_visits_every_element_once_in_matching_pieces() {
        for n in [0, 5, PAR_MIN_COSTLY - 1, PAR_MIN_COSTLY + 4097] {
            let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let mut out = vec![-1.0; n];
            drive_flat(&mut out, &a, &|o: &mut [f64], a: &[f64]| {
                assert_eq!(o.len(), a.len());
                o.iter_mut().zip(a).for_each(|(o, x)| *o = 2.0 * x + 1.0)
            });
            assert!(out.iter().zip(&a).all(|(o, x)| *o == 2.0 * x + 1.0), "{n}");
        }
    }

    /// The index from which `xs` starts `into` bytes into a cache line.
    fn start_at<T>(xs: &[T], into: usize) -> usize {
        (0..64)
            .find(|&i| xs.as_ptr().wrapping_add(i) as usize % 64 == into)
            .expect("an element that many bytes into a line")
    }

    #[test]
    fn streamed_inputs_start_their_loop_16_bytes_into_a_line() {
        let big = STREAM_BYTES / 4 + 64;
        let f32s = vec![0f32; big];
        for (into, head) in [(0, 4), (16, 0), (20, 15), (60, 5)] {
            let i = start_at(&f32s, into);
            assert_eq!(skew_head(&f32s[i..]), head, "f32 {into}");
        }
        let f64s = vec![0f64; big];
        assert_eq!(skew_head(&f64s[start_at(&f64s, 0)..]), 2);
        assert_eq!(skew_head(&f64s[start_at(&f64s, 24)..]), 7);
        let bytes = vec![0u8; STREAM_BYTES + 64];
        assert_eq!(skew_head(&bytes[start_at(&bytes, 3)..]), 13);
        // In the caches, or elements too wide to sit 16 bytes in: no head.
        assert_eq!(skew_head(&f32s[..1024]), 0);
        let wide = vec![[0f64; 4]; STREAM_BYTES / 32 + 8];
        assert_eq!(skew_head(&wide), 0);
    }

    #[test]
    fn streamed_inputs_are_visited_once_from_every_start() {
        let n = STREAM_BYTES / 4 + 100;
        let a: Vec<f32> = (0..n).map(|i| (i % 4099) as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 37) as f32).collect();
        for into in [0, 4, 16, 44] {
            let i = start_at(&a, into);
            let (a, b) = (&a[i..], &b[i..]);
            let mut one = vec![-1.0f32; a.len()];
            drive_flat(&mut one, a, &|o: &mut [f32], a: &[f32]| {
                o.iter_mut().zip(a).for_each(|(o, x)| *o = 2.0 * x + 1.0)
            });
            assert!(
                one.iter().zip(a).all(|(o, x)| *o == 2.0 * x + 1.0),
                "{into}"
            );
            let mut two = vec![-1.0f32; a.len()];
            drive_flat2(&mut two, a, b, &|o: &mut [f32], a: &[f32], b: &[f32]| {
                for ((o, x), y) in o.iter_mut().zip(a).zip(b) {
                    *o = x - y;
                }
            });
            assert!(
                two.iter()
                    .zip(a.iter().zip(b))
                    .all(|(o, (x, y))| *o == x - y),
                "{into}"
            );
        }
    }
}
