//! D7/D8: an SPMD mismatch, a panicking rank or a missing rank gives every rank an error,
//! never a hang (thread backend).

use std::time::{Duration, Instant};

use tessera::{DType, Tensor};
use tessera_dist::{run_ranks, run_ranks_with_timeout, DistError, PartialOp};

fn ones(n: usize) -> Tensor {
    Tensor::ones(&[n], DType::F32).unwrap()
}

#[test]
fn d8_different_collectives_error_on_every_rank() {
    let out = run_ranks(3, |c| {
        if c.rank() == 1 {
            c.all_reduce(&ones(4), PartialOp::Sum).map(drop)
        } else {
            c.all_gather_v(&ones(1), &[1, 1, 1]).map(drop)
        }
    });
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Mismatch(_))));
    }
}

#[test]
fn d8_inconsistent_sizes_error_on_every_rank() {
    let out = run_ranks(4, |c| {
        c.all_reduce(&ones(3 + c.rank() % 2), PartialOp::Sum)
            .map(drop)
    });
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Mismatch(_))));
    }
    let out = run_ranks(2, |c| {
        let op = if c.rank() == 0 {
            PartialOp::Sum
        } else {
            PartialOp::Max
        };
        c.all_reduce(&ones(2), op).map(drop)
    });
    assert!(out.into_iter().all(|r| r.unwrap().is_err()));
    let out = run_ranks(2, |c| c.all_gather_v(&ones(2), &[1, 1]).map(drop));
    assert!(out.into_iter().all(|r| r.unwrap().is_err()));
    let out = run_ranks(2, |c| {
        let recv = if c.rank() == 0 { [1, 2] } else { [1, 1] };
        c.all_to_all_v(&ones(2), &[1, 1], &recv).map(drop)
    });
    assert!(out.into_iter().all(|r| r.unwrap().is_err()));
}

#[test]
fn d8_a_panicking_rank_errors_every_other_rank() {
    let start = Instant::now();
    let out = run_ranks(4, |c| {
        if c.rank() == 2 {
            panic!("rank 2 fails");
        }
        c.barrier()?;
        c.all_reduce(&ones(2), PartialOp::Sum).map(drop)
    });
    assert!(start.elapsed() < Duration::from_secs(10));
    for (rank, r) in out.into_iter().enumerate() {
        match (rank, r) {
            (2, Err(DistError::RankPanicked { rank: 2, message })) => {
                assert!(message.contains("rank 2 fails"))
            }
            (_, Ok(Err(DistError::Aborted(_)))) => {}
            (rank, other) => panic!("rank {rank}: {other:?}"),
        }
    }
}

#[test]
fn d8_a_missing_rank_errors_the_others() {
    // Rank 0 returns without joining: the others see it leave and fail at once.
    let out = run_ranks(3, |c| {
        if c.rank() == 0 {
            return Ok(());
        }
        c.barrier()
    });
    assert!(out[0].as_ref().unwrap().is_ok());
    for r in &out[1..] {
        assert!(matches!(r.as_ref().unwrap(), Err(DistError::Aborted(_))));
    }
}

#[test]
fn d8_waits_time_out() {
    // Rank 1 is slow (still alive, holding its handle): rank 0's wait times out and the
    // group is aborted, so rank 1's late collective fails too.
    let start = Instant::now();
    let out = run_ranks_with_timeout(2, Duration::from_millis(200), |c| {
        if c.rank() == 1 {
            std::thread::sleep(Duration::from_millis(600));
        }
        c.barrier()
    });
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        out[0].as_ref().unwrap(),
        Err(DistError::Timeout(_))
    ));
    assert!(out[1].as_ref().unwrap().is_err());
}

