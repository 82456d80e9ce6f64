//! Autograd and training benchmarks (issue 16), printed as ratio lines measured in one run:
//! `cargo bench -p tessera-models --bench training`.
//!
//! - `autograd_tape_overhead_small_ops`: a chain of 1 000 elementwise ops on 16-element
//!   tensors with the graph recorded, over the same chain under `no_grad`.
//! - `mlp_backward_over_forward`: one backward over one forward of an MLP (batch 256,
//!   784-512-512-10, f32, cross-entropy).
//! - `sparse_logreg_step_speedup_vs_dense_grad`: one training step of the sparse logistic
//!   regression (1 000 000 features, batch 512, 50 non-zeros a row) with the gradient densified
//!   and a dense Adam update, over the same step with the row_sparse gradient and the lazy
//!   update. Batches vary between repetitions. Also printed: the same two steps' memory-bound
//!   parts as plain loops over the same batches (no library: the gather of the forward, the
//!   lazy Adam rows, the densify and the dense Adam stream), the floor any implementation of
//!   the two steps meets on this machine, and the ratio those floors allow.
//!
//! Threads: the kernels use rayon's pool (all cores unless `RAYON_NUM_THREADS` is set).

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tessera::optim::{Adam, Optimizer};
use tessera::{autograd, CsrMatrix, DType, SparseParts, StorageType, Tensor};
use tessera_models::data::normal;
use tessera_models::loss;
use tessera_models::mlp::Mlp;

/// The median of `reps` timings of `f` (after one warm-up).
fn median(reps: usize, mut f: impl FnMut(usize)) -> Duration {
    // Warm-up: the first calls fault in fresh pages (optimiser state, pooled buffers).
    for i in 0..4 {
        f(usize::MAX - i);
    }
    let mut times: Vec<Duration> = (0..reps)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    times.sort();
    times[reps / 2]
}

fn tape_overhead() -> tessera::Result<()> {
    let mut rng = StdRng::seed_from_u64(1);
    let inputs: Vec<Tensor> = (0..8)
        .map(|_| {
            let v: Vec<f32> = (0..16).map(|_| rng.random_range(0.5..1.5)).collect();
            Tensor::from_vec(v, &[16])
        })
        .collect::<tessera::Result<_>>()?;
    let chain = |x: &Tensor| -> tessera::Result<Tensor> {
        let mut y = x.clone();
        for i in 0..1000 {
            y = if i % 2 == 0 {
                y.mul_scalar(1.0001)?
            } else {
                y.add_scalar(-0.0001)?
            };
        }
        Ok(y)
    };
    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|t| t.clone().requires_grad_(true))
        .collect::<tessera::Result<_>>()?;
    let recorded = median(15, |i| {
        black_box(chain(&leaves[i % leaves.len()]).unwrap());
    });
    let plain = median(15, |i| {
        let _g = autograd::no_grad();
        black_box(chain(&leaves[i % leaves.len()]).unwrap());
    });
    println!(
        "chain of 1000 ops on 16 elements: recorded {:.1} us, no_grad {:.1} us",
        recorded.as_secs_f64() * 1e6,
        plain.as_secs_f64() * 1e6
    );
    println!(
        "ratio autograd_tape_overhead_small_ops {:.3}",
        recorded.as_secs_f64() / plain.as_secs_f64()
    );
    Ok(())
}

fn mlp_backward_over_forward() -> tessera::Result<()> {
    let model = Mlp::with_dims(&[784, 512, 512, 10], 3)?;
    let mut rng = StdRng::seed_from_u64(2);
    let batches: Vec<(Tensor, Tensor)> = (0..4)
        .map(|_| {
            let x = Tensor::from_vec(normal(&mut rng, 256 * 784, 1.0), &[256, 784])?;
            let mut t = vec![0f32; 256 * 10];
            for r in 0..256 {
                t[r * 10 + rng.random_range(0..10)] = 1.0;
            }
            Ok((x, Tensor::from_vec(t, &[256, 10])?))
        })
        .collect::<tessera::Result<_>>()?;
    let mut fwd = Vec::new();
    let mut bwd = Vec::new();
    for i in 0..12 {
        let (x, t) = &batches[i % batches.len()];
        let s = Instant::now();
        let l = loss::cross_entropy(&model.forward(x)?, t)?;
        let f = s.elapsed();
        let s = Instant::now();
        autograd::backward(&l, None, false)?;
        let b = s.elapsed();
        if i >= 2 {
            fwd.push(f);
            bwd.push(b);
        }
        for p in model.params() {
            p.set_grad(None)?;
        }
    }
    fwd.sort();
    bwd.sort();
    let (f, b) = (fwd[fwd.len() / 2], bwd[bwd.len() / 2]);
    println!(
        "MLP 784-512-512-10, batch 256, f32: forward {:.2} ms, backward {:.2} ms",
        f.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3
    );
    println!(
        "ratio mlp_backward_over_forward {:.3}",
        b.as_secs_f64() / f.as_secs_f64()
    );
    Ok(())
}

