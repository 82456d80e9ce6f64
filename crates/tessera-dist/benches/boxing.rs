//! Boxing overhead (docs/performance.md; docs/design.md D6): each conversion's `to_sbp` time against the raw MPI
//! collective on pre-packed buffers, in one run. Run under MPI:
//! `mpirun -np 2 target/release/deps/boxing-* --bench` (rank 0 prints the table and
//! `ratio boxing_overhead_<conversion>_<size> X` lines), then the thread-backend times.
//! Both sides move the same data (distinct values), and every rank checks once that
//! `to_sbp` gives what the raw collective gives. `TESSERA_BOXING_ONLY=S0_to_S1` (a
//! conversion's name; pass it to every rank with `mpirun -x`) runs that conversion alone, so a
//! profile shows only it; `TESSERA_BOXING_ITERS=N` times N runs of each instead of the
//! default count, so the timed loop dominates such a profile. S(0) -> S(1) also prints a
//! `+pack` row and a `boxing_S0_to_S1_<size>_vs_pack_and_alltoall` line: against the same
//! all-to-all preceded by the column-block pack an MPI program must do (the raw line's buffer
//! is packed before timing).

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

/// The conversions to time: all, or those `TESSERA_BOXING_ONLY` names (comma-separated).
fn selected() -> Vec<(&'static str, Sbp, Sbp)> {
    let only = std::env::var("TESSERA_BOXING_ONLY").ok();
    CONVERSIONS
        .into_iter()
        .filter(|c| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|o| o == c.0))
        })
        .collect()
}

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

/// The raw collective of one conversion on pre-packed f32 buffers holding the same data as
/// the global tensor (`full`, split or partial as `to_sbp` sees it); `recv` ends up holding
/// this rank's result in row-major order, to check `to_sbp` against. The buffers live in
/// tessera storage, so both sides use the same kind of memory (large buffers are mapped with
/// huge pages, which speeds up Open MPI's single-copy transfers).
struct Raw {
    name: &'static str,
    send: Tensor,
    recv: Tensor,
    counts: (Vec<i32>, Vec<i32>),
    recv_counts: (Vec<i32>, Vec<i32>),
    /// S(0) -> S(1) only: this rank's rows, row-major, and the column block widths, for the
    /// baseline that packs the column blocks on every call ([`Raw::run_packing`]).
    rows: Vec<f32>,
    col_counts: Vec<usize>,
}

impl Raw {
    fn new(world: &SimpleCommunicator, name: &'static str, full: &[f32], cols: usize) -> Raw {
        let (p, me) = (world.size() as usize, world.rank() as usize);
        let rows = full.len() / cols;
        let row_counts = balanced_counts(rows, p);
        let elems: Vec<usize> = row_counts.iter().map(|r| r * cols).collect();
        let first_row: usize = row_counts[..me].iter().sum();
        let my_rows = &full[first_row * cols..(first_row + row_counts[me]) * cols];
        // Rank 0 holds the partial values, the others zeros (as `from_logical` places P).
        let partial = if me == 0 {
            full.to_vec()
        } else {
            vec![0f32; full.len()]
        };
        let none = (vec![], vec![]);
        let (send, recv_len, counts, recv_counts) = match name {
            "S0_to_B" => (my_rows.to_vec(), full.len(), counts_displs(&elems), none),
            "P_to_B" => (partial, full.len(), none.clone(), none),
            "P_to_S0" => (partial, elems[me], counts_displs(&elems), none),
            _ => {
                // S(0) -> S(1): this rank's rows, packed by destination column block.
                let col_counts = balanced_counts(cols, p);
                let mut send = Vec::with_capacity(my_rows.len());
                let mut c0 = 0;
                for &c in &col_counts {
                    for row in my_rows.chunks(cols) {
                        send.extend_from_slice(&row[c0..c0 + c]);
                    }
                    c0 += c;
                }
                let sc: Vec<usize> = col_counts.iter().map(|c| c * row_counts[me]).collect();
                let rc: Vec<usize> = row_counts.iter().map(|r| r * col_counts[me]).collect();
                let len = rc.iter().sum();
                (send, len, counts_displs(&sc), counts_displs(&rc))
            }
        };
        let n = send.len();
        Raw {
            name,
            send: Tensor::from_vec(send, &[n]).unwrap(),
            recv: Tensor::zeros(&[recv_len], DType::F32).unwrap(),
            counts,
            recv_counts,
            rows: my_rows.to_vec(),
            col_counts: balanced_counts(cols, p),
        }
    }