#[test]
fn d8_reductions_are_bit_identical_on_every_rank() {
    let out = run_ranks(4, |c| {
        let v: Vec<f32> = (0..1000)
            .map(|i| ((i * (c.rank() + 3)) as f32).sin() * 1e-3 + 1e4)
            .collect();
        let t = Tensor::from_vec(v, &[1000]).unwrap();
        c.all_reduce(&t, PartialOp::Sum)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    });
    let first = out[0].as_ref().unwrap();
    for r in &out {
        let r = r.as_ref().unwrap();
        assert!(r.iter().zip(first).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

#[test]
fn bad_placements_are_typed_errors() {
    let out = run_ranks(2, |c| {
        let mesh = tessera_dist::Mesh::line(c.clone());
        let t = ones(3);
        let bad_axis =
            tessera_dist::GlobalTensor::from_logical(&t, &[tessera_dist::Sbp::Split(1)], &mesh);
        let bad_local = tessera_dist::GlobalTensor::from_local(
            t,
            &[3],
            &[tessera_dist::Sbp::Split(0)],
            &mesh,
            true,
        );
        let bad_mesh = tessera_dist::Mesh::new(c, &[3]);
        (bad_axis.is_err(), bad_local.is_err(), bad_mesh.is_err())
    });
    for r in out {
        assert_eq!(r.unwrap(), (true, true, true));
    }
}

#[test]
fn d8_bad_all_to_all_views_error_on_every_rank() {
    let m = |r: usize, c: usize| Tensor::zeros(&[r, c], DType::F32).unwrap();
    // Rank 1 expects a [2, 2] block from rank 0, which sends [2, 3].
    let out = run_ranks(2, |c| {
        let recv = if c.rank() == 1 {
            vec![m(2, 2), m(2, 3)]
        } else {
            vec![m(2, 3), m(2, 3)]
        };
        c.all_to_all_views(&[m(2, 3), m(2, 3)], &recv)
    });
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Mismatch(_))));
    }
    // One rank passes too few views.
    let out = run_ranks(3, |c| {
        let n = if c.rank() == 2 { 2 } else { 3 };
        let views: Vec<Tensor> = (0..n).map(|_| ones(2)).collect();
        let recv: Vec<Tensor> = (0..n).map(|_| ones(2)).collect();
        c.all_to_all_views(&views, &recv)
    });
    assert!(out.into_iter().all(|r| r.unwrap().is_err()));
    // Every rank passes 3 send views and 1 recv view (4 = 2p views in all): an error, not a
    // split of the list at the wrong place.
    let out = run_ranks(2, |c| {
        let send: Vec<Tensor> = (0..3).map(|_| ones(2)).collect();
        c.all_to_all_views(&send, &[ones(2)])
    });
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Mismatch(_))));
    }
    // Rank 0 receives into the tensor rank 1 sends from (shared between the threads).
    let shared = ones(4);
    let out = run_ranks(2, |c| {
        let own = ones(4);
        let piece = |t: &Tensor, i: usize| {
            t.view(&[2, 2])
                .unwrap()
                .index(&[tessera::index::IndexSpec::Point(i as isize)])
        };
        let send = if c.rank() == 1 { &shared } else { &own };
        let recv = if c.rank() == 0 { &shared } else { &own };
        let send: Vec<Tensor> = (0..2).map(|i| piece(send, i).unwrap()).collect();
        let recv: Vec<Tensor> = (0..2).map(|i| piece(recv, i).unwrap()).collect();
        c.all_to_all_views(&send, &recv)
    });
    for r in out {
        assert!(matches!(r.unwrap(), Err(DistError::Placement(_))));
    }
    // Mixed dtypes on one rank.
    let out = run_ranks(1, |c| {
        c.all_to_all_views(&[ones(2)], &[Tensor::zeros(&[2], DType::F64).unwrap()])
    });
    assert!(matches!(
        out[0].as_ref().unwrap(),
        Err(DistError::Mismatch(_))
    ));
}

/// A 4 TiB stride-0 view: packing it for the flat collective fails to allocate.
fn huge_rows(rows: usize) -> Tensor {
    Tensor::ones(&[1, 1024], DType::F32)
        .unwrap()
        .expand(&[rows as isize, 1024])
        .unwrap()
}

#[test]
fn d7_a_packing_failure_on_one_rank_errors_every_rank() {
    // Rank 0's shard cannot be packed (its allocation fails); it still takes part in the
    // flat collective, which every rank then refuses: the peers get the mismatch at once,
    // not `Aborted` when rank 0 leaves or a wait for a rank that went on.
    let counts = [1 << 30, 1, 1];
    let out = run_ranks(3, |c| {
        let send = if c.rank() == 0 {
            huge_rows(counts[0])
        } else {
            Tensor::ones(&[1, 1024], DType::F32).unwrap()
        };
        let got = c.all_gather_axis(&send, 0, &counts).map(drop);
        // Every rank goes on with the next collective, as a program that handles the error.
        let next = c.all_reduce(&ones(4), PartialOp::Sum).map(drop);
        (got, next)
    });
    for (r, o) in out.into_iter().enumerate() {
        let (got, next) = o.unwrap();
        match (r, got) {
            (0, Err(DistError::Tensor(e)))
                if matches!(e.kind(), tessera::ErrorKind::Allocation(_)) => {}
            (r, Err(DistError::Placement(m))) if r > 0 => assert!(m.contains("rank 0"), "{m}"),
            (r, got) => panic!("rank {r}: {got:?}"),
        }
        assert!(next.is_ok(), "rank {r}: the next collective gave {next:?}");
    }
    // The same for the packing of a reduce-scatter's slices (axis 1: not row blocks).
    let out = run_ranks(2, |c| {
        let send = if c.rank() == 0 {
            Tensor::ones(&[1, 2], DType::F32)
                .unwrap()
                .expand(&[1 << 40, 2])
                .unwrap()
        } else {
            Tensor::ones(&[1 << 20, 2], DType::F32).unwrap()
        };
        let shard = [1usize, 1];
        c.reduce_scatter_axis(&send, 1, &shard, PartialOp::Sum)
            .map(drop)
    });
    for (r, o) in out.into_iter().enumerate() {
        assert!(o.unwrap().is_err(), "rank {r}");
    }
}

#[test]
fn d7_axis_counts_past_memory_are_errors() {
    let out = run_ranks(2, |c| {
        let send = Tensor::ones(&[1, 1024], DType::F32).unwrap();
        c.all_gather_axis(&send, 0, &[1, usize::MAX / 2]).map(drop)
    });
    for o in out {
        assert!(matches!(
            o.unwrap(),
            Err(DistError::Tensor(e)) if matches!(e.kind(), tessera::ErrorKind::ShapeOverflow(_))
        ));
    }
}
