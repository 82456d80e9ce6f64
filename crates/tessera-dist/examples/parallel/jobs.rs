#![allow(dead_code)] // shared by the example, the tour and the bench; each uses a part
//! Parallel training jobs shared by the `train_dist` example, the tour and the `training`
//! bench (docs/design.md D11): data-parallel sparse logistic regression and a data-, model-
//! or hybrid-parallel MLP, each run on the ranks of one communicator.

use std::time::Instant;

use tessera::optim::Adam;
use tessera::Tensor;
use tessera_dist::train::mlp::{cross_entropy, GlobalMlp, Parallelism};
use tessera_dist::train::{partial_loss, DistOptimizer, OverlapStats};
use tessera_dist::{balanced_range, Comm, GlobalTensor, Mesh, Result, Sbp};
use tessera_models::data::{bag_of_words, normal, spirals};
use tessera_models::{logreg, loss, mlp};

/// What one rank measured.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// The global loss of each step.
    pub losses: Vec<f32>,
    /// Wall seconds of the timed steps (all but the first).
    pub secs: f64,
    /// Samples of the global batch processed in the timed steps.
    pub samples: usize,
    /// Gradient bytes this rank received per step (the last step's).
    pub bytes: usize,
    /// The overlap of the timed steps, summed.
    pub overlap: OverlapStats,
}

impl Run {
    /// Samples per second of the whole job (all ranks).
    pub fn throughput(&self) -> f64 {
        self.samples as f64 / self.secs.max(1e-12)
    }

    /// Mean seconds per timed step.
    pub fn step_secs(&self) -> f64 {
        self.secs / (self.losses.len().saturating_sub(1)).max(1) as f64
    }
}

/// Sizes of a sparse logistic regression job.
#[derive(Clone, Copy, Debug)]
pub struct LogRegJob {
    pub features: usize,
    pub docs: usize,
    pub words: usize,
    /// Documents per step, split over the ranks.
    pub batch: usize,
    pub steps: usize,
}

/// Data-parallel sparse logistic regression: every rank holds the weights (`Broadcast`),
/// computes `dot(csr, W)` on its part of each batch, and the row_sparse gradient of W is
/// reduced as row_sparse.
pub fn logreg_dp(comm: Comm, job: LogRegJob) -> Result<Run> {
    let data = bag_of_words(job.docs, job.features, job.words, 7);
    let mesh = Mesh::line(comm.clone());
    let (p, me) = (comm.size(), comm.rank());
    let model = logreg::SparseLogReg::new(job.features)?;
    let params = vec![
        GlobalTensor::from_replica(model.w.clone(), &mesh)?,
        GlobalTensor::from_replica(model.b.clone(), &mesh)?,
    ];
    let mut opt = DistOptimizer::new(params, |p| Adam::new(p, 0.05))?;
    timed(&comm, job.steps, job.batch, |step, run| {
        let rows: Vec<usize> = (0..job.batch)
            .map(|i| (step * job.batch + i) % job.docs)
            .collect();
        let mine = &rows[balanced_range(job.batch, p, me)];
        let (x, y) = logreg::batch(&data, mine)?;
        opt.zero_grad()?;
        let share = loss::logistic(&model.forward(&x)?, &y)?
            .mul_scalar(mine.len() as f64 / job.batch as f64)?;
        let l = partial_loss(share, &mesh)?;
        opt.backward(&l)?;
        opt.step()?;
        run.losses.push(l.to_full()?.item::<f32>()?);
        run.bytes = opt.last_reduction_bytes();
        Ok(())
    })
}

/// Runs `steps` steps of `one` (which records its loss in the run), timing every step but the
/// first (warm-up) between barriers, each step `batch` samples.
fn timed(
    comm: &Comm,
    steps: usize,
    batch: usize,
    mut one: impl FnMut(usize, &mut Run) -> Result<()>,
) -> Result<Run> {
    let mut run = Run::default();
    let mut t0 = Instant::now();
    for step in 0..steps {
        if step == 1 {
            comm.barrier()?;
            t0 = Instant::now();
        }
        one(step, &mut run)?;
        if step > 0 {
            run.samples += batch;
        }
    }
    comm.barrier()?;
    run.secs = t0.elapsed().as_secs_f64();
    Ok(run)
}

