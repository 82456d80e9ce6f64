//! The Tessera tour: exercises every part of the library and prints what it did.
//! Run from the repository root: `cargo run --release --example tour`.

#[path = "parallel/jobs.rs"]
mod jobs;

use std::time::Instant;

use tessera::index::{encode, Ellipsis, IndexSpec, NewAxis};
use tessera::ops::{self, fallback_count, StorageType};
use tessera::shape::{ShapeCache, NUM_STRIPES};
use tessera::{idx, BinaryOp, DType, FftNorm, MathOp, MatrixNorm, RingBuffer, Shape, Tensor, C128};

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
        "after dropping them: {} live: the {} the cache pinned (at most {}, never freed, their \
         handles uncounted); the rest were freed with their last handle",
        cache.len(),
        cache.pinned(),
        tessera::shape::GLOBAL_PIN_BUDGET
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

    views()?;
    expand_and_repeat()?;
    in_place()?;
    ops_by_name()?;
    sparse()?;
    ring_buffer()?;
    fourier_and_linear_algebra()?;
    gradients()?;
    section("global tensors on 4 in-process ranks (seed 001, SBP)");
    tessera_dist::tour_section()?;
    distributed_training()?;
    Ok(())
}

fn views() -> tessera::Result<()> {
    section("zero-copy views from index specs (seed 002)");
    let t = Tensor::arange(0, 24, 1, DType::I64)?.view(&[2, 3, 4])?;
    println!("t = arange(24).view([2, 3, 4]):\n{t}");
    let v = t.index(&idx![1, 0..3; 2, Ellipsis, NewAxis])?;
    println!(
        "t[1, 0:3:2, ..., None] -> shape {:?}, strides {:?}, shares storage: {}\n{v}",
        v.shape(),
        v.strides(),
        v.shares_storage(&t)
    );
    let r = t.index(&idx![.., ..; -1, 3..=3])?;
    println!(
        "t[:, ::-1, 3..=3] (negative stride, DL4J inclusive end) -> strides {:?}\n{r}",
        r.strides()
    );
    let b = t.index_ref(&idx![.., 1])?;
    println!(
        "borrowed view t.index_ref([:, 1]) (nothing interned, no refcount) -> shape {:?}, \
         strides {:?}, offset {}, values {:?}",
        b.shape(),
        b.strides(),
        b.offset(),
        b.to_vec::<i64>()?
    );
    let specs = [
        IndexSpec::Point(-1),
        IndexSpec::All,
        IndexSpec::interval(1, 3),
    ];
    let code = encode(&specs);
    println!("INT64 encoding of [Point(-1), All, Interval(1..3)]: {code:?}");
    println!("create_view(t, code):\n{}", t.create_view(&code)?);
    match t.create_view(&[0, 1, 1]) {
        Err(e) => println!("malformed encoding -> error: {e}"),
        Ok(_) => println!("malformed encoding accepted (bug)"),
    }
    let tt = t.t()?;
    println!(
        "t.T is contiguous: {}; reshape of it to [-1] copies: shares storage = {}",
        tt.is_contiguous(),
        tt.reshape(&[-1])?.shares_storage(&t)
    );
    Ok(())
}

fn expand_and_repeat() -> tessera::Result<()> {
    section("expand (stride 0) and repeat (seed 001)");
    let col = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3, 1])?;
    let e = col.expand(&[2, -1, 4])?;
    println!(
        "[3,1].expand([2,-1,4]) -> shape {:?} strides {:?} (no copy)\n{e}",
        e.shape(),
        e.strides()
    );
    let small = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    println!(
        "repeat([2, 3]) of [[1,2],[3,4]] (one strided copy):\n{}",
        small.repeat(&[2, 3])?
    );
    println!("tile([2]):\n{}", small.tile(&[2])?);
    Ok(())
}

fn in_place() -> tessera::Result<()> {
    section("in-place writes through views (V7)");
    let a = Tensor::arange(0, 6, 1, DType::F64)?;
    let head = a.index(&idx![1..])?;
    let tail = a.index(&idx![..-1])?;
    head.binary_(&tail, BinaryOp::Add)?;
    println!("a = arange(6); a[1:] += a[:-1] -> {a}  (NumPy's answer, not a running sum)");
    let m = Tensor::zeros(&[3, 4], DType::I32)?;
    m.index(&idx![.., 1..; 2])?
        .assign(&Tensor::from_vec(vec![7i32, 8], &[2])?)?;
    println!("m[:, 1::2] = [7, 8] reaches the base:\n{m}");
    match m.index(&idx![0])?.expand(&[2, 4]).and_then(|x| x.fill_(1)) {
        Err(e) => println!("writing into an expanded view -> error: {e}"),
        Ok(_) => println!("write into an expanded view accepted (bug)"),
    }
    Ok(())
}

