//! The shared test bodies (`tests/common`) under MPI: run as
//! `mpirun -np 4 target/.../mpi_conformance` (see `scripts/test-mpi`). Each case runs on
//! the whole world and on sub-communicators of 1, 2 and 3 ranks; rank 0 prints
//! `N passed, M failed` and the process exits non-zero on any failure.

mod common;

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
    let (mut passed, mut failed) = (0usize, 0usize);
    for (name, body) in common::cases() {
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
    // D7 under cross-memory attach with every block moved that way: rank 1 expects a [2, 2]
    // block from rank 0, which sends [2, 3]. The two ranks of that block detect it; every
    // rank must get an error. (Without CMA, MPI_Alltoallw would abort the job instead.)
    if universe.cross_memory_attach()
        && std::env::var("TESSERA_DIST_CMA_MIN_BYTES").as_deref() == Ok("0")
        && size >= 2
    {
        let m = |r: usize, c: usize| Tensor::zeros(&[r, c], DType::F32).unwrap();
        let send: Vec<Tensor> = (0..size).map(|_| m(2, 3)).collect();
        let recv: Vec<Tensor> = (0..size)
            .map(|r| if me == 1 && r == 0 { m(2, 2) } else { m(2, 3) })
            .collect();
        let got = world.all_to_all_views(&send, &recv);
        let name = "cma_mismatch_errors_on_every_rank";
        tally(&world, name, got, &mut passed, &mut failed);
    }
    // D7 under cross-memory attach: rank 0 alone passes a recv view that shares storage with
    // its send views, which its local check refuses; the other ranks must get an error too
    // instead of waiting for rank 0 (without CMA, that is an SPMD mismatch that may hang).
    if universe.cross_memory_attach() && size >= 2 {
        let m = || Tensor::zeros(&[2, 3], DType::F32).unwrap();
        let shared = m();
        let send: Vec<Tensor> = (0..size)
            .map(|_| if me == 0 { shared.clone() } else { m() })
            .collect();
        let recv: Vec<Tensor> = (0..size)
            .map(|r| {
                if me == 0 && r == 1 {
                    shared.clone()
                } else {
                    m()
                }
            })
            .collect();
        let got = world.all_to_all_views(&send, &recv);
        let name = "cma_local_refusal_errors_on_every_rank";
        tally(&world, name, got, &mut passed, &mut failed);
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
