//! Data-parallel training throughput and the costs of its reductions (issue 20's ratio
//! lines; docs/design.md D11; docs/performance.md). Run under MPI with two ranks:
//! `cargo bench -p tessera-dist --features mpi --bench training --no-run`, then
//! `mpirun -np 2 target/release/deps/training-<hash> --bench`. Rank 0 prints a table and
//! `ratio NAME VALUE` lines. Every rank's kernels run on one thread (`set_num_threads(1)`),
//! so 1 rank and 2 ranks compare equal thread counts per rank; this machine has 2 cores.
//!
//! - `dp_step_scaling_2ranks`: samples per second of the data-parallel MLP (64-512-512-10,
//!   256 samples per rank and step, 24 timed steps) on 2 MPI ranks over 1 rank (rank 0
//!   alone, on a communicator of its own, while rank 1 waits without spinning); the phases
//!   alternate three times and each keeps its fastest run. The same on the thread backend (2
//!   in-process ranks over 1, rank 0 allowed on every CPU for it: `mpirun` binds each rank
//!   to one core) is printed beside it.
//! - `dp_allreduce_overlap_fraction`: the share of the 2-rank run's gradient all-reduce time
//!   that backward hid (`1 - wait after backward / all-reduce time`); the step time without
//!   overlap is printed too.
//! - `rowsparse_allreduce_bytes_vs_dense`: bytes a rank receives to reduce the row_sparse
//!   gradient of a 200 000-feature sparse logistic regression whose 2 x 100 documents of 10
//!   words touch at most 1 % of the rows, over a dense ring all-reduce's `2 (p-1)/p N`.
//! - `hybrid_mesh_step_time_vs_dp`: the MLP's step time on a 2x2 mesh (hybrid) over pure data
//!   parallel on 4 ranks, on the thread backend (4 ranks on 2 cores: oversubscribed), and
//!   under MPI when run with `-np 4`.
//!
//! Under `mpirun --mca pml ob1 --mca btl tcp,self -x TESSERA_DIST_SHM=0` the collectives go
//! over TCP with Tessera's single-host path off: what a run across machines takes. With every
//! core computing, the communication thread of the overlapped reductions competes with the
//! ranks for cores while Open MPI spins in its waits; `-x OMPI_MCA_mpi_yield_when_idle=1`
//! makes those waits yield (docs/performance.md, "Data-parallel training").

#[path = "../examples/parallel/jobs.rs"]
mod jobs;

use std::time::Duration;

use jobs::{LogRegJob, MlpJob, Points, Run};
use mpi::topology::SimpleCommunicator;
use mpi::traits::CommunicatorCollectives;
use tessera_dist::mpi_backend::MpiUniverse;
use tessera_dist::train::mlp::Parallelism;
use tessera_dist::{run_ranks, Comm};

fn mlp_job(batch: usize, overlap: bool) -> MlpJob {
    MlpJob {
        dims: vec![64, 512, 512, 10],
        batch,
        steps: 25,
        points: Points::Random,
        overlap: (overlap, tessera_dist::train::DEFAULT_BUCKET_BYTES),
    }
}