fn ops_by_name() -> tessera::Result<()> {
    section("operator registry, storage-type dispatch and fallback (seed 003)");
    println!(
        "{} ops registered; see docs/ops.md",
        ops::registry().list().len()
    );
    let x = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 0.0], &[2, 2])?;
    let y = ops::invoke(
        "quadratic",
        std::slice::from_ref(&x),
        &[("a", "1"), ("b", "2"), ("c", "3")],
    )?;
    println!("invoke(\"quadratic\", x, a=1, b=2, c=3):\n{}", y[0]);
    let g = ops::invoke(
        "_backward_quadratic",
        &[Tensor::ones(&[2, 2], DType::F32)?, x.clone()],
        &[("a", "1"), ("b", "2")],
    )?;
    println!("its gradient 2*a*x + b:\n{}", g[0]);
    match ops::registry().gradient_of("ring_buffer") {
        Err(e) => println!("gradient of ring_buffer -> {e}"),
        Ok(g) => println!("ring_buffer has gradient {g:?} (bug)"),
    }
    // A CSR tensor with c != 0 takes the logged fallback (warned once per op and storage
    // types, counted every time).
    let tagged = x.cast_storage(StorageType::Csr)?;
    for _ in 0..2 {
        ops::invoke(
            "quadratic",
            std::slice::from_ref(&tagged),
            &[("a", "1"), ("b", "2"), ("c", "3")],
        )?;
    }
    println!(
        "fallbacks run: {} (the warning above is printed once)",
        fallback_count()
    );
    Ok(())
}

fn sparse() -> tessera::Result<()> {
    section("sparse storage: csr, row_sparse, sparse kernels (seed 003)");
    // Seed 003's example: quadratic on csr with c = 0 stays csr.
    let x =
        Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 0.0], &[2, 2])?.cast_storage(StorageType::Csr)?;
    let y = ops::invoke(
        "quadratic",
        std::slice::from_ref(&x),
        &[("a", "1"), ("b", "2")],
    )?;
    println!(
        "quadratic(csr, a=1, b=2, c=0) -> {} tensor:\n{}",
        y[0].stype(),
        y[0]
    );
    let m = y[0].as_csr()?;
    println!(
        "  indptr {:?}, indices {:?} ({}, shared with the input), data {:?}",
        m.indptr().to_vec::<i32>()?,
        m.indices().to_vec::<i32>()?,
        m.index_dtype(),
        m.data().to_vec::<f64>()?
    );
    // c != 0: no csr kernel, the logged fallback runs and the output is dense.
    let z = ops::invoke(
        "quadratic",
        std::slice::from_ref(&x),
        &[("a", "1"), ("b", "2"), ("c", "3")],
    )?;
    println!(
        "quadratic(csr, a=1, b=2, c=3) -> {} tensor:\n{}",
        z[0].stype(),
        z[0]
    );
    // A checked constructor names the violated invariant.
    let bad = tessera::CsrMatrix::try_new(
        [2, 2],
        vec![0, 2, 1],
        vec![0, 1],
        Tensor::ones(&[2], DType::F64)?,
    );
    println!(
        "CsrMatrix::try_new with a decreasing indptr -> {}",
        bad.unwrap_err()
    );
    // Sparse dot: SpMV, and csr.T @ dense as row_sparse without materialising the transpose.
    let v = Tensor::from_vec(vec![1.0f64, 10.0], &[2])?;
    let spmv = ops::invoke("dot", &[x.clone(), v.clone()], &[])?;
    println!("dot(csr, [1, 10]) -> {} {}", spmv[0].stype(), spmv[0]);
    let tdot = ops::invoke("dot", &[x, v], &[("transpose_a", "true")])?;
    println!("dot(csr.T, [1, 10]) -> {} {}", tdot[0].stype(), tdot[0]);
    Ok(())
}

fn ring_buffer() -> tessera::Result<()> {
    section("ring buffer: the last B inputs along an axis (seed 000)");
    let mut ring = RingBuffer::new(&[4, 2], 0, 4, DType::I64)?;
    for step in 0..4i64 {
        let n = (step % 2 + 1) as usize;
        let x = Tensor::full(&[n, 2], step + 1, DType::I64)?;
        let window = ring.push(&x)?;
        println!(
            "push {n} row(s) of {} -> window (oldest first) {:?}",
            step + 1,
            window.to_vec::<i64>()?
        );
    }
    let buffer = tessera::ring::ring_buffer_state(&[3], 0, DType::F32)?;
    let out = ops::invoke(
        "ring_buffer",
        &[Tensor::from_vec(vec![1.0f32, 2.0], &[2])?, buffer],
        &[("axis", "0")],
    )?;
    println!(
        "invoke(\"ring_buffer\") on a fresh state of B=3 with input [1, 2] -> {}",
        out[0]
    );
    Ok(())
}

