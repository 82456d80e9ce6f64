//! Gradient-check cases of the Array API functions (`sort`, `where`, `cumulative_sum`,
//! `cumulative_prod`, `concat`, `stack`), added to the gate's table by `add_cases`.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::Rng;

use super::{input, p, Builder, Case, Layout, Values};

fn axis(rng: &mut StdRng) -> isize {
    if rng.random_bool(0.5) {
        0
    } else {
        -1
    }
}

/// Adds one case builder per differentiable Array API op.
pub(super) fn add_cases(c: &mut BTreeMap<&'static str, Builder>) {
    // Random draws make ties (where sort has no derivative) improbable; an expanded input
    // would tie every copy, so sort sees transposed values instead.
    c.insert(
        "sort",
        Box::new(|rng, l| Case {
            inputs: vec![input(
                &[3, 4],
                if matches!(l, Layout::Expanded) {
                    Layout::Transposed
                } else {
                    l
                },
                Values::Any,
            )],
            params: vec![p("axis", axis(rng)), p("descending", rng.random_bool(0.5))],
            csr_lhs: false,
        }),
    );
    c.insert(
        "where",
        Box::new(|rng, l| {
            let other: Vec<usize> = if rng.random_bool(0.5) {
                vec![4]
            } else {
                vec![3, 4]
            };
            Case {
                inputs: vec![
                    input(&[3, 1], Layout::Contiguous, Values::Ids(2)),
                    input(&[3, 4], l, Values::Any),
                    input(&other, Layout::Contiguous, Values::Any),
                ],
                params: vec![],
                csr_lhs: false,
            }
        }),
    );
    for name in ["cumulative_sum", "cumulative_prod"] {
        c.insert(
            name,
            Box::new(|rng, l| Case {
                inputs: vec![input(&[3, 4], l, Values::Any)],
                params: vec![
                    p("axis", axis(rng)),
                    p("include_initial", rng.random_bool(0.5)),
                ],
                csr_lhs: false,
            }),
        );
    }
    c.insert(
        "concat",
        Box::new(|rng, l| {
            let flat = rng.random_bool(0.3);
            Case {
                inputs: vec![
                    input(&[2, 3], l, Values::Any),
                    input(&[1, 3], Layout::Contiguous, Values::Any),
                    input(&[2, 3], Layout::Reversed, Values::Any),
                ],
                params: vec![p(
                    "axis",
                    if flat {
                        "None".to_string()
                    } else {
                        "0".to_string()
                    },
                )],
                csr_lhs: false,
            }
        }),
    );
    c.insert(
        "stack",
        Box::new(|rng, l| Case {
            inputs: vec![
                input(&[2, 3], l, Values::Any),
                input(&[2, 3], Layout::Contiguous, Values::Any),
            ],
            params: vec![p("axis", rng.random_range(-3..3))],
            csr_lhs: false,
        }),
    );
    c.insert(
        "repeat_interleave",
        Box::new(|rng, l| {
            let flat = rng.random_bool(0.3);
            Case {
                inputs: vec![
                    input(&[3, 4], l, Values::Any),
                    input(
                        &[if flat { 12 } else { 4 }],
                        Layout::Contiguous,
                        Values::Ids(3),
                    ),
                ],
                params: vec![p(
                    "axis",
                    if flat {
                        "None".to_string()
                    } else {
                        "1".to_string()
                    },
                )],
                csr_lhs: false,
            }
        }),
    );
}