/// Where an MLP job's batches come from.
#[derive(Clone, Copy, Debug)]
pub enum Points {
    /// The interleaved spirals of the gradients issue (2 inputs, 3 classes).
    Spirals,
    /// Gaussian inputs of `dims[0]` features and labels `i % classes` (timing only).
    Random,
}

/// Sizes of an MLP job.
#[derive(Clone, Debug)]
pub struct MlpJob {
    pub dims: Vec<usize>,
    /// Samples per step (the global batch), split over the data-parallel ranks.
    pub batch: usize,
    pub steps: usize,
    pub points: Points,
    /// Reduce gradients during backward (and the bucket size in bytes).
    pub overlap: (bool, usize),
}

/// Rows `rows` of batch `step`: inputs `[len, dims[0]]` and one-hot targets. Each rank makes
/// only its own rows, as a data-parallel program loads only its shard.
pub fn mlp_batch(
    job: &MlpJob,
    step: usize,
    rows: std::ops::Range<usize>,
) -> Result<(Tensor, Tensor)> {
    let (inputs, classes) = (job.dims[0], *job.dims.last().unwrap_or(&1));
    let n = rows.len();
    let (x, labels): (Vec<f32>, Vec<usize>) = match job.points {
        Points::Spirals => {
            let (pts, lab) = spirals(400, classes, 5);
            let at: Vec<usize> = rows
                .map(|i| (step * job.batch + i * 7) % pts.len())
                .collect();
            (
                at.iter().flat_map(|&r| pts[r]).collect(),
                at.iter().map(|&r| lab[r]).collect(),
            )
        }
        Points::Random => {
            use rand::SeedableRng;
            let mut x = Vec::with_capacity(n * inputs);
            for i in rows.clone() {
                let seed = (step * 1_000_003 + i) as u64;
                x.extend(normal(
                    &mut rand::rngs::StdRng::seed_from_u64(seed),
                    inputs,
                    1.0,
                ));
            }
            (x, rows.map(|i| i % classes).collect())
        }
    };
    let mut t = vec![0f32; n * classes];
    for (i, &c) in labels.iter().enumerate() {
        t[i * classes + c] = 1.0;
    }
    Ok((
        Tensor::from_vec(x, &[n, inputs])?,
        Tensor::from_vec(t, &[n, classes])?,
    ))
}

/// The MLP trained with `par` on the ranks of `comm` (the mesh `par.mesh_shape`).
pub fn mlp_parallel(comm: Comm, par: Parallelism, job: &MlpJob) -> Result<Run> {
    let mesh = Mesh::new(comm.clone(), &par.mesh_shape(comm.size())?)?;
    let start = mlp::Mlp::with_dims(&job.dims, 3)?;
    let model = GlobalMlp::from_full(&start.layers, par, &mesh)?;
    let mut opt = DistOptimizer::new(model.params(), |p| Adam::new(p, 0.01))?;
    opt.set_overlap(job.overlap.0, job.overlap.1);
    // This rank's rows of every batch, made before the timed steps (as a data loader that
    // prefetches would have them ready).
    let sbp = par.batch();
    let rows = match sbp[0] {
        Sbp::Split(_) => balanced_range(job.batch, mesh.shape()[0], mesh.coords()[0]),
        _ => 0..job.batch,
    };
    let batches = (0..job.steps)
        .map(|step| {
            let (x, t) = mlp_batch(job, step, rows.clone())?;
            let (classes, inputs) = (t.shape()[1], x.shape()[1]);
            Ok((
                GlobalTensor::from_local(x, &[job.batch, inputs], &sbp, &mesh, true)?,
                GlobalTensor::from_local(t, &[job.batch, classes], &sbp, &mesh, true)?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    timed(&comm, job.steps, job.batch, |step, run| {
        let (x, t) = &batches[step];
        opt.zero_grad()?;
        let l = cross_entropy(&model.forward(x)?, t)?;
        opt.backward(&l)?;
        opt.step()?;
        run.losses.push(l.to_full()?.item::<f32>()?);
        run.bytes = opt.last_reduction_bytes();
        if step > 0 {
            let o = opt.last_overlap();
            run.overlap.backward += o.backward;
            run.overlap.comm += o.comm;
            run.overlap.wait += o.wait;
        }
        Ok(())
    })
}
