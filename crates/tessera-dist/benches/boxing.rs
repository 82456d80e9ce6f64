//! Boxing overhead (DESIGN §3, D6): each conversion's `to_sbp` time against the raw MPI
//! collective on pre-packed buffers, in one run. Run under MPI:
//! `mpirun -np 2 target/release/deps/boxing-* --bench` (rank 0 prints the table and
//! `ratio boxing_overhead_<conversion>_<size> X` lines), then the thread-backend times.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives};
use tessera::{DType, Tensor};
use tessera_dist::mpi_backend::MpiUniverse;
use tessera_dist::{balanced_counts, run_ranks, Comm, GlobalTensor, Mesh, PartialOp, Sbp};

const CONVERSIONS: [(&str, Sbp, Sbp); 4] = [
    ("S0_to_B", Sbp::Split(0), Sbp::Broadcast),
    ("P_to_B", Sbp::Partial(PartialOp::Sum), Sbp::Broadcast),
    ("P_to_S0", Sbp::Partial(PartialOp::Sum), Sbp::Split(0)),
    ("S0_to_S1", Sbp::Split(0), Sbp::Split(1)),
];

/// Seconds of one run of `f` between barriers.
fn once(comm: &Comm, f: &mut dyn FnMut()) -> f64 {
    comm.barrier().unwrap();
    let t = Instant::now();
    f();
    comm.barrier().unwrap();
    t.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median seconds of `iters` runs of `f`.
fn time(comm: &Comm, iters: usize, mut f: impl FnMut()) -> f64 {
    f();
    median((0..iters).map(|_| once(comm, &mut f)).collect())
}

/// Median seconds of `a` and of `b`, run alternately (so drift hits both alike).
fn time_pair(comm: &Comm, iters: usize, a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (f64, f64) {
    a();
    b();
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..iters {
        ta.push(once(comm, a));
        tb.push(once(comm, b));
    }
    (median(ta), median(tb))
}

fn counts_displs(counts: &[usize]) -> (Vec<i32>, Vec<i32>) {
    let c: Vec<i32> = counts.iter().map(|&n| n as i32).collect();
    let d: Vec<i32> = c
        .iter()
        .scan(0, |a, &n| {
            let o = *a;
            *a += n;
            Some(o)
        })
        .collect();
    (c, d)
}

/// The raw collective for `name` on pre-packed f32 buffers.
fn raw<'a>(
    world: &'a SimpleCommunicator,
    name: &str,
    rows: usize,
    cols: usize,
) -> Box<dyn FnMut() + 'a> {
    let (p, me) = (world.size() as usize, world.rank() as usize);
    let n = rows * cols;
    let row_counts = balanced_counts(rows, p);
    let elems: Vec<usize> = row_counts.iter().map(|r| r * cols).collect();
    match name {
        "S0_to_B" => {
            let send = vec![1f32; elems[me]];
            let mut recv = vec![0f32; n];
            let (c, d) = counts_displs(&elems);
            Box::new(move || {
                let mut part = PartitionMut::new(&mut recv[..], &c[..], &d[..]);
                world.all_gather_varcount_into(&send[..], &mut part);
            })
        }
        "P_to_B" => {
            let send = vec![1f32; n];
            let mut recv = vec![0f32; n];
            Box::new(move || {
                world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum())
            })
        }
        "P_to_S0" => {
            // The same varcount MPI_Reduce_scatter the backend calls (D9).
            let send = vec![1f32; n];
            let mut recv = vec![0f32; elems[me]];
            let (c, _) = counts_displs(&elems);
            Box::new(move || {
                // SAFETY: `send` holds sum(c) f32s, `recv` holds c[me]; `c` has one count per
                // rank; the handles come from live `mpi` objects.
                unsafe {
                    mpi::ffi::MPI_Reduce_scatter(
                        send.as_ptr().cast(),
                        recv.as_mut_ptr().cast(),
                        c.as_ptr(),
                        f32::equivalent_datatype().as_raw(),
                        SystemOperation::sum().as_raw(),
                        world.as_raw(),
                    );
                }
            })
        }
        _ => {
            // S(0) -> S(1): each rank sends its rows' slice of every rank's columns.
            let col_counts = balanced_counts(cols, p);
            let sc: Vec<usize> = col_counts.iter().map(|c| c * row_counts[me]).collect();
            let rc: Vec<usize> = row_counts.iter().map(|r| r * col_counts[me]).collect();
            let send = vec![1f32; sc.iter().sum()];
            let mut recv = vec![0f32; rc.iter().sum()];
            let ((scc, sd), (rcc, rd)) = (counts_displs(&sc), counts_displs(&rc));
            Box::new(move || {
                let sp = Partition::new(&send[..], &scc[..], &sd[..]);
                let mut rp = PartitionMut::new(&mut recv[..], &rcc[..], &rd[..]);
                world.all_to_all_varcount_into(&sp, &mut rp);
            })
        }
    }
}

fn global(mesh: &std::sync::Arc<Mesh>, rows: usize, cols: usize, src: Sbp) -> GlobalTensor {
    let full = Tensor::ones(&[rows, cols], DType::F32).unwrap();
    GlobalTensor::from_logical(&full, &[src], mesh).unwrap()
}

fn main() {
    let universe = MpiUniverse::init().expect("MPI init");
    let comm = universe.world();
    let world = SimpleCommunicator::world();
    let mesh = Mesh::line(comm.clone());
    let me = comm.rank();
    let sizes = [
        ("1MiB", 512usize, 512usize, 200usize),
        ("64MiB", 4096, 4096, 12),
    ];
    let mut ratios = Vec::new();
    if me == 0 {
        println!("boxing on {} MPI ranks, f32 [rows, cols]", comm.size());
        println!(
            "{:<10} {:>6} {:>12} {:>12} {:>8}",
            "conversion", "size", "to_sbp ms", "raw MPI ms", "ratio"
        );
    }
    for (size, rows, cols, iters) in sizes {
        for (name, src, dst) in CONVERSIONS {
            let x = global(&mesh, rows, cols, src);
            let mut ours_f = || {
                std::hint::black_box(x.to_sbp(&[dst]).unwrap());
            };
            let mut raw_f = raw(&world, name, rows, cols);
            let (ours, base) = time_pair(&comm, iters, &mut ours_f, &mut *raw_f);
            if me == 0 {
                println!(
                    "{name:<10} {size:>6} {:>12.3} {:>12.3} {:>8.3}",
                    ours * 1e3,
                    base * 1e3,
                    ours / base
                );
                ratios.push(format!(
                    "ratio boxing_overhead_{name}_{size} {:.3}",
                    ours / base
                ));
            }
        }
    }
    if me == 0 {
        for r in &ratios {
            println!("{r}");
        }
        println!("thread backend (2 in-process ranks, same conversions)");
        println!("{:<10} {:>6} {:>12}", "conversion", "size", "to_sbp ms");
        for (size, rows, cols, iters) in sizes {
            for (name, src, dst) in CONVERSIONS {
                let t = run_ranks(2, |c| {
                    let mesh = Mesh::line(c.clone());
                    let x = global(&mesh, rows, cols, src);
                    time(&c, iters, || {
                        std::hint::black_box(x.to_sbp(&[dst]).unwrap());
                    })
                });
                let t = t[0].as_ref().map_or(f64::NAN, |v| *v);
                println!("{name:<10} {size:>6} {:>12.3}", t * 1e3);
            }
        }
    }
    comm.barrier().unwrap();
}
