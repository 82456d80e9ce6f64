//! Gradient-check cases of the factorizations (`det`, `slogdet`, `inv`, `solve`, `cholesky`,
//! `eigh`, `eigvalsh`, `svd`, `svdvals`), added to the gate's table by `add_cases`. Matrices
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

/// Adds one case builder per differentiable factorization.
pub(super) fn add_cases(c: &mut BTreeMap<&'static str, Builder>) {
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
