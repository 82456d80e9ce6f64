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
    if me == 0 {
        println!("{passed} passed, {failed} failed");
    }
    drop(universe);
    if failed > 0 {
        std::process::exit(1);
    }
}