    /// S(0) -> S(1) as an MPI program without Tessera writes it: pack this rank's column
    /// blocks (a plain row-by-row copy) into the send buffer, then the same all-to-all. The
    /// raw line leaves the pack out (its buffer is packed once, before timing).
    fn run_packing(&mut self, world: &SimpleCommunicator) {
        {
            let mut send = self.send.storage().unwrap().write::<f32>().unwrap();
            let cols: usize = self.col_counts.iter().sum();
            let mut at = 0;
            let mut c0 = 0;
            for &c in &self.col_counts {
                for row in self.rows.chunks(cols) {
                    send[at..at + c].copy_from_slice(&row[c0..c0 + c]);
                    at += c;
                }
                c0 += c;
            }
        }
        self.run(world);
    }

    fn run(&mut self, world: &SimpleCommunicator) {
        let send = self.send.storage().unwrap().read::<f32>().unwrap();
        let mut recv = self.recv.storage().unwrap().write::<f32>().unwrap();
        let (send, recv) = (&send[..], &mut recv[..]);
        let (c, d) = (&self.counts.0[..], &self.counts.1[..]);
        match self.name {
            "S0_to_B" => {
                let mut part = PartitionMut::new(recv, c, d);
                world.all_gather_varcount_into(send, &mut part);
            }
            "P_to_B" => world.all_reduce_into(send, recv, SystemOperation::sum()),
            "P_to_S0" => {
                // The same varcount MPI_Reduce_scatter the backend calls (D9).
                // SAFETY: `send` holds sum(c) f32s, `recv` holds c[rank]; `c` has one count
                // per rank; the handles come from live `mpi` objects.
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
            }
            _ => {
                let sp = Partition::new(send, c, d);
                let (rc, rd) = (&self.recv_counts.0[..], &self.recv_counts.1[..]);
                let mut rp = PartitionMut::new(recv, rc, rd);
                world.all_to_all_varcount_into(&sp, &mut rp);
            }
        }
    }
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
    // Collective (the probe runs on first use), so every rank asks.
    let shm = universe.shared_memory();
    if me == 0 {
        let shm = if shm { "on" } else { "off" };
        println!(
            "boxing on {} MPI ranks, f32 [rows, cols]; single-host path {shm}",
            comm.size()
        );
        println!(
            "{:<10} {:>6} {:>12} {:>12} {:>8}",
            "conversion", "size", "to_sbp ms", "raw MPI ms", "ratio"
        );
    }
    let iters_env = std::env::var("TESSERA_BOXING_ITERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    for (size, rows, cols, iters) in sizes {
        let iters = iters_env.unwrap_or(iters);
        // Distinct values, exact in f32 (at most 2^24 elements).
        let full = Tensor::arange(0, (rows * cols) as i64, 1, DType::F32)
            .and_then(|t| t.reshape(&[rows as isize, cols as isize]))
            .unwrap();
        let values = full.to_vec::<f32>().unwrap();
        for (name, src, dst) in selected() {
            let x = GlobalTensor::from_logical(&full, &[src], &mesh).unwrap();
            let mut raw = Raw::new(&world, name, &values, cols);
            let (ours, base) = {
                let mut ours_f = || {
                    std::hint::black_box(x.to_sbp(&[dst]).unwrap());
                };
                let mut raw_f = || raw.run(&world);
                time_pair(&comm, iters, &mut ours_f, &mut raw_f)
            };
            // The same result as the raw collective, on every rank.
            let got = x
                .to_sbp(&[dst])
                .unwrap()
                .to_local()
                .to_vec::<f32>()
                .unwrap();
            let want = raw.recv.to_vec::<f32>().unwrap();
            assert!(
                got == want,
                "{name} {size}: to_sbp differs from the raw collective"
            );
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
            if name == "S0_to_S1" {
                // Against the all-to-all that packs on every call (information, no goal).
                let (ours, base) = {
                    let mut ours_f = || {
                        std::hint::black_box(x.to_sbp(&[dst]).unwrap());
                    };
                    let mut packing_f = || raw.run_packing(&world);
                    time_pair(&comm, iters, &mut ours_f, &mut packing_f)
                };
                assert!(raw.recv.to_vec::<f32>().unwrap() == want);
                if me == 0 {
                    println!(
                        "{:<10} {size:>6} {:>12.3} {:>12.3} {:>8.3}",
                        "+pack",
                        ours * 1e3,
                        base * 1e3,
                        ours / base
                    );
                    ratios.push(format!(
                        "ratio boxing_{name}_{size}_vs_pack_and_alltoall {:.3}",
                        ours / base
                    ));
                }
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
            for (name, src, dst) in selected() {
                let t = run_ranks(2, |c| {
                    let mesh = Mesh::line(c.clone());
                    let full = Tensor::ones(&[rows, cols], DType::F32).unwrap();
                    let x = GlobalTensor::from_logical(&full, &[src], &mesh).unwrap();
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