/// Waits at a barrier of the raw world without spinning a core (so rank 0 has it alone).
fn idle_barrier(world: &SimpleCommunicator) {
    let mut req = world.immediate_barrier();
    loop {
        match req.test() {
            Ok(_) => return,
            Err(r) => req = r,
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Runs `f` with this process allowed on every CPU, then restores its affinity: `mpirun`
/// binds each rank to one core, which would put all in-process ranks of the thread backend on
/// that one core.
fn on_every_cpu<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: `cpu_set_t` is plain data (zeroed is the empty set); the calls get this
    // process's own affinity (pid 0) into a set of the size passed, and set it back.
    unsafe {
        let mut saved: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let got = libc::sched_getaffinity(0, size, &mut saved) == 0;
        let mut all: libc::cpu_set_t = std::mem::zeroed();
        let cpus = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as usize);
        for c in 0..cpus {
            libc::CPU_SET(c, &mut all);
        }
        libc::sched_setaffinity(0, size, &all);
        let r = f();
        if got {
            libc::sched_setaffinity(0, size, &saved);
        }
        r
    }
}

fn thread_run(ranks: usize, par: Parallelism, job: &MlpJob) -> Run {
    let job = job.clone();
    run_ranks(ranks, move |c| jobs::mlp_parallel(c, par, &job))
        .into_iter()
        .next()
        .expect("rank 0")
        .expect("no panic")
        .expect("the run")
}

fn main() {
    tessera::kernels::parallel::set_num_threads(1).expect("one thread");
    let universe = MpiUniverse::init().expect("MPI init");
    let comm: Comm = universe.world();
    let world = SimpleCommunicator::world();
    let (me, p) = (comm.rank(), comm.size());
    let per_rank = 256;
    // `TESSERA_TRAINING_PROFILE=1`: only the data-parallel steps on every rank, 60 of them,
    // reduced after backward (for a profile of one phase; `mpirun -np 1` gives 1 rank's).
    if std::env::var_os("TESSERA_TRAINING_PROFILE").is_some() {
        let mut job = mlp_job(per_rank * p, false);
        job.steps = 61;
        let r = jobs::mlp_parallel(comm.clone(), Parallelism::Data, &job).expect("run");
        if me == 0 {
            println!("{p} ranks: {:.2} ms a step", r.step_secs() * 1e3);
        }
        return;
    }

    // 1 rank (rank 0 on a communicator of its own) and every rank, overlapped and not,
    // interleaved three times; each keeps its fastest run (the machine's speed drifts).
    let alone = comm.split(usize::from(me != 0), me).expect("split");
    let fastest = |a: Option<Run>, b: Run| match a {
        Some(a) if a.step_secs() <= b.step_secs() => Some(a),
        _ => Some(b),
    };
    let (mut one, mut all, mut plain) = (None, None, None);
    for _ in 0..3 {
        if me == 0 {
            let r = jobs::mlp_parallel(alone.clone(), Parallelism::Data, &mlp_job(per_rank, true));
            one = fastest(one, r.expect("1-rank run"));
        }
        idle_barrier(&world);
        let job = mlp_job(per_rank * p, true);
        all = fastest(
            all,
            jobs::mlp_parallel(comm.clone(), Parallelism::Data, &job).expect("run"),
        );
        let job = mlp_job(per_rank * p, false);
        plain = fastest(
            plain,
            jobs::mlp_parallel(comm.clone(), Parallelism::Data, &job).expect("run"),
        );
    }
    let (all, plain) = (all.expect("ran"), plain.expect("ran"));
    // Row_sparse reduction bytes.
    let features = 200_000;
    let logreg = jobs::logreg_dp(
        comm.clone(),
        LogRegJob {
            features,
            docs: 4_000,
            words: 10,
            batch: 100 * p,
            steps: 4,
        },
    )
    .expect("logreg");
    // Hybrid against data parallel on 4 ranks, under MPI when there are 4.
    let mpi_hybrid = (p == 4).then(|| {
        let job = mlp_job(per_rank * 4, true);
        let h = jobs::mlp_parallel(comm.clone(), Parallelism::Hybrid, &job).expect("hybrid");
        let d = jobs::mlp_parallel(comm.clone(), Parallelism::Data, &job).expect("dp");
        h.step_secs() / d.step_secs()
    });
    // The thread backend, on rank 0 while the others wait.
    let threads = if me == 0 {
        let runs = on_every_cpu(|| {
            let t1 = thread_run(1, Parallelism::Data, &mlp_job(per_rank, true));
            let t2 = thread_run(2, Parallelism::Data, &mlp_job(per_rank * 2, true));
            let job4 = mlp_job(per_rank * 4, true);
            let h4 = thread_run(4, Parallelism::Hybrid, &job4);
            let d4 = thread_run(4, Parallelism::Data, &job4);
            (t1, t2, h4, d4)
        });
        idle_barrier(&world);
        Some(runs)
    } else {
        idle_barrier(&world);
        None
    };
    if me != 0 {
        return;
    }
    let (one, (t1, t2, h4, d4)) = (one.expect("rank 0"), threads.expect("rank 0"));
    let shm = if universe.shared_memory() {
        "on"
    } else {
        "off"
    };
    println!("MPI: {p} ranks, single-host path {shm}; 1 kernel thread per rank");
    println!(
        "{:46} {:>12} {:>12}",
        "data-parallel MLP 64-512-512-10", "samples/s", "ms/step"
    );
    let row = |name: &str, r: &Run| {
        println!(
            "{name:46} {:>12.0} {:>12.2}",
            r.throughput(),
            r.step_secs() * 1e3
        );
    };
    row("MPI, 1 rank (256 a step)", &one);
    row(&format!("MPI, {p} ranks (256 a rank), overlapped"), &all);
    row(&format!("MPI, {p} ranks, reduced after backward"), &plain);
    row("threads, 1 rank", &t1);
    row("threads, 2 ranks", &t2);
    row("threads, 4 ranks on a 2x2 mesh (hybrid)", &h4);
    row("threads, 4 ranks data parallel", &d4);
    let o = all.overlap;
    println!(
        "overlap over the timed steps: backward {:.1} ms, all-reduces {:.1} ms, waited after backward {:.1} ms",
        o.backward.as_secs_f64() * 1e3,
        o.comm.as_secs_f64() * 1e3,
        o.wait.as_secs_f64() * 1e3
    );
    let dense = 2.0 * (p as f64 - 1.0) / p as f64 * (features * 4) as f64;
    println!(
        "row_sparse reduction: {} bytes received a step; a dense ring all-reduce of W: {dense:.0}",
        logreg.bytes
    );
    println!(
        "ratio dp_step_scaling_{p}ranks {:.3}",
        all.throughput() / one.throughput()
    );
    println!(
        "ratio dp_step_scaling_{p}ranks_reduced_after_backward {:.3}",
        plain.throughput() / one.throughput()
    );
    println!(
        "ratio dp_step_scaling_2ranks_threads {:.3}",
        t2.throughput() / t1.throughput()
    );
    println!(
        "ratio dp_allreduce_overlap_fraction {:.3}",
        o.hidden_fraction()
    );
    println!(
        "ratio rowsparse_allreduce_bytes_vs_dense {:.4}",
        logreg.bytes as f64 / dense
    );
    println!(
        "ratio hybrid_mesh_step_time_vs_dp_threads {:.3}",
        h4.step_secs() / d4.step_secs()
    );
    if let Some(r) = mpi_hybrid {
        println!("ratio hybrid_mesh_step_time_vs_dp {r:.3}");
    }
}
