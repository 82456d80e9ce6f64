//! The parallel cut-over, measured (docs/design.md P3): each kernel family timed on one thread
//! and on all of the machine's threads, at sizes around `PAR_MIN` and `PAR_MIN_COSTLY`, with
//! the kernels forced to use threads at every size. A ratio below 1 means threads pay off at
//! that size; the constants in `kernels/elementwise.rs` are set from this table.
//!
//! `cargo bench -p tessera --bench par_cutover` (median of 7 samples of 100 calls, two
//! alternating inputs per op).

use std::time::Instant;

use tessera::kernels::parallel::{force_parallel_from, set_num_threads};
use tessera::{BinaryOp, DType, Tensor, UnaryOp};

fn median_us(f: &dyn Fn(usize)) -> f64 {
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for k in 0..100 {
                f(k);
            }
            t.elapsed().as_secs_f64() / 100.0 * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[3]
}

fn main() -> tessera::Result<()> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Sizes the global pool with every thread before the first kernel runs.
    set_num_threads(threads)?;
    println!("threads: 1 vs {threads}; times in us; ratio = many / one (below 1: threads win)");
    println!(
        "{:>9} {:>22} {:>22} {:>22} {:>22}",
        "elements", "a + b", "sum", "a.T + a.T", "sin"
    );
    for shift in 14..=20 {
        let n = 1usize << shift;
        let inputs = |k: usize| Tensor::full(&[n / 256, 256], (k + 1) as f64 * 0.25, DType::F32);
        let (a, b) = (inputs(0)?, inputs(1)?);
        let pick = |k: usize| if k.is_multiple_of(2) { &a } else { &b };
        let ops: [&dyn Fn(usize); 4] = [
            &|k| drop(pick(k).binary(pick(k + 1), BinaryOp::Add)),
            &|k| drop(pick(k).sum(None, false)),
            &|k| {
                let t = pick(k).t().expect("2-D");
                drop(t.binary(&t, BinaryOp::Add))
            },
            &|k| drop(pick(k).unary(UnaryOp::Sin)),
        ];
        let mut row = format!("{n:>9}");
        for op in ops {
            set_num_threads(1)?;
            let one = median_us(op);
            set_num_threads(threads)?;
            force_parallel_from(0);
            let many = median_us(op);
            force_parallel_from(usize::MAX);
            row += &format!(" {one:>7.1} {many:>7.1} ({:.2})", many / one);
        }
        println!("{row}");
    }
    Ok(())
}
