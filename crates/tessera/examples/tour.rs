//! The Tessera tour: exercises every part of the library and prints what it did.
//! Run from the repository root: `cargo run --release --example tour`.

use std::time::Instant;

use tessera::shape::{ShapeCache, NUM_STRIPES};
use tessera::{DType, Shape, Tensor};

fn section(title: &str) {
    println!("\n=== {title} ===");
}

fn main() -> tessera::Result<()> {
    section("dense tensors of every dtype");
    for d in DType::ALL {
        let t = Tensor::arange(0, 6, 1, d)?;
        println!("{:<9} {t:?}", d.name());
    }
    let grid = Tensor::from_vec((0..12).map(|i| i as f32 * 0.5).collect(), &[3, 4])?;
    println!("from_vec 3x4 f32:\n{grid}");
    println!("full:\n{:?}", Tensor::full(&[2, 3], 7, DType::I32)?);
    println!(
        "a large tensor prints summarised like NumPy:\n{}",
        Tensor::arange(0, 5000, 1, DType::I64)?
    );

    section("shape-descriptor cache (seed 004)");
    let cache = ShapeCache::global();
    let before = cache.len();
    let a = Shape::contiguous(&[64, 128])?;
    let b = Shape::new(&[64, 128], &[128, 1])?;
    println!(
        "Shape::contiguous([64,128]) == Shape::new([64,128], [128,1]): {} (identity)",
        a == b
    );
    println!(
        "live descriptors: {} before, {} with the handles held",
        before,
        cache.len()
    );
    let many: Vec<_> = (1..=10_000)
        .map(|n| Shape::contiguous(&[n, 3]))
        .collect::<Result<_, _>>()?;
    println!(
        "after 10 000 distinct shapes: {} live ({} lock stripes)",
        cache.len(),
        NUM_STRIPES
    );
    drop(many);
    println!(
        "after dropping them: {} live (entries are freed with their last handle)",
        cache.len()
    );
    let t = Instant::now();
    for _ in 0..1_000_000 {
        std::hint::black_box(Shape::contiguous(std::hint::black_box(&[64, 128]))?);
    }
    println!(
        "1e6 cache hits: {:.1} ns each",
        t.elapsed().as_nanos() as f64 / 1e6
    );
    match Tensor::zeros(&[1 << 62, 8], DType::F32) {
        Err(e) => println!("overflowing shape -> error: {e}"),
        Ok(_) => println!("overflowing shape was accepted (bug)"),
    }
    Ok(())
}
