//! The shared test bodies (`tests/common`) under MPI: run as
//! `mpirun -np 4 target/.../mpi_conformance` (see `scripts/test-mpi`). Each case runs on
//! the whole world and on sub-communicators of 1, 2 and 3 ranks; rank 0 prints
//! `N passed, M failed` and the process exits non-zero on any failure.

mod common;
mod mpi_hardening;

use tessera::{DType, Tensor};
use tessera_dist::mpi_backend::MpiUniverse;
use tessera_dist::{Comm, PartialOp};

fn main() {
    let universe = match MpiUniverse::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("MPI init failed: {e}");
            std::process::exit(2);
        }
    };
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());
    if me == 0 {
        // TESSERA_DIST_MPI_THREADING=serialized runs the suite under the backend's lock (D9).
        let level = if universe.thread_multiple() {
            "MPI_THREAD_MULTIPLE"
        } else {
            "below MPI_THREAD_MULTIPLE: calls serialised"
        };
        println!("thread level: {level}");
    }
    let (mut passed, mut failed) = (0usize, 0usize);
    // Every rank's kernel pool holds its share of the host's cores (all ranks run on this
    // host here), unless RAYON_NUM_THREADS chose.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let want = (cores / size).max(1);
        let got = rayon::current_num_threads();
        let ok = got == want;
        if !ok {
            eprintln!("rank {me}: {got} kernel threads, expected {want}");
        }
        let flag = Tensor::from_slice(&[u8::from(!ok)], &[1]).unwrap();
        let any = world
            .all_reduce(&flag, PartialOp::Max)
            .unwrap()
            .to_vec::<u8>()
            .unwrap()[0];
        if me == 0 {
            println!(
                "kernel_threads_share_the_host: {}",
                if any == 0 { "ok" } else { "FAILED" }
            );
        }
        if any == 0 {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    let skip_common = std::env::var_os("TESSERA_DIST_HARDENING_CASE").is_some();
    for (name, body) in common::cases().into_iter().filter(|_| !skip_common) {
        for p in (1..=size).rev() {
            let sub: Comm = if p == size {
                world.clone()
            } else {
                world.split(usize::from(me >= p), me).expect("split")
            };
            let local: Result<(), String> = if me < p {
                body(sub).map_err(|e| e.to_string())
            } else {
                Ok(())
            };
            // Everyone learns whether any rank failed.
            let flag = Tensor::from_slice(&[u8::from(local.is_err())], &[1]).unwrap();
            let any = world
                .all_reduce(&flag, PartialOp::Max)
                .and_then(|t| Ok(t.astype(DType::I64)?.item::<i64>()?))
                .unwrap_or(1);
            if let Err(e) = &local {
                eprintln!("rank {me}: {name} (p = {p}) FAILED: {e}");
            }
            if any == 0 {
                passed += 1;
            } else {
                failed += 1;
            }
            if me == 0 {
                println!("{name} p={p}: {}", if any == 0 { "ok" } else { "FAILED" });
            }
        }
    }
    // D7 on the single-host path: rank 0 alone sends one row more than the counts say, which
    // its local check refuses; the other ranks must get an error too instead of waiting.
    if universe.shared_memory() && size >= 2 {
        let rows = |r: usize| if r == 0 && me == 0 { 257 } else { 256 };
        let send = Tensor::zeros(&[rows(0), 512], DType::F32).unwrap();
        let got = world.all_gather_axis(&send, 0, &vec![256; size]).map(drop);
        let name = "shm_local_refusal_errors_on_every_rank";
        tally(&world, name, got, &mut passed, &mut failed);
        // Rank 1 reduces with max where the others sum: their argument digests differ.
        let part = Tensor::ones(&[256 * size, 512], DType::F32).unwrap();
        let op = if me == 1 {
            PartialOp::Max
        } else {
            PartialOp::Sum
        };
        let got = world
            .reduce_scatter_axis(&part, 0, &vec![256; size], op)
            .map(drop);
        let name = "shm_argument_mismatch_errors_on_every_rank";
        tally(&world, name, got, &mut passed, &mut failed);
    }
    // D7 for every path: one rank's SPMD mistake is an error on every rank (issue 15).
    if size >= 2 {
        let only = std::env::var("TESSERA_DIST_HARDENING_CASE").ok();
        for (name, body) in mpi_hardening::cases() {
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let got = body(&world);
            tally(&world, name, got, &mut passed, &mut failed);
        }
    }
    if me == 0 {
        println!("{passed} passed, {failed} failed");
    }
    drop(universe);
    if failed > 0 {
        std::process::exit(1);
    }
}

/// Counts a case that must give every rank an error (`got` is this rank's result): passed when
/// no rank got `Ok`; rank 0 prints the verdict.
fn tally(
    world: &Comm,
    name: &str,
    got: tessera_dist::Result<()>,
    passed: &mut usize,
    failed: &mut usize,
) {
    let flag = Tensor::from_slice(&[u8::from(got.is_ok())], &[1]).unwrap();
    let any_ok = world
        .all_reduce(&flag, PartialOp::Max)
        .and_then(|t| Ok(t.astype(DType::I64)?.item::<i64>()?))
        .unwrap_or(1);
    if any_ok == 0 {
        *passed += 1;
    } else {
        eprintln!("rank {}: {name} gave {got:?}", world.rank());
        *failed += 1;
    }
    if world.rank() == 0 {
        println!("{name}: {}", if any_ok == 0 { "ok" } else { "FAILED" });
    }
}
