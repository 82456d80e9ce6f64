//! The shared cases (conformance oracle, D4 examples, every boxing pair, collectives) on the
//! thread backend for p in {1, 2, 3, 4}.

mod common;

use tessera_dist::run_ranks;

fn run_case(name: &str, body: fn(tessera_dist::Comm) -> tessera_dist::Result<()>) {
    for p in 1..=4 {
        for (rank, r) in run_ranks(p, body).into_iter().enumerate() {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("{name}, p = {p}, rank {rank}: {e}"),
                Err(e) => panic!("{name}, p = {p}, rank {rank}: {e}"),
            }
        }
    }
}

macro_rules! shared_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            let case = common::cases().into_iter().find(|c| c.0 == stringify!($name)).unwrap();
            run_case(case.0, case.1);
        }
    )*};
}

shared_tests!(
    conformance_1d,
    conformance_2x2,
    d4_seed_expand_split_last_axis,
    d4_expand_size1_shards,
    d6_every_boxing_pair_1d,
    d6_every_boxing_pair_2x2,
    collectives_uneven_counts,
    d6_all_to_all_layouts_and_dtypes,
    d6_axis_collectives_against_slices,
    d10_gradients_1d,
    d10_gradients_2x2,
    d10_gradients_refused,
    d11_mlp_matches_single_process,
    d11_logreg_matches_single_process,
    d11_training_refusals
);

#[test]
fn every_shared_case_has_a_test() {
    assert_eq!(common::cases().len(), 15);
}

#[test]
fn tour_section_runs() {
    tessera_dist::tour_section().unwrap();
}