fn fourier_and_linear_algebra() -> tessera::Result<()> {
    section("Fourier transforms, complex functions, linear algebra");
    // A 4 Hz cosine sampled 32 times over one second: its spectrum peaks at bins 4 and 28.
    let n = 32;
    let signal: Vec<f64> = (0..n)
        .map(|i| (2.0 * std::f64::consts::PI * 4.0 * i as f64 / n as f64).cos())
        .collect();
    let x = Tensor::from_vec(signal, &[n])?;
    let spectrum = x.fft(None, -1, FftNorm::Backward)?;
    let mags: Vec<f64> = spectrum
        .to_vec::<C128>()?
        .iter()
        .map(|z| z.0.norm())
        .collect();
    let peaks: Vec<usize> = (0..n).filter(|&k| mags[k] > 1.0).collect();
    println!("fft of a 4 Hz cosine, 32 samples: bins above 1 in magnitude {peaks:?} (|X| = 16)");
    let back = x
        .rfft(None, -1, FftNorm::Ortho)?
        .irfft(Some(n), -1, FftNorm::Ortho)?;
    let err = back.sub(&x)?.abs()?.max(None, false)?.to_vec::<f64>()?[0];
    println!("irfft(rfft(x)) with norm=ortho: max error {err:.1e}");
    let z = Tensor::from_vec(vec![C128::new(2.0, -0.0), C128::new(0.0, 45.0)], &[2])?;
    println!(
        "acos of 2 - 0i (below the branch cut) and of 45i, complex128: {}",
        z.math(MathOp::Acos)?
    );
    let m = Tensor::from_vec((1..=9).map(f64::from).collect(), &[3, 3])?;
    println!(
        "3x3 matrix: trace {}, diagonal (a view) {}, Frobenius norm {:.4}, m^3[0,0] = {}",
        m.trace(0, None)?,
        m.diagonal(0)?,
        m.matrix_norm(false, MatrixNorm::Frobenius)?
            .to_vec::<f64>()?[0],
        m.matrix_power(3)?.to_vec::<f64>()?[0]
    );
    // Least squares through the normal equations: y = 2 + 3x sampled at x = 0..9.
    let xs: Vec<f64> = (0..10).map(f64::from).collect();
    let design = Tensor::from_vec(xs.iter().flat_map(|&x| [1.0, x]).collect(), &[10, 2])?;
    let y = Tensor::from_vec(xs.iter().map(|x| 2.0 + 3.0 * x).collect(), &[10])?;
    let dt = design.matrix_transpose()?;
    let coef = dt.matmul(&design)?.solve(&dt.matmul(&y)?)?;
    println!("least squares of y = 2 + 3x: solve(XᵀX, Xᵀy) = {coef}");
    let (q, r) = design.qr(false)?;
    let coef_qr = r.solve(&q.matrix_transpose()?.matmul(&y)?)?;
    println!("the same from QR (R x = Qᵀy): {coef_qr}");
    println!(
        "m above: singular values {}, rank {}, det {:.1e} (rounding: LU finds no exact zero)",
        m.svdvals()?,
        m.matrix_rank(None)?,
        m.det()?.to_vec::<f64>()?[0],
    );
    let singular = Tensor::from_vec(vec![1.0, 2.0, 2.0, 4.0], &[2, 2])?;
    match singular.inv() {
        Err(e) => println!("inv of [[1, 2], [2, 4]]: {e}"),
        Ok(i) => println!("inv of [[1, 2], [2, 4]] unexpectedly gave {i}"),
    }
    let batch = Tensor::from_vec(vec![2.0, 1.0, 1.0, 2.0, 4.0, 0.0, 0.0, 9.0], &[2, 2, 2])?;
    let (w, _) = batch.eigh()?;
    println!("eigenvalues of a batch of two symmetric 2x2 matrices: {w}");
    Ok(())
}

