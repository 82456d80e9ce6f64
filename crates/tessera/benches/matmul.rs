//! Matrix product: Tessera's `matmul` against `ndarray`'s `dot` (the `matrixmultiply` crate) in
//! the same run. Run: `cargo bench -p tessera --bench matmul` (docs/performance.md).
//!
//! Cases, for `f32` and `f64`: square 64², 256², 1024²; the MLP layer shapes 256×784 @ 784×512
//! and 256×512 @ 512×512; and `x.T @ g` with `x` stored as 256×784 and `g` 256×512 (the
//! weight gradient of that layer, a transposed view operand, no copy on either side).
//!
//! The program runs itself once per thread count (1, then 2): each child builds rayon's global
//! pool with that many threads (Tessera's kernels) and sets `MATMUL_NUM_THREADS` to the same
//! count (`matrixmultiply` reads it once per process, so ndarray gets the same number of
//! threads). `--threads N` runs one table only. Each table row alternates the two libraries
//! call by call (a noisy stretch hits both), rotates among `VARIANTS` different random operand
//! pairs, and reports the best and the median time of each; the `ratio` line of a row is
//! Tessera's best time over ndarray's (below 1.0: Tessera is faster). No goal is set.

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use ndarray::{Array2, LinalgScalar};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tessera::{Element, Tensor};

/// Different operand pairs per case; iteration `i` uses pair `i % VARIANTS`.
const VARIANTS: usize = 3;
/// Time budget per row (both libraries together), and bounds on the number of samples.
const BUDGET: Duration = Duration::from_millis(1500);
const MIN_SAMPLES: usize = 6;
const MAX_SAMPLES: usize = 400;

/// A product `lhs @ rhs` with `lhs` `[m, k]` (stored as `[k, m]` and transposed when
/// `transposed`) and `rhs` `[k, n]`.
struct Case {
    name: &'static str,
    m: usize,
    k: usize,
    n: usize,
    transposed: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "64x64 @ 64x64",
        m: 64,
        k: 64,
        n: 64,
        transposed: false,
    },
    Case {
        name: "256x256 @ 256x256",
        m: 256,
        k: 256,
        n: 256,
        transposed: false,
    },
    Case {
        name: "1024x1024 @ 1024x1024",
        m: 1024,
        k: 1024,
        n: 1024,
        transposed: false,
    },
    Case {
        name: "256x784 @ 784x512",
        m: 256,
        k: 784,
        n: 512,
        transposed: false,
    },
    Case {
        name: "256x512 @ 512x512",
        m: 256,
        k: 512,
        n: 512,
        transposed: false,
    },
    Case {
        name: "(256x784).T @ 256x512",
        m: 784,
        k: 256,
        n: 512,
        transposed: true,
    },
];

struct Operands<T> {
    ours: (Tensor, Tensor),
    theirs: (Array2<T>, Array2<T>),
}

fn operands<T: Element + LinalgScalar>(
    c: &Case,
    rng: &mut StdRng,
    conv: fn(f64) -> T,
) -> Operands<T> {
    let mut gen = |len: usize| -> Vec<T> {
        (0..len)
            .map(|_| conv(rng.random_range(-1.0..1.0)))
            .collect()
    };
    let lhs_dims = if c.transposed { (c.k, c.m) } else { (c.m, c.k) };
    let (a, b) = (gen(c.m * c.k), gen(c.k * c.n));
    let ta = Tensor::from_slice(&a, &[lhs_dims.0, lhs_dims.1]).unwrap();
    let tb = Tensor::from_slice(&b, &[c.k, c.n]).unwrap();
    let na = Array2::from_shape_vec(lhs_dims, a).unwrap();
    let nb = Array2::from_shape_vec((c.k, c.n), b).unwrap();
    let ta = if c.transposed { ta.t().unwrap() } else { ta };
    Operands {
        ours: (ta, tb),
        theirs: (na, nb),
    }
}

