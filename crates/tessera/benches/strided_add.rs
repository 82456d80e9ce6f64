//! Elementwise add: a transposed 2048x2048 f32 plus a contiguous one (and contiguous plus
//! contiguous), Tessera against `ndarray` in the same run (docs/performance.md: ratios, best of N).

use std::time::{Duration, Instant};

use ndarray::Array2;
use tessera::{DType, Tensor};

const N: usize = 2048;
const REPEATS: usize = 15;

fn best(mut f: impl FnMut()) -> Duration {
    f();
    (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() -> tessera::Result<()> {
    let base = Tensor::arange(0, (N * N) as i64, 1, DType::F32)?;
    let ours_a = base.as_strided(&[N, N], &[N as isize, 1], 0)?;
    let ours_at = base.as_strided(&[N, N], &[1, N as isize], 0)?;
    let ours_b = Tensor::arange(0, (N * N) as i64, 1, DType::F32)?.as_strided(
        &[N, N],
        &[N as isize, 1],
        0,
    )?;
    let nd_a = Array2::from_shape_fn((N, N), |(i, j)| (i * N + j) as f32);
    let nd_b = nd_a.clone();

    // Same result check before timing.
    let ours = ours_at.add(&ours_b)?.to_vec::<f32>()?;
    let theirs: Vec<f32> = (&nd_a.t() + &nd_b).iter().copied().collect();
    assert_eq!(ours, theirs, "results differ");

    let t_ours_t = best(|| drop(ours_at.add(&ours_b)));
    let t_nd_t = best(|| drop(&nd_a.t() + &nd_b));
    let t_ours_c = best(|| drop(ours_a.add(&ours_b)));
    let t_nd_c = best(|| drop(&nd_a + &nd_b));
    let t_alloc = best(|| drop(Tensor::zeros(&[N, N], DType::F32)));

    let gbs = |d: Duration| (3 * N * N * 4) as f64 / d.as_secs_f64() / 1e9;
    println!("threads: {}", rayon::current_num_threads());
    println!("{:<28} {:>10} {:>10}", "case (2048x2048 f32)", "ms", "GB/s");
    for (name, d) in [
        ("tessera a.T + b", t_ours_t),
        ("ndarray a.t() + b", t_nd_t),
        ("tessera a + b", t_ours_c),
        ("ndarray a + b", t_nd_c),
        ("tessera zeros (output alloc)", t_alloc),
    ] {
        println!(
            "{:<28} {:>10.3} {:>10.2}",
            name,
            d.as_secs_f64() * 1e3,
            gbs(d)
        );
    }
    println!(
        "ratio strided_add_time_vs_ndarray {:.3}",
        t_ours_t.as_secs_f64() / t_nd_t.as_secs_f64()
    );
    println!(
        "ratio contiguous_add_time_vs_ndarray {:.3}",
        t_ours_c.as_secs_f64() / t_nd_c.as_secs_f64()
    );
    Ok(())
}