fn gradients() -> tessera::Result<()> {
    use tessera::autograd;
    use tessera_models::{logreg, mlp, plot};
    section("gradients: autograd, sparse gradients, training");
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3])?.requires_grad_(true)?;
    let y = x.mul(&x)?.sin()?.sum(None, false)?;
    autograd::backward(&y, None, false)?;
    println!(
        "d/dx sum(sin(x^2)) at [1, 2, 3] = {} (2x cos(x^2))",
        x.grad().expect("a gradient")
    );
    let w = Tensor::zeros(&[6, 2], DType::F32)?.requires_grad_(true)?;
    let ids = Tensor::from_vec(vec![4i64, 1, 4], &[3])?;
    let e = ops::invoke("embedding", &[w.clone(), ids], &[])?.remove(0);
    autograd::backward(&e.sum(None, false)?, None, false)?;
    let g = w.grad().expect("a gradient");
    println!(
        "embedding lookup of rows [4, 1, 4]: weight gradient is {} with rows {}",
        g.stype(),
        g.as_row_sparse()?.indices()
    );
    let mut ring = RingBuffer::new(&[1, 3], 0, 2, DType::F64)?;
    let window = ring.push(&Tensor::ones(&[1, 3], DType::F64)?.requires_grad_(true)?)?;
    match autograd::backward(&window.sum(None, false)?, None, false) {
        Err(e) => println!("backward through the ring buffer -> {e}"),
        Ok(()) => println!("the ring buffer had a gradient (bug)"),
    }
    println!("training (a progress bar with the running loss shows on a terminal):");
    let sparse = logreg::train(&logreg::LogRegConfig::tour())?;
    println!(
        "{} with row_sparse gradients and lazy Adam:\n{}",
        sparse.name,
        sparse.table(6)
    );
    let dense = mlp::train(&mlp::MlpConfig::tour())?;
    println!("{} with Adam:\n{}", dense.name, dense.table(6));
    for r in [&sparse, &dense] {
        println!(
            "{}: loss {:.3} -> {:.3}, held-out accuracy {:.3} against chance {:.3}",
            r.name,
            r.first_loss(20),
            r.last_loss(20),
            r.final_accuracy(),
            r.chance
        );
    }
    let path = std::path::Path::new("target/tour-training.svg");
    match plot::write_svg(path, &[&sparse, &dense]) {
        Ok(()) => println!("loss and accuracy curves written to {}", path.display()),
        Err(e) => println!("could not write the curves: {e}"),
    }
    Ok(())
}

/// A few steps of parallel training on 4 in-process ranks (docs/design.md D11): data-parallel
/// sparse logistic regression, then the MLP data parallel and hybrid (2x2 mesh), each against
/// the loss the single process gets.
fn distributed_training() -> tessera::Result<()> {
    use tessera_dist::train::mlp::Parallelism;
    section("distributed training: gradients through SBP on 4 in-process ranks");
    let err = |e: tessera_dist::DistError| {
        tessera::TesseraError::from(tessera::ErrorKind::InvalidArgument(e.to_string()))
    };
    let first = |r: Vec<Result<tessera_dist::Result<jobs::Run>, tessera_dist::DistError>>| {
        r.into_iter()
            .next()
            .expect("rank 0 ran")
            .map_err(err)?
            .map_err(err)
    };
    let logreg = jobs::LogRegJob {
        features: 20_000,
        docs: 4_000,
        words: 30,
        batch: 256,
        steps: 30,
    };
    let single = first(tessera_dist::run_ranks(1, move |c| {
        jobs::logreg_dp(c, logreg)
    }))?;
    let four = first(tessera_dist::run_ranks(4, move |c| {
        jobs::logreg_dp(c, logreg)
    }))?;
    println!(
        "sparse logistic regression, {} features, batch {} split over 4 ranks, row_sparse \
         gradients reduced as row_sparse ({} bytes received a step):",
        logreg.features, logreg.batch, four.bytes
    );
    for step in [0, 10, 20, 29] {
        println!(
            "  step {step:>2}: loss {:.5} on 4 ranks, {:.5} on 1",
            four.losses[step], single.losses[step]
        );
    }
    let job = jobs::MlpJob {
        dims: vec![2, 32, 32, 3],
        batch: 128,
        steps: 40,
        points: jobs::Points::Spirals,
        overlap: (true, 4096),
    };
    let one = first(tessera_dist::run_ranks(1, |c| {
        jobs::mlp_parallel(c, Parallelism::Data, &job)
    }))?;
    for par in [Parallelism::Data, Parallelism::Model, Parallelism::Hybrid] {
        let run = first(tessera_dist::run_ranks(4, |c| {
            jobs::mlp_parallel(c, par, &job)
        }))?;
        let worst = run
            .losses
            .iter()
            .zip(&one.losses)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "MLP 2-32-32-3, {par:?} parallel on mesh {:?}: loss {:.4} -> {:.4} in {} steps \
             ({:.2} ms a step; largest difference from 1 rank {worst:.1e})",
            par.mesh_shape(4).map_err(err)?,
            run.losses[0],
            run.losses[run.losses.len() - 1],
            run.losses.len(),
            run.step_secs() * 1e3
        );
    }
    Ok(())
}