fn ours(o: &(Tensor, Tensor)) -> Tensor {
    o.0.matmul(&o.1).unwrap()
}

fn theirs<T: LinalgScalar>(o: &(Array2<T>, Array2<T>), transposed: bool) -> Array2<T> {
    if transposed {
        o.0.t().dot(&o.1)
    } else {
        o.0.dot(&o.1)
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run<T: Element + LinalgScalar + Into<f64>>(dtype: &str, threads: usize, conv: fn(f64) -> T) {
    let mut rng = StdRng::seed_from_u64(7);
    for c in CASES {
        let ops: Vec<Operands<T>> = (0..VARIANTS).map(|_| operands(c, &mut rng, conv)).collect();
        // Same result on every pair before timing (and a warm-up of both).
        for o in &ops {
            let a = ours(&o.ours).to_vec::<T>().unwrap();
            let b = theirs(&o.theirs, c.transposed);
            let tol = if dtype == "f32" { 1e-4 } else { 1e-12 } * c.k as f64;
            for (x, y) in a.iter().zip(b.iter()) {
                let (x, y): (f64, f64) = ((*x).into(), (*y).into());
                assert!(
                    (x - y).abs() <= tol,
                    "{}: results differ: {x} vs {y}",
                    c.name
                );
            }
        }
        let (mut t_ours, mut t_theirs) = (Vec::new(), Vec::new());
        let start = Instant::now();
        let mut i = 0;
        while t_ours.len() < MAX_SAMPLES && (t_ours.len() < MIN_SAMPLES || start.elapsed() < BUDGET)
        {
            let o = &ops[i % VARIANTS];
            let t = Instant::now();
            black_box(ours(black_box(&o.ours)));
            t_ours.push(t.elapsed());
            let t = Instant::now();
            black_box(theirs(black_box(&o.theirs), c.transposed));
            t_theirs.push(t.elapsed());
            i += 1;
        }
        let (best_o, best_t) = (
            *t_ours.iter().min().unwrap(),
            *t_theirs.iter().min().unwrap(),
        );
        let (med_o, med_t) = (median(&mut t_ours), median(&mut t_theirs));
        let gflops = 2.0 * (c.m * c.k * c.n) as f64 / best_o.as_secs_f64() / 1e9;
        println!(
            "{:<24} {dtype:<4} {threads:>3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {gflops:>8.1} {:>5}",
            c.name,
            ms(best_o),
            ms(med_o),
            ms(best_t),
            ms(med_t),
            t_ours.len(),
        );
        let key: String = c
            .name
            .chars()
            .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
            .collect::<String>()
            .split('_')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        println!(
            "ratio matmul_{key}_{dtype}_t{threads}_time_vs_ndarray {:.3}",
            best_o.as_secs_f64() / best_t.as_secs_f64()
        );
    }
}

fn table(threads: usize) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .unwrap();
    assert_eq!(rayon::current_num_threads(), threads);
    println!(
        "threads: {threads} (rayon global pool for Tessera; MATMUL_NUM_THREADS={} for ndarray)",
        std::env::var("MATMUL_NUM_THREADS").unwrap_or_default()
    );
    println!(
        "{:<24} {:<4} {:>3} {:>10} {:>10} {:>10} {:>10} {:>8} {:>5}",
        "case", "type", "thr", "ours best", "ours med", "nd best", "nd med", "GFLOP/s", "n"
    );
    println!("{:-<24} (times in ms; GFLOP/s from Tessera's best)", "");
    run::<f32>("f32", threads, |x| x as f32);
    run::<f64>("f64", threads, |x| x);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        let threads: usize = args[i + 1].parse().expect("--threads N");
        table(threads);
        return;
    }
    // One child process per thread count: both pools are fixed once per process.
    let exe = std::env::current_exe().unwrap();
    for threads in [1, 2] {
        let status = Command::new(&exe)
            .args(["--threads", &threads.to_string()])
            .env("MATMUL_NUM_THREADS", threads.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "the {threads}-thread run failed");
        println!();
    }
}
