//! Parallel training against the single process (docs/design.md D11): the gradients issue's
//! MLP (data, model and hybrid parallel) and sparse logistic regression (data parallel, its
//! row_sparse gradient reduced as row_sparse) follow the single-process loss curve and end
//! at its weights, to float32 rounding; the refusals of the optimiser and the agreement on a
//! failed backward.

use std::sync::Arc;

use tessera::optim::{Adam, Optimizer};
use tessera::{autograd as local_autograd, Tensor};
use tessera_dist::train::mlp::{cross_entropy, GlobalMlp, Parallelism};
use tessera_dist::train::{partial_loss, DistOptimizer};
use tessera_dist::{autograd, balanced_range, Comm, GlobalTensor, Mesh, Result};
use tessera_models::data::{bag_of_words, spirals};
use tessera_models::{logreg, loss, mlp};

use super::fail;

const STEPS: usize = 6;

/// Relative closeness of float32 training results.
fn near(what: &str, got: &[f32], want: &[f32]) -> Result<()> {
    let bad = got.len() != want.len()
        || got
            .iter()
            .zip(want)
            .any(|(a, b)| (a - b).abs() > 2e-4 * (1.0 + b.abs()));
    if bad {
        return Err(fail(format!("{what}: got {got:?}, want {want:?}")));
    }
    Ok(())
}

/// Batch `step` of the spirals: inputs `[n, 2]`, one-hot targets `[n, 3]`.
fn spiral_batch(step: usize, n: usize) -> Result<(Tensor, Tensor)> {
    let (points, labels) = spirals(200, 3, 5);
    let rows: Vec<usize> = (0..n)
        .map(|i| (step * 97 + i * 13) % points.len())
        .collect();
    let x: Vec<f32> = rows.iter().flat_map(|&r| points[r]).collect();
    let mut t = vec![0f32; n * 3];
    for (i, &r) in rows.iter().enumerate() {
        t[i * 3 + labels[r]] = 1.0;
    }
    Ok((Tensor::from_vec(x, &[n, 2])?, Tensor::from_vec(t, &[n, 3])?))
}

/// The single-process run: the loss of each step and the final weights.
fn mlp_reference(dims: &[usize], batch: usize) -> Result<(Vec<f32>, Vec<f32>)> {
    let model = mlp::Mlp::with_dims(dims, 3)?;
    let mut opt = Adam::new(model.params(), 0.01)?;
    let mut losses = Vec::new();
    for step in 0..STEPS {
        let (x, t) = spiral_batch(step, batch)?;
        opt.zero_grad()?;
        let l = loss::cross_entropy(&model.forward(&x)?, &t)?;
        local_autograd::backward(&l, None, false)?;
        opt.step()?;
        losses.push(l.item::<f32>()?);
    }
    Ok((losses, flat_weights(&model.layers)?))
}

fn flat_weights(layers: &[(Tensor, Tensor)]) -> Result<Vec<f32>> {
    let mut v = Vec::new();
    for (w, b) in layers {
        v.extend(w.detach().to_vec::<f32>()?);
        v.extend(b.detach().to_vec::<f32>()?);
    }
    Ok(v)
}

/// The same run over global tensors with `par` on `mesh`; gradients reduced during backward
/// in buckets of `bucket` bytes, or after it.
fn mlp_parallel(
    dims: &[usize],
    batch: usize,
    par: Parallelism,
    mesh: &Arc<Mesh>,
    (overlap, bucket): (bool, usize),
) -> Result<(Vec<f32>, Vec<f32>)> {
    let start = mlp::Mlp::with_dims(dims, 3)?;
    let model = GlobalMlp::from_full(&start.layers, par, mesh)?;
    let mut opt = DistOptimizer::new(model.params(), |p| Adam::new(p, 0.01))?;
    opt.set_overlap(overlap, bucket);
    let mut losses = Vec::new();
    for step in 0..STEPS {
        let (x, t) = spiral_batch(step, batch)?;
        let x = GlobalTensor::from_logical(&x, &par.batch(), mesh)?;
        let t = GlobalTensor::from_logical(&t, &par.batch(), mesh)?;
        opt.zero_grad()?;
        let l = cross_entropy(&model.forward(&x)?, &t)?;
        opt.backward(&l)?;
        opt.step()?;
        losses.push(l.to_full()?.item::<f32>()?);
    }
    Ok((losses, flat_weights(&model.to_full()?)?))
}

/// Data, model and (on 4 ranks) hybrid parallel MLP runs equal the single process. The
/// batch of 30 and the hidden width of 10 split unevenly over 3 and 4 ranks.
pub fn mlp_matches_single_process(comm: Comm) -> Result<()> {
    let dims = [2, 10, 10, 3];
    let batch = 30;
    let (want_loss, want_w) = mlp_reference(&dims, batch)?;
    let p = comm.size();
    // Small buckets (several per step), one bucket, and no overlap.
    let runs = [
        (Parallelism::Data, (true, 256)),
        (Parallelism::Data, (false, 0)),
        (Parallelism::Model, (true, 1 << 20)),
        (Parallelism::Hybrid, (true, 256)),
        (Parallelism::Hybrid, (false, 0)),
    ];
    for (par, overlap) in runs {
        let Ok(shape) = par.mesh_shape(p) else {
            continue;
        };
        let mesh = Mesh::new(comm.clone(), &shape)?;
        let (loss, w) = mlp_parallel(&dims, batch, par, &mesh, overlap)?;
        let what = format!("{par:?} on {shape:?}, overlap {overlap:?}");
        near(&format!("{what}: losses"), &loss, &want_loss)?;
        near(&format!("{what}: weights"), &w, &want_w)?;
    }
    Ok(())
}