/// A csr batch of `rows` rows over `features` columns with `nnz` distinct columns a row.
fn csr_batch(
    rng: &mut StdRng,
    rows: usize,
    features: usize,
    nnz: usize,
) -> tessera::Result<Tensor> {
    let mut indptr = vec![0i64];
    let mut indices = Vec::with_capacity(rows * nnz);
    for _ in 0..rows {
        let mut cols: Vec<i64> = (0..nnz)
            .map(|_| rng.random_range(0..features as i64))
            .collect();
        cols.sort_unstable();
        cols.dedup();
        indices.extend_from_slice(&cols);
        indptr.push(indices.len() as i64);
    }
    let n = indices.len();
    let m = CsrMatrix::try_new(
        [rows, features],
        indptr,
        indices,
        Tensor::ones(&[n], DType::F32)?,
    )?;
    Tensor::from_sparse_parts(SparseParts::Csr(m))
}

fn sparse_step() -> tessera::Result<()> {
    let (features, batch, nnz) = (1_000_000, 512, 50);
    let mut rng = StdRng::seed_from_u64(3);
    let batches: Vec<(Tensor, Tensor)> = (0..8)
        .map(|_| {
            let x = csr_batch(&mut rng, batch, features, nnz)?;
            let y: Vec<f32> = (0..batch)
                .map(|_| if rng.random_bool(0.5) { 1.0 } else { -1.0 })
                .collect();
            Ok((x, Tensor::from_vec(y, &[batch, 1])?))
        })
        .collect::<tessera::Result<_>>()?;
    let w = Tensor::zeros(&[features, 1], DType::F32)?.requires_grad_(true)?;
    let b = Tensor::zeros(&[1], DType::F32)?.requires_grad_(true)?;
    let mut opt = Adam::new(vec![w.clone(), b.clone()], 0.01)?;
    // `TESSERA_BENCH_PHASES=N`: N steps timed by phase first (where a sparse step's time goes).
    if let Some(iters) = std::env::var("TESSERA_BENCH_PHASES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 8)
    {
        let (mut tf, mut tb, mut ts, mut tz) = (0.0, 0.0, 0.0, 0.0);
        for i in 0..iters {
            let (x, y) = &batches[i % batches.len()];
            let t0 = Instant::now();
            opt.zero_grad()?;
            let t1 = Instant::now();
            let l = loss::logistic(&x.dot(&w)?.add(&b)?, y)?;
            let t2 = Instant::now();
            autograd::backward(&l, None, false)?;
            let t3 = Instant::now();
            opt.step()?;
            let t4 = Instant::now();
            if i >= 8 {
                tz += (t1 - t0).as_secs_f64();
                tf += (t2 - t1).as_secs_f64();
                tb += (t3 - t2).as_secs_f64();
                ts += (t4 - t3).as_secs_f64();
            }
        }
        println!(
            "sparse step phases (us): zero_grad {:.0} forward {:.0} backward {:.0} optimiser {:.0}",
            tz / (iters - 8) as f64 * 1e6,
            tf / (iters - 8) as f64 * 1e6,
            tb / (iters - 8) as f64 * 1e6,
            ts / (iters - 8) as f64 * 1e6
        );
    }
    let mut step = |i: usize, densify: bool| -> tessera::Result<()> {
        let (x, y) = &batches[i % batches.len()];
        opt.zero_grad()?;
        let l = loss::logistic(&x.dot(&w)?.add(&b)?, y)?;
        autograd::backward(&l, None, false)?;
        if densify {
            let g = w
                .grad()
                .expect("a gradient")
                .cast_storage(StorageType::Default)?;
            w.set_grad(Some(g))?;
        }
        opt.step()
    };
    let sparse = median(41, |i| step(i, false).unwrap());
    let dense = median(41, |i| step(i, true).unwrap());
    println!(
        "sparse logreg step (1e6 features, batch 512, 50 nnz/row): row_sparse + lazy Adam {:.2} ms, densified + dense Adam {:.2} ms",
        sparse.as_secs_f64() * 1e3,
        dense.as_secs_f64() * 1e3
    );
    println!(
        "ratio sparse_logreg_step_speedup_vs_dense_grad {:.2}",
        dense.as_secs_f64() / sparse.as_secs_f64()
    );
    step_floors(&batches, features)
}

/// The memory-bound parts of the two logreg steps as plain `f32` loops over the same batches
/// (no library): what no implementation of either step can go below on this machine. The
/// sparse floor is the forward's gather plus the lazy Adam of the distinct rows (sorting and
/// summing the gradient left out); the dense floor is the same gather, the densified gradient
/// (zeroed and scattered) and one streamed Adam pass over every row.
fn step_floors(batches: &[(Tensor, Tensor)], features: usize) -> tessera::Result<()> {
    let cols: Vec<Vec<usize>> = batches
        .iter()
        .map(|(x, _)| {
            let Some(SparseParts::Csr(m)) = x.sparse_parts() else {
                unreachable!("csr batches")
            };
            m.indices()
                .astype(DType::I64)?
                .to_vec::<i64>()
                .map(|c| c.iter().map(|&c| c as usize).collect())
        })
        .collect::<tessera::Result<_>>()?;
    let rows: Vec<Vec<usize>> = cols
        .iter()
        .map(|c| {
            let mut r = c.clone();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let (mut w, mut m, mut v) = (
        vec![0.01f32; features],
        vec![0f32; features],
        vec![0f32; features],
    );
    let adam = |w: &mut f32, m: &mut f32, v: &mut f32, g: f32| {
        *m = 0.9 * *m + 0.1 * g;
        *v = 0.999 * *v + 0.001 * g * g;
        *w -= 0.01 * *m / (v.sqrt() + 1e-8);
    };
    let gather = |w: &[f32], c: &[usize]| c.iter().map(|&c| w[c]).sum::<f32>();
    let sparse = median(41, |i| {
        let k = i % batches.len();
        let g = black_box(gather(&w, &cols[k])) * 1e-3;
        for &r in &rows[k] {
            adam(&mut w[r], &mut m[r], &mut v[r], g);
        }
    });
    let mut grad = vec![0f32; features];
    let dense = median(41, |i| {
        let k = i % batches.len();
        let g = black_box(gather(&w, &cols[k])) * 1e-3;
        grad.iter_mut().for_each(|x| *x = 0.0);
        for &c in &cols[k] {
            grad[c] += g;
        }
        for (((w, m), v), &g) in w.iter_mut().zip(&mut m).zip(&mut v).zip(black_box(&grad)) {
            adam(w, m, v, g);
        }
    });
    println!(
        "floors of the two steps (plain f32 loops, 1 thread): sparse {:.0} us, dense {:.0} us, ratio they allow {:.2}",
        sparse.as_secs_f64() * 1e6,
        dense.as_secs_f64() * 1e6,
        dense.as_secs_f64() / sparse.as_secs_f64()
    );
    Ok(())
}

fn main() -> tessera::Result<()> {
    if std::env::args().any(|a| a == "--test") {
        return Ok(()); // `cargo test --benches` builds it; the timings need --release
    }
    println!(
        "threads: rayon pool of {} (RAYON_NUM_THREADS={})",
        rayon_threads(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "unset".into())
    );
    // `cargo bench --bench training -- tape sparse` runs the sections whose names contain
    // one of the words (all without words).
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| words.is_empty() || words.iter().any(|w| name.contains(w.as_str()));
    if wanted("tape_overhead") {
        tape_overhead()?;
    }
    if wanted("mlp_backward") {
        mlp_backward_over_forward()?;
    }
    if wanted("sparse_step") {
        sparse_step()?;
    }
    Ok(())
}

fn rayon_threads() -> usize {
    rayon::current_num_threads()
}
