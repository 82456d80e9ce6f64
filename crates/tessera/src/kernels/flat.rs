//! The flat driver: a loop over two slices laid out alike, cut into pieces across rayon's
//! threads (docs/design.md P2: the vectorised functions' flat loops).

use rayon::prelude::*;

use super::elementwise::PAR_MIN_COSTLY;

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
    let n = out.len();
    if n < super::parallel::cut_over(PAR_MIN_COSTLY) || !super::parallel::enabled() {
        return run(out, a);
    }
    let piece = piece_len(n);
    out.par_chunks_mut(piece)
        .zip(a.par_chunks(piece))
        .for_each(|(o, a)| run(o, a));
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
}
