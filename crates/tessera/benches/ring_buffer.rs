//! Ring-buffer benchmark (docs/design.md O5; docs/performance.md). Run: `cargo bench --bench ring_buffer`.
//!
//! Buffer of B = 4096 rows of 1 KiB (256 f32) along axis 0, N = 1 row per step. Times, in one
//! run and as microseconds per step (best of `REPEATS` batches):
//! - the seed's shift: `ring_buffer_step` on a plain dense buffer (one overlapping `assign`
//!   shifting B - N rows, then the input), O(B);
//! - a plain `copy_within` memmove of the B - N rows (the floor of any shifting step);
//! - the O(N) double-written ring: `ring_buffer_step` on a ring window, and `RingBuffer::push`.
//!
//! Then `RingBuffer::push` at B = 256 and B = 65536 (flat in B, since a step is O(N)), and
//! the registry's dispatch overhead: a 1-element `add` through `invoke` against the method.
//!
//! Prints a table and the ratio lines:
//! - `ring_push_speedup_vs_shift_B4096`: seed shift µs / `RingBuffer::push` µs. Goal >= 50.
//! - `ring_push_B65536_over_B256`: push µs at B = 65536 / at B = 256. Goal <= 2.
//! - `invoke_overhead_vs_direct`: `invoke("add")` / `Tensor::add` on 1 element.

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

    let push_at = |b: usize| {
        let mut rb = RingBuffer::new(&[1, ROW], 0, b, DType::F32).unwrap();
        us_per_step(20_000, || {
            black_box(rb.push(black_box(&x)).unwrap());
        })
    };
    let (small, large) = (push_at(256), push_at(65_536));
    row("O(N): RingBuffer::push, B = 256", small, 2);
    row("O(N): RingBuffer::push, B = 65536", large, 2);

    let a = Tensor::from_vec(vec![1.0f32], &[1]).unwrap();
    let pair = [a.clone(), a.clone()];
    let direct = us_per_step(200_000, || {
        black_box(black_box(&a).add(black_box(&a)).unwrap());
    });
    let via = us_per_step(200_000, || {
        black_box(tessera::ops::invoke("add", black_box(&pair), &[]).unwrap());
    });
    println!(
        "{:<48} {:>12.1} ns",
        "1-element add, Tensor::add",
        direct * 1e3
    );
    println!(
        "{:<48} {:>12.1} ns",
        "1-element add, invoke(\"add\")",
        via * 1e3
    );

    println!("ratio ring_push_speedup_vs_shift_B4096 {:.1}", seed / push);
    println!("ratio ring_step_speedup_vs_shift_B4096 {:.1}", seed / ring);
    println!("ratio ring_push_B65536_over_B256 {:.2}", large / small);
    println!("ratio invoke_overhead_vs_direct {:.2}", via / direct);
    println!("ratio seed_shift_vs_memmove {:.2}", seed / memmove);
}
