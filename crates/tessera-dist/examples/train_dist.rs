//! Distributed training (docs/design.md D11): data-parallel sparse logistic regression (its
//! row_sparse gradient reduced as row_sparse) and a hybrid-parallel MLP (data parallel on one
//! mesh axis, model parallel on the other; data parallel on an odd number of ranks). Prints
//! the loss every few steps and each rank's throughput.
//!
//! In-process ranks (the thread backend), 4 by default:
//! `cargo run --release -p tessera-dist --example train_dist -- 4`
//!
//! MPI processes (one machine, or several with a host file; see the README):
//! `cargo build --release -p tessera-dist --features mpi --example train_dist`, then
//! `mpirun -np 4 target/release/examples/train_dist`.
//!
//! `--quick` runs a few steps of small jobs (what `scripts/test-mpi` runs).

#[path = "parallel/jobs.rs"]
mod jobs;

use jobs::{LogRegJob, MlpJob, Points, Run};
use tessera_dist::train::mlp::Parallelism;
use tessera_dist::{Comm, Result};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    #[cfg(feature = "mpi")]
    if std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() {
        let universe = match tessera_dist::mpi_backend::MpiUniverse::init() {
            Ok(u) => u,
            Err(e) => {
                eprintln!("MPI init failed: {e}");
                std::process::exit(2);
            }
        };
        let world = universe.world();
        let rank = world.rank();
        let ok = report(rank, body(world, quick));
        drop(universe);
        std::process::exit(if ok { 0 } else { 1 });
    }
    let ranks = args
        .iter()
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(4)
        .max(1);
    println!("{ranks} in-process ranks (thread backend)");
    let results = tessera_dist::run_ranks(ranks, move |comm| body(comm, quick));
    let mut ok = true;
    for (rank, r) in results.into_iter().enumerate() {
        ok &= report(rank, r.unwrap_or_else(Err));
    }
    std::process::exit(if ok { 0 } else { 1 });
}

/// Prints a rank's lines or its error; whether it succeeded.
fn report(rank: usize, lines: Result<Vec<String>>) -> bool {
    match lines {
        Ok(lines) => {
            for l in lines {
                println!("{l}");
            }
            true
        }
        Err(e) => {
            eprintln!("rank {rank}: {e}");
            false
        }
    }
}

/// The loss at a few steps (rank 0 only) and this rank's throughput.
fn describe(name: &str, run: &Run, rank: usize, ranks: usize, lines: &mut Vec<String>) {
    if rank == 0 {
        lines.push(format!("== {name} on {ranks} ranks"));
        let every = run.losses.len().div_ceil(6).max(1);
        for (i, l) in run.losses.iter().enumerate() {
            if i % every == 0 || i + 1 == run.losses.len() {
                lines.push(format!("  step {i:>4}  loss {l:.4}"));
            }
        }
    }
    lines.push(format!(
        "rank {rank}: {name}: {:.0} samples/s ({:.0} for all ranks), {:.2} ms a step, {} gradient bytes received a step",
        run.throughput() / ranks as f64,
        run.throughput(),
        run.step_secs() * 1e3,
        run.bytes
    ));
}

fn body(comm: Comm, quick: bool) -> Result<Vec<String>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let mut lines = Vec::new();
    let logreg = if quick {
        LogRegJob {
            features: 5_000,
            docs: 2_000,
            words: 20,
            batch: 128,
            steps: 8,
        }
    } else {
        LogRegJob {
            features: 100_000,
            docs: 50_000,
            words: 60,
            batch: 1024,
            steps: 120,
        }
    };
    let run = jobs::logreg_dp(comm.clone(), logreg)?;
    describe(
        &format!(
            "data-parallel sparse logistic regression ({} features)",
            logreg.features
        ),
        &run,
        rank,
        ranks,
        &mut lines,
    );
    let par = if ranks % 2 == 0 {
        Parallelism::Hybrid
    } else {
        Parallelism::Data
    };
    let job = MlpJob {
        dims: vec![2, 64, 64, 3],
        batch: 256,
        steps: if quick { 10 } else { 600 },
        points: Points::Spirals,
        overlap: (true, tessera_dist::train::DEFAULT_BUCKET_BYTES),
    };
    let run = jobs::mlp_parallel(comm, par, &job)?;
    let mesh = par.mesh_shape(ranks)?;
    describe(
        &format!("{par:?}-parallel MLP 2-64-64-3 on mesh {mesh:?}"),
        &run,
        rank,
        ranks,
        &mut lines,
    );
    Ok(lines)
}