/// Data-parallel sparse logistic regression: each rank computes `dot(csr, W)` on its part
/// of the batch; W's row_sparse gradient is reduced as row_sparse, with fewer bytes than a
/// dense all-reduce; losses and weights equal the single process (lazy Adam on both).
pub fn logreg_matches_single_process(comm: Comm) -> Result<()> {
    let (features, batch) = (3000, 48);
    let data = bag_of_words(400, features, 12, 9);
    let rows =
        |step: usize| -> Vec<usize> { (0..batch).map(|i| (step * batch + i) % 400).collect() };
    // The single process.
    let model = logreg::SparseLogReg::new(features)?;
    let mut opt = Adam::new(vec![model.w.clone(), model.b.clone()], 0.05)?;
    let mut want = Vec::new();
    for step in 0..STEPS {
        let (x, y) = logreg::batch(&data, &rows(step))?;
        opt.zero_grad()?;
        let l = loss::logistic(&model.forward(&x)?, &y)?;
        local_autograd::backward(&l, None, false)?;
        opt.step()?;
        want.push(l.item::<f32>()?);
    }
    // Data parallel.
    let mesh = Mesh::line(comm.clone());
    let (p, me) = (comm.size(), comm.rank());
    let local = logreg::SparseLogReg::new(features)?;
    let w = GlobalTensor::from_replica(local.w.clone(), &mesh)?;
    let b = GlobalTensor::from_replica(local.b.clone(), &mesh)?;
    // b before W: W's row_sparse gradient then comes first in their bucket (buckets take the
    // parameters in reverse order), ahead of b's dense one.
    let mut opt = DistOptimizer::new(vec![b.clone(), w.clone()], |p| Adam::new(p, 0.05))?;
    let mut got = Vec::new();
    for step in 0..STEPS {
        let all = rows(step);
        let mine = &all[balanced_range(batch, p, me)];
        let (x, y) = logreg::batch(&data, mine)?;
        opt.zero_grad()?;
        // This rank's share of the mean loss over the whole batch.
        let share = loss::logistic(&local.forward(&x)?, &y)?
            .mul_scalar(mine.len() as f64 / batch as f64)?;
        let l = partial_loss(share, &mesh)?;
        opt.backward(&l)?;
        let grad = w
            .local()
            .grad()
            .ok_or_else(|| fail("no gradient of W".into()))?;
        if grad.stype() != tessera::StorageType::RowSparse {
            return Err(fail(format!("W's reduced gradient is {}", grad.stype())));
        }
        let dense = features * 4 + 4;
        if p > 1 && opt.last_reduction_bytes() >= dense {
            return Err(fail(format!(
                "row_sparse reduction received {} bytes, a dense one {dense}",
                opt.last_reduction_bytes()
            )));
        }
        opt.step()?;
        got.push(l.to_full()?.item::<f32>()?);
    }
    near("logreg losses", &got, &want)?;
    near(
        "logreg weights",
        &w.to_full()?.detach().to_vec::<f32>()?,
        &model.w.detach().to_vec::<f32>()?,
    )
}

/// A step on an unreduced (Partial) gradient is refused; a rank whose backward fails makes
/// every rank fail, and no rank's weights change.
pub fn training_refusals(comm: Comm) -> Result<()> {
    let mesh = Mesh::line(comm.clone());
    let start = mlp::Mlp::with_dims(&[2, 4, 3], 1)?;
    let model = GlobalMlp::from_full(&start.layers, Parallelism::Data, &mesh)?;
    let before = flat_weights(&model.to_full()?)?;
    let mut opt = DistOptimizer::new(model.params(), |p| Adam::new(p, 0.01))?;
    let (x, t) = spiral_batch(0, 8)?;
    let x = GlobalTensor::from_logical(&x, &Parallelism::Data.batch(), &mesh)?;
    let t = GlobalTensor::from_logical(&t, &Parallelism::Data.batch(), &mesh)?;
    let l = cross_entropy(&model.forward(&x)?, &t)?;
    autograd::backward(&l)?; // gradients left Partial(sum)
    match opt.step() {
        Err(e) if e.to_string().contains("Partial(sum) gradient") => {}
        other => return Err(fail(format!("step on a Partial gradient: {other:?}"))),
    }
    opt.zero_grad()?;
    if comm.size() == 1 {
        return Ok(());
    }
    // The last rank's backward fails (a loss of more than one element); the others' succeed.
    let l = cross_entropy(&model.forward(&x)?, &t)?;
    let bad = model.forward(&x)?;
    let mine = if comm.rank() + 1 == comm.size() {
        &bad
    } else {
        &l
    };
    let outcome = opt.backward(mine);
    if outcome.is_ok() {
        return Err(fail(
            "a backward that failed on one rank succeeded on this one".into(),
        ));
    }
    // A rank with gradients refuses to step on them unreduced; one without steps nothing.
    let _ = opt.step();
    let after = flat_weights(&model.to_full()?)?;
    near("weights after refusals", &after, &before)
}
