//! View-creation benchmark. Run: `cargo bench --bench views`.
//!
//! `ratio view_create_time_vs_ndarray`: a 4-index view (a step, an ellipsis, a new axis, a
//! negative step) of a 64^4 f32 tensor, ours / ndarray's `slice` with `s![]` on an `ArrayD`
//! (ndarray has no ellipsis: the equivalent spells out the middle dims). Goal <= 1.0.
//! ndarray's `slice` returns a borrowed view (`ArrayView`: no reference count, no allocation
//! with a fixed-length `s![]`), so the goal line times Tessera's borrowed view,
//! `Tensor::index_ref` (`TensorRef`: geometry on the stack, nothing interned). The owned view,
//! `Tensor::index`, also takes a reference to its storage and to its interned shape descriptor
//! (four atomic read-modify-writes per create+drop); it is printed as
//! `ratio view_create_owned_time_vs_ndarray` for the record.

#![allow(clippy::reversed_empty_ranges)]

use std::hint::black_box;
use std::time::Instant;

use ndarray::{s, ArrayD, IxDyn};
use tessera::index::{Ellipsis, NewAxis};
use tessera::{idx, DType, Tensor};

const OPS: usize = 1_000_000;
const REPEATS: usize = 7;

fn time_ns(mut f: impl FnMut()) -> f64 {
    (0..REPEATS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..OPS {
                f();
            }
            t.elapsed().as_nanos() as f64 / OPS as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let t = Tensor::zeros(&[64, 64, 64, 64], DType::F32).unwrap();
    let a = ArrayD::<f32>::zeros(IxDyn(&[64, 64, 64, 64]));
    let specs = idx![1..60; 2, Ellipsis, NewAxis, ..; -3];
    let borrowed = time_ns(|| {
        drop(black_box(
            black_box(&t).index_ref(black_box(&specs)).unwrap(),
        ))
    });
    let owned = time_ns(|| drop(black_box(black_box(&t).index(black_box(&specs)).unwrap())));
    let theirs = time_ns(|| {
        black_box(black_box(&a).slice(s![1..60;2, .., .., ndarray::NewAxis, ..;-3]));
    });
    let view = a.slice(s![1..60;2, .., .., ndarray::NewAxis, ..;-3]);
    let elem = std::mem::size_of::<f32>() as isize;
    for ours in [
        t.index(&specs).unwrap().strides(),
        t.index_ref(&specs).unwrap().strides(),
    ] {
        let bytes: Vec<isize> = ours.iter().map(|s| s * elem).collect();
        let theirs: Vec<isize> = view.strides().iter().map(|s| s * elem).collect();
        assert_eq!(bytes, theirs);
    }
    assert_eq!(t.index_ref(&specs).unwrap().shape(), view.shape());

    println!("{:<48} {:>8}", "4-index view of a 64^4 f32 tensor", "ns/op");
    println!(
        "{:<48} {:>8.1}",
        "tessera Tensor::index_ref (borrowed)", borrowed
    );
    println!("{:<48} {:>8.1}", "tessera Tensor::index (owned)", owned);
    println!("{:<48} {:>8.1}", "ndarray ArrayD::slice(s![..])", theirs);
    println!("ratio view_create_time_vs_ndarray {:.3}", borrowed / theirs);
    println!(
        "ratio view_create_owned_time_vs_ndarray {:.3}",
        owned / theirs
    );
}
