//! Ring-buffer benchmark (DESIGN O5, §3). Run: `cargo bench --bench ring_buffer`.
//!
//! Buffer of B = 4096 rows of 1 KiB (256 f32) along axis 0, N = 1 row per step. Times, in one
//! run and as microseconds per step (best of `REPEATS` batches):
//! - the seed's shift: `ring_buffer_step` on a plain dense buffer (one overlapping `assign`
//!   shifting B - N rows, then the input), O(B);
//! - a plain `copy_within` memmove of the B - N rows (the floor of any shifting step);
//! - the O(N) double-written ring: `ring_buffer_step` on a ring window, and `RingBuffer::push`.
//!
//! Prints a table and `ratio ring_buffer_step_speedup_vs_seed_shift X` (seed µs / ring µs).

use std::hint::black_box;
use std::time::Instant;

use tessera::ring::{ring_buffer_state, ring_buffer_step};
use tessera::{DType, RingBuffer, Tensor};

const B: usize = 4096;
const ROW: usize = 256;
const REPEATS: usize = 5;

/// Best over `REPEATS` batches of `steps` calls of `f`, in µs per call.
fn us_per_step(steps: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..steps.min(16) {
        f(); // warm up
    }
    (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..steps {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / steps as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn row(name: &str, us: f64, rows_moved: usize) {
    println!("{name:<48} {us:>12.3} {rows_moved:>14}");
}

fn main() {
    let x = Tensor::full(&[1, ROW], 1.5, DType::F32).unwrap();
    println!(
        "B = {B} rows x {ROW} f32 (1 KiB), N = 1, axis 0; best of {REPEATS} batches\n{:<48} {:>12} {:>14}",
        "case", "us/step", "rows written"
    );

    let buffer = Tensor::zeros(&[B, ROW], DType::F32).unwrap();
    let seed = us_per_step(200, || {
        black_box(ring_buffer_step(black_box(&x), &buffer, 0).unwrap());
    });
    row("seed shift: ring_buffer_step, dense buffer", seed, B);

    let mut raw = vec![0f32; B * ROW];
    let memmove = us_per_step(200, || {
        raw.copy_within(ROW.., 0);
        raw[(B - 1) * ROW..].fill(1.5);
        black_box(&mut raw);
    });
    row("memmove floor: copy_within of B - 1 rows", memmove, B);

    let mut buf = ring_buffer_state(&[B, ROW], 0, DType::F32).unwrap();
    let ring = us_per_step(20_000, || {
        buf = ring_buffer_step(black_box(&x), &buf, 0).unwrap();
    });
    row("O(N): ring_buffer_step, ring window", ring, 2);

    let mut rb = RingBuffer::new(&[1, ROW], 0, B, DType::F32).unwrap();
    let push = us_per_step(20_000, || {
        black_box(rb.push(black_box(&x)).unwrap());
    });
    row("O(N): RingBuffer::push", push, 2);

    // More than B rows went through the ring: every row it holds is the input.
    assert!(buf.to_vec::<f32>().unwrap().iter().all(|&v| v == 1.5));

    println!(
        "ratio ring_buffer_step_speedup_vs_seed_shift {:.1}",
        seed / ring
    );
    println!(
        "ratio ring_buffer_push_speedup_vs_seed_shift {:.1}",
        seed / push
    );
    println!("ratio seed_shift_vs_memmove {:.2}", seed / memmove);
}
