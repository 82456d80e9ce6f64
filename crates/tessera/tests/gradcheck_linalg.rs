//! Gradient-check cases of the matrix products (`matmul`, `dot`) and the factorizations
//! (`det`, `slogdet`, `inv`, `solve`, `cholesky`, `eigh`, `eigvalsh`, `svd`, `svdvals`), added
//! to the gate's table by `add_cases`. Factorized matrices
//! are diagonally dominant (well conditioned, so central differences are accurate, and
//! positive definite where `cholesky` needs it); stacks of two where the layout allows.

use std::collections::BTreeMap;

use rand::Rng;

use super::{input, p, Builder, Case, Layout, Values};

const N: usize = 3;

/// A square input under layout `l`: a stack `[2, 3, 3]` (its leaf `[1, 3, 3]` when expanded),
/// a single `[3, 3]` matrix when transposed or flipped (a flipped dominant matrix is a row
/// permutation of one: still well conditioned, though no longer positive definite, so
/// `symmetric` cases see it unflipped).
fn square(l: Layout, symmetric: bool) -> super::Input {
    match l {
        Layout::Transposed => input(&[N, N], l, Values::Dominant(N)),
        Layout::Reversed if symmetric => input(&[N, N], Layout::Contiguous, Values::Dominant(N)),
        Layout::Reversed => input(&[N, N], l, Values::Dominant(N)),
        _ => input(&[2, N, N], l, Values::Dominant(N)),
    }
}

fn one(name: &'static str, symmetric: bool, c: &mut BTreeMap<&'static str, Builder>) {
    c.insert(
        name,
        Box::new(move |_, l| Case {
            inputs: vec![square(l, symmetric)],
            params: vec![],
            csr_lhs: false,
        }),
    );
}

/// Adds one case builder per differentiable product and factorization.
pub(super) fn add_cases(c: &mut BTreeMap<&'static str, Builder>) {
    c.insert(
        "matmul",
        Box::new(|rng, l| {
            // 2-D; stacks with broadcast batch dims (stretched and added); 1-D operands.
            let (a, b): (&[usize], &[usize]) = match rng.random_range(0..6) {
                0 => (&[3, 4], &[4, 2]),
                1 => (&[2, 3, 4], &[4, 2]),
                2 => (&[2, 1, 3, 4], &[3, 4, 2]),
                3 => (&[4], &[2, 4, 3]),
                4 => (&[2, 3, 4], &[4]),
                _ => (&[4], &[4]),
            };
            let lb = if b.len() == 2 {
                Layout::Transposed
            } else {
                Layout::Contiguous
            };
            Case {
                inputs: vec![input(a, l, Values::Any), input(b, lb, Values::Any)],
                params: vec![],
                csr_lhs: false,
            }
        }),
    );
    c.insert(
        "dot",
        Box::new(|rng, l| {
            let (a, b, t): (Vec<usize>, Vec<usize>, bool) = match rng.random_range(0..6) {
                0 => (vec![3, 4], vec![4, 2], false),
                1 => (vec![4], vec![4], false),
                2 => (vec![3, 4], vec![4], false),
                3 => (vec![4], vec![4, 2], false),
                4 => (vec![4, 3], vec![4, 2], true),
                _ => (vec![4, 3], vec![4], true),
            };
            // A third of the 2-D cases take a csr lhs: the rhs gradient is then row_sparse.
            let csr = a.len() == 2 && rng.random_range(0..3) == 0;
            Case {
                inputs: vec![
                    input(&a, if csr { Layout::Contiguous } else { l }, Values::Any),
                    input(&b, Layout::Contiguous, Values::Any),
                ],
                params: vec![p("transpose_a", t)],
                csr_lhs: csr,
            }
        }),
    );
    one("det", false, c);
    one("slogdet", false, c);
    one("inv", false, c);
    one("eigh", true, c);
    one("eigvalsh", true, c);
    one("svdvals", false, c);
    c.insert(
        "svd",
        Box::new(|rng, l| Case {
            inputs: vec![square(l, false)],
            params: vec![p("full_matrices", rng.random_bool(0.5))],
            csr_lhs: false,
        }),
    );
    c.insert(
        "cholesky",
        Box::new(|rng, l| Case {
            inputs: vec![square(l, true)],
            params: vec![p("upper", rng.random_bool(0.5))],
            csr_lhs: false,
        }),
    );
    c.insert(
        "solve",
        Box::new(|rng, l| {
            let a = square(l, false);
            // b: one vector, a matrix of two columns, or a stack broadcast against a's batch.
            let b = match rng.random_range(0..3) {
                0 => input(&[N], Layout::Contiguous, Values::Any),
                1 => input(&[N, 2], Layout::Transposed, Values::Any),
                _ => input(&[2, N, 2], Layout::Expanded, Values::Any),
            };
            Case {
                inputs: vec![a, b],
                params: vec![],
                csr_lhs: false,
            }
        }),
    );
}
