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
//!
//! Each table ends with `matmul_<dtype>_2048_gflops_fraction_of_peak`: Tessera's best rate on
//! 2048² @ 2048² over the machine's peak FMA rate for that many threads, the peak measured
//! here by a register-only loop of independent FMAs on the widest vectors the CPU has (AVX-512
//! or AVX2; issue 18's goal is ≥ 0.7 for f32). The comparison with NumPy (OpenBLAS) is
//! `crates/tessera-py/bench/bench_linalg.py`.

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
        name: "2048x2048 @ 2048x2048",
        m: 2048,
        k: 2048,
        n: 2048,
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
        if c.m == 2048 {
            let peak = peak::gflops(dtype == "f32") * threads as f64;
            println!("peak FMA rate for {threads} thread(s), {dtype}: {peak:.1} GFLOP/s");
            println!(
                "ratio matmul_{dtype}_2048_t{threads}_gflops_fraction_of_peak {:.3}",
                gflops / peak
            );
        }
    }
}

/// The core's peak FMA rate, measured: 12 independent accumulators (enough to hide the FMA
/// latency on two pipes) of the widest vectors the CPU has, updated in registers only.
mod peak {
    use std::hint::black_box;
    use std::time::Instant;

    const ROUNDS: usize = 20_000_000;

    /// GFLOP/s of one thread (f32 or f64 lanes); 0 when neither AVX2+FMA nor AVX-512 exists.
    pub fn gflops(f32_lanes: bool) -> f64 {
        #[cfg(target_arch = "x86_64")]
        {
            let bytes = if is_x86_feature_detected!("avx512f") {
                64
            } else if is_x86_feature_detected!("fma") && is_x86_feature_detected!("avx2") {
                32
            } else {
                return 0.0;
            };
            let lanes = bytes / if f32_lanes { 4 } else { 8 };
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    // SAFETY: the features each loop is compiled for were detected above.
                    let sink = unsafe {
                        if bytes == 64 {
                            fma512(black_box(1.000_000_1), black_box(0.999_999_9))
                        } else {
                            fma256(black_box(1.000_000_1), black_box(0.999_999_9))
                        }
                    };
                    black_box(sink);
                    // 12 accumulators x 2 flops x lanes per round; the f64 loop runs the same
                    // instruction count (an f64 FMA has the f32 one's throughput).
                    let flops = (ROUNDS * 12 * 2 * lanes) as f64;
                    flops / t.elapsed().as_secs_f64() / 1e9
                })
                .fold(0.0, f64::max)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = f32_lanes;
            0.0
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn fma512(a: f32, b: f32) -> f32 {
        use std::arch::x86_64::*;
        let (va, vb) = (_mm512_set1_ps(a), _mm512_set1_ps(b));
        let mut acc = [_mm512_set1_ps(0.0); 12];
        for _ in 0..ROUNDS {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, va, vb);
            }
        }
        let mut s = _mm512_set1_ps(0.0);
        for x in acc {
            s = _mm512_add_ps(s, x);
        }
        _mm512_reduce_add_ps(s)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn fma256(a: f32, b: f32) -> f32 {
        use std::arch::x86_64::*;
        let (va, vb) = (_mm256_set1_ps(a), _mm256_set1_ps(b));
        let mut acc = [_mm256_set1_ps(0.0); 12];
        for _ in 0..ROUNDS {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, va, vb);
            }
        }
        let mut s = _mm256_set1_ps(0.0);
        for x in acc {
            s = _mm256_add_ps(s, x);
        }
        _mm256_cvtss_f32(s)
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
