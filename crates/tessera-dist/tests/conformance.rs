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

/// Ranks that place a parameter differently (D7): building the optimiser is an error on every
/// rank, and so is a training step whose placements differ between ranks (its collectives do
/// not match), within the group's timeout.
#[test]
fn d11_mismatched_placements_are_errors_on_every_rank() {
    use tessera::optim::Sgd;
    use tessera::{DType, Tensor};
    use tessera_dist::train::DistOptimizer;
    use tessera_dist::{autograd, ops, Comm, GlobalTensor, Mesh, Sbp};
    let weight = |comm: &Comm| -> tessera_dist::Result<(std::sync::Arc<Mesh>, GlobalTensor)> {
        let mesh = Mesh::line(comm.clone());
        let sbp = if comm.rank() == 0 {
            Sbp::Broadcast
        } else {
            Sbp::Split(0)
        };
        let w = GlobalTensor::from_logical(&Tensor::ones(&[4, 2], DType::F64)?, &[sbp], &mesh)?;
        Ok((mesh, w.requires_grad_(true)?))
    };
    let build = |comm: Comm| -> tessera_dist::Result<()> {
        let (_, w) = weight(&comm)?;
        DistOptimizer::new(vec![w], |p| Sgd::new(p, 0.1, 0.0)).map(|_| ())
    };
    let step = |comm: Comm| -> tessera_dist::Result<()> {
        let (mesh, w) = weight(&comm)?;
        let x = Tensor::ones(&[3, 4], DType::F64)?;
        let x = GlobalTensor::from_logical(&x, &[Sbp::Split(0)], &mesh)?;
        let loss = ops::reduce(&ops::matmul(&x, &w)?, "sum", None, false)?;
        autograd::backward(&loss)?;
        w.grad()?.map(|g| g.to_sbp(&[Sbp::Broadcast])).transpose()?;
        Ok(())
    };
    let timeout = std::time::Duration::from_secs(5);
    for p in 2..=3 {
        for (what, out) in [
            (
                "optimiser",
                tessera_dist::run_ranks_with_timeout(p, timeout, build),
            ),
            (
                "step",
                tessera_dist::run_ranks_with_timeout(p, timeout, step),
            ),
        ] {
            for (rank, r) in out.into_iter().enumerate() {
                assert!(
                    matches!(r, Ok(Err(_))),
                    "{what}, p = {p}, rank {rank}: mismatched placements gave {r:?}"
                );
            }
        }
    }
}
