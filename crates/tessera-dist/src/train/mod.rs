//! Parallel training over global tensors (docs/design.md D11): an optimiser whose parameters
//! are global tensors, which reduces their gradients from the dual placement (D10) to the
//! parameter's own before stepping, and refuses to step on a gradient still `Partial`.
//!
//! - Data parallel: the batch is `Split(0)` and the parameters `Broadcast`; each rank's
//!   gradient is its share (`Partial(sum)`), reduced by an all-reduce (dense) or by gathering
//!   the touched rows (`row_sparse`, [`rowsparse`]).
//! - Model parallel: a weight `Split(1)` keeps its gradient split; no reduction.
//! - Hybrid: both, on the two axes of a 2-D mesh.
//!
//! The local optimiser (Adam, SGD) steps each rank's shard: a `Broadcast` parameter's
//! replicas stay equal because every rank applies the same reduced gradient; a split
//! parameter's shards are updated where they live (both optimisers are elementwise).

pub mod buckets;
pub mod mlp;
pub mod rowsparse;

use std::sync::mpsc;
use std::time::Instant;

use tessera::optim::Optimizer;
use tessera::{StorageType, Tensor};

use crate::comm::Comm;
use crate::error::{DistError, Result};
use crate::global::GlobalTensor;
use crate::sbp::{dual_nd, PartialOp, Sbp};
pub use buckets::{Bucket, OverlapStats};

/// The default bucket size: 1 MiB (PyTorch DDP takes 25 MiB for models of millions of
/// parameters; Tessera's models here have thousands to a million).
pub const DEFAULT_BUCKET_BYTES: usize = 1 << 20;

/// An optimiser over global parameters (see the module docs). Collective: every rank makes
/// the same calls in the same order.
pub struct DistOptimizer<O: Optimizer> {
    params: Vec<GlobalTensor>,
    inner: O,
    /// Per parameter: where the gradient made by the last reduction lives (`None`: not
    /// reduced since the last backward). A step checks that the gradient is still that one.
    reduced: Vec<Option<usize>>,
    world: Comm,
    /// Bytes this rank received in the last reduction.
    last_bytes: usize,
    /// The buckets of the dense gradients reduced during backward.
    buckets: Vec<Bucket>,
    /// Per mesh axis, a communicator of the reductions' own (`None`: no parameter is
    /// `Broadcast` on that axis), so the communication thread's collectives never interleave
    /// with the main thread's.
    reduce_comms: Vec<Option<Comm>>,
    overlap: bool,
    stats: OverlapStats,
}

/// Errors on every rank unless every rank passed parameters of the same logical shapes,
/// dtypes and placements (D7): a digest of them, its maximum and minimum over the ranks.
fn agree_on_placements(params: &[GlobalTensor], world: &Comm) -> Result<()> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in params {
        p.logical_shape().hash(&mut h);
        p.sbp().hash(&mut h);
        p.dtype().name().hash(&mut h);
    }
    // Two halves, each exact in an i64.
    let d = h.finish();
    let digest = Tensor::from_slice(&[(d >> 32) as i64, (d & 0xffff_ffff) as i64], &[2])?;
    let hi = world.all_reduce(&digest, PartialOp::Max)?.to_vec::<i64>()?;
    let lo = world.all_reduce(&digest, PartialOp::Min)?.to_vec::<i64>()?;
    if hi != lo {
        return Err(DistError::Mismatch(
            "the ranks passed the optimiser parameters of different shapes, dtypes or \
             placements"
                .into(),
        ));
    }
    Ok(())
}

/// The mesh axes a parameter placed `sbp` is `Broadcast` on: those its gradient is summed
/// over (the dual placement is `Partial(sum)` there).
fn broadcast_axes(sbp: &[Sbp]) -> Vec<usize> {
    (0..sbp.len())
        .filter(|&a| sbp[a] == Sbp::Broadcast)
        .collect()
}

/// The bucket planner's view of the parameters: elements, bytes per element, reduce axes.
fn bucket_sizes(params: &[GlobalTensor]) -> Vec<(usize, usize, Vec<usize>)> {
    params
        .iter()
        .map(|p| {
            (
                p.local().numel(),
                p.dtype().itemsize(),
                broadcast_axes(p.sbp()),
            )
        })
        .collect()
}

/// The address standing for a gradient tensor (its dense data, or its row_sparse block).
fn grad_id(g: &Tensor) -> usize {
    match g.as_row_sparse() {
        Ok(rs) => rs.data().data_ptr() as usize,
        Err(_) => g.data_ptr() as usize,
    }
}

impl<O: Optimizer> DistOptimizer<O> {
    /// An optimiser over `params` (global leaves that require a gradient, all on one mesh);
    /// `make` builds the local optimiser over their shards.
    ///
    /// ```
    /// use tessera::{optim::Sgd, Tensor};
    /// use tessera_dist::train::DistOptimizer;
    /// use tessera_dist::{autograd, ops, run_ranks, GlobalTensor, Mesh, Sbp};
    /// let out = run_ranks(2, |comm| -> tessera_dist::Result<Vec<f64>> {
    ///     let mesh = Mesh::line(comm);
    ///     let w = Tensor::from_slice(&[1.0f64, 1.0], &[2])?;
    ///     let w = GlobalTensor::from_logical(&w, &[Sbp::Broadcast], &mesh)?.requires_grad_(true)?;
    ///     let mut opt = DistOptimizer::new(vec![w.clone()], |p| Sgd::new(p, 0.5, 0.0))?;
    ///     let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    ///     let x = GlobalTensor::from_logical(&x, &[Sbp::Split(0)], &mesh)?;
    ///     let loss = ops::reduce(&ops::binary(&x, &w, tessera::BinaryOp::Mul)?, "sum", None, false)?;
    ///     autograd::backward(&loss)?;
    ///     assert!(opt.step().is_err()); // w's gradient is still Partial(sum)
    ///     opt.reduce_gradients()?; // the all-reduce (`opt.backward(&loss)` does both)
    ///     opt.step()?;
    ///     Ok(w.to_full()?.to_vec::<f64>()?)
    /// });
    /// for r in out {
    ///     assert_eq!(r.unwrap().unwrap(), vec![1.0 - 0.5 * 4.0, 1.0 - 0.5 * 6.0]);
    /// }
    /// ```
    pub fn new(
        params: Vec<GlobalTensor>,
        make: impl FnOnce(Vec<Tensor>) -> tessera::Result<O>,
    ) -> Result<DistOptimizer<O>> {
        let first = params.first().ok_or_else(|| {
            DistError::Placement("an optimiser needs at least one parameter".into())
        })?;
        let mesh = first.mesh().clone();
        if params.iter().any(|p| !p.mesh().same_as(&mesh)) {
            return Err(DistError::Placement(
                "the parameters of one optimiser live on different meshes".into(),
            ));
        }
        for p in &params {
            dual_nd(p.sbp())?;
        }
        agree_on_placements(&params, mesh.world())?;
        let inner = make(params.iter().map(GlobalTensor::to_local).collect())?;
        let sizes = bucket_sizes(&params);
        let mut reduce_comms = Vec::new();
        for a in 0..mesh.shape().len() {
            let used = sizes.iter().any(|(_, _, ax)| ax.contains(&a));
            let comm = mesh.axis_comm(a);
            // Collective: every rank makes the same parameters, so the same splits.
            reduce_comms.push(if used {
                Some(comm.split(0, comm.rank())?)
            } else {
                None
            });
        }
        Ok(DistOptimizer {
            reduced: vec![None; params.len()],
            buckets: buckets::plan(&sizes, DEFAULT_BUCKET_BYTES),
            params,
            inner,
            world: mesh.world().clone(),
            last_bytes: 0,
            reduce_comms,
            overlap: true,
            stats: OverlapStats::default(),
        })
    }

    /// Whether [`Self::backward`] reduces gradients during backward (the default) or after
    /// it; and the bucket size in bytes (the buckets are planned again).
    pub fn set_overlap(&mut self, overlap: bool, bucket_bytes: usize) {
        self.overlap = overlap;
        self.buckets = buckets::plan(&bucket_sizes(&self.params), bucket_bytes.max(1));
    }

    /// The buckets of the dense gradients.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// What the last [`Self::backward`] measured: backward's time, the reductions' time, and
    /// the wait for reductions after backward (all of it when not overlapped).
    pub fn last_overlap(&self) -> OverlapStats {
        self.stats
    }

    /// The parameters.
    pub fn params(&self) -> &[GlobalTensor] {
        &self.params
    }

    /// The local optimiser.
    pub fn inner(&self) -> &O {
        &self.inner
    }

    /// Clears every gradient.
    pub fn zero_grad(&mut self) -> Result<()> {
        self.reduced.fill(None);
        Ok(self.inner.zero_grad()?)
    }

    /// Backward from `loss` ([`crate::autograd::backward`]), then [`Self::reduce_gradients`].
    /// A rank whose backward fails makes every rank return an error before any gradient is
    /// reduced (the ranks agree on success first), so no rank steps on a half-reduced
    /// gradient.
    ///
    /// With overlap on (the default) and no gradient accumulated before, the dense gradients
    /// are reduced during backward, bucket by bucket, as soon as a bucket's gradients are
    /// final ([`buckets`]); row_sparse ones after it.
    pub fn backward(&mut self, loss: &GlobalTensor) -> Result<()> {
        self.reduced.fill(None);
        self.last_bytes = 0;
        // A loss backward cannot start from fails on every rank before any collective (a
        // failure inside backward leaves the peers in a collective until the backend's
        // timeout or mismatch check ends it, D7).
        let seed = crate::autograd::seed(loss);
        self.agree(seed.is_err())?;
        let seed = seed?;
        let accumulated = self.params.iter().any(|p| p.local().grad().is_some());
        if self.overlap && !accumulated && !self.buckets.is_empty() {
            return self.backward_overlapped(loss, &seed);
        }
        let t0 = Instant::now();
        let outcome = crate::autograd::backward_seeded(loss, &seed, None);
        let backward = t0.elapsed();
        self.agree(outcome.is_err())?;
        outcome?;
        let t1 = Instant::now();
        self.reduce_gradients()?;
        let comm = t1.elapsed();
        self.stats = OverlapStats {
            backward,
            comm,
            wait: comm,
        };
        Ok(())
    }

    fn backward_overlapped(&mut self, loss: &GlobalTensor, seed: &Tensor) -> Result<()> {
        let locals: Vec<Tensor> = self.params.iter().map(GlobalTensor::to_local).collect();
        let (buckets, comms) = (&self.buckets, &self.reduce_comms);
        let (tx, rx) = mpsc::channel();
        let (outcome, served, sparse, backward, wait) = std::thread::scope(|s| {
            let worker = s.spawn(move || buckets::serve(rx, buckets, comms));
            let mut reducer = buckets::Reducer::new(buckets, &locals, tx);
            let t0 = Instant::now();
            let mut hook = |k, g: &Tensor| {
                reducer.arrived(k, g).map_err(|e| {
                    tessera::TesseraError::from(tessera::ErrorKind::Autograd(e.to_string()))
                })
            };
            let outcome = crate::autograd::backward_seeded(loss, seed, Some(&mut hook));
            let backward = t0.elapsed();
            // Every bucket starts on every rank, even after a failure, so no peer waits.
            let flushed = reducer.start_ready(true);
            let sparse = reducer.sparse().to_vec();
            drop(reducer);
            let t1 = Instant::now();
            let served = worker.join().unwrap_or_else(|_| {
                Err(DistError::Aborted("the reduction thread panicked".into()))
            });
            (outcome.and(flushed), served, sparse, backward, t1.elapsed())
        });
        self.agree(outcome.is_err() || served.is_err())?;
        outcome?;
        let (flats, comm) = served?;
        self.stats = OverlapStats {
            backward,
            comm,
            wait,
        };
        for (b, flat) in self.buckets.iter().zip(flats) {
            let flat = flat.ok_or_else(|| DistError::Aborted("a bucket was not reduced".into()))?;
            let mut at = 0;
            for &i in b.params.iter().filter(|&&i| !sparse[i]) {
                let local = self.params[i].local();
                let n = local.numel();
                self.last_bytes += b.axes.len() * n * local.dtype().itemsize();
                let shape: Vec<isize> = local.shape().iter().map(|&d| d as isize).collect();
                let g = flat.narrow(0, at, n)?.reshape(&shape)?;
                local.set_grad(Some(g.clone()))?;
                self.reduced[i] = Some(grad_id(&g));
                at += n;
            }
        }
        // Row_sparse gradients, and those of parameters no mesh axis reduces.
        for i in 0..self.params.len() {
            if self.reduced[i].is_none() {
                self.reduce_one(i)?;
            }
        }
        Ok(())
    }

    /// Errors on every rank when any rank failed (an all-reduce of the flag).
    fn agree(&self, failed: bool) -> Result<()> {
        let flag = Tensor::from_slice(&[i64::from(failed)], &[1])?;
        let any = self.world.all_reduce(&flag, PartialOp::Max)?;
        if any.to_vec::<i64>()?[0] != 0 && !failed {
            return Err(DistError::Aborted(
                "another rank failed during backward; no gradient was reduced".into(),
            ));
        }
        Ok(())
    }

    /// Boxes every parameter's gradient from the dual placement to the parameter's own:
    /// an all-reduce over each mesh axis where the parameter is `Broadcast` (data
    /// parallelism), nothing for its split axes. A `row_sparse` gradient is reduced as
    /// `row_sparse`: the ranks gather each other's touched rows and sum them
    /// ([`rowsparse::all_reduce`]). A parameter without a gradient gets zeros first (every
    /// rank must join each reduction).
    pub fn reduce_gradients(&mut self) -> Result<()> {
        self.last_bytes = 0;
        for i in 0..self.params.len() {
            self.reduce_one(i)?;
        }
        Ok(())
    }

    /// Reduces parameter `i`'s gradient (see [`Self::reduce_gradients`]).
    fn reduce_one(&mut self, i: usize) -> Result<()> {
        let p = &self.params[i];
        let local = p.local();
        let grad = match local.grad() {
            Some(g) => g,
            None => Tensor::zeros(local.shape(), local.dtype())?,
        };
        let reduced = if grad.stype() == StorageType::RowSparse {
            let mut g = grad;
            for axis in broadcast_axes(p.sbp()) {
                let (sum, bytes) = rowsparse::all_reduce(&g, p.mesh().axis_comm(axis))?;
                self.last_bytes += bytes;
                g = sum;
            }
            g
        } else {
            let dual = dual_nd(p.sbp())?;
            let g = GlobalTensor::from_local(grad, p.logical_shape(), &dual, p.mesh(), true)?;
            let axes = broadcast_axes(p.sbp()).len();
            self.last_bytes += axes * g.local().numel() * g.dtype().itemsize();
            g.to_sbp(p.sbp())?.to_local()
        };
        local.set_grad(Some(reduced.clone()))?;
        self.reduced[i] = Some(grad_id(&reduced));
        Ok(())
    }

    /// Bytes of gradient this rank received in the last [`Self::reduce_gradients`]
    /// (dense: the size of each all-reduced shard; row_sparse: the rows and indices of the
    /// other ranks).
    pub fn last_reduction_bytes(&self) -> usize {
        self.last_bytes
    }

    /// One step of the local optimiser on every shard. Refused while a parameter with a
    /// `Broadcast` axis has a gradient that was not reduced (still `Partial(sum)`: stepping
    /// on it would make the replicas diverge).
    pub fn step(&mut self) -> Result<()> {
        for (p, reduced) in self.params.iter().zip(&self.reduced) {
            let partial = p.sbp().contains(&Sbp::Broadcast);
            let Some(g) = p.local().grad() else { continue };
            if partial && *reduced != Some(grad_id(&g)) {
                return Err(DistError::Placement(format!(
                    "optimiser step on a Partial(sum) gradient (parameter of logical shape \
                     {:?} placed {:?}): reduce the gradients first (DistOptimizer::backward \
                     or reduce_gradients)",
                    p.logical_shape(),
                    p.sbp()
                )));
            }
        }
        Ok(self.inner.step()?)
    }
}

/// A one-element `Partial(sum)` loss from each rank's share (`local`, shape `[]` or `[1]`):
/// the logical loss is the sum of the shares. For a model whose forward runs locally on each
/// rank's part of the batch (the sparse model's `dot(csr, W)`), with the share computed as
/// the local sum over the global batch size.
pub fn partial_loss(
    local: Tensor,
    mesh: &std::sync::Arc<crate::mesh::Mesh>,
) -> Result<GlobalTensor> {
    let sbp = vec![Sbp::Partial(PartialOp::Sum); mesh.shape().len()];
    let shape = local.shape().to_vec();
    if local.numel() != 1 || !local.dtype().is_float() {
        return Err(DistError::Placement(format!(
            "a loss share is one float element, got shape {shape:?} dtype {}",
            local.dtype()
        )));
    }
    GlobalTensor::from_local(local, &shape, &sbp, mesh, true)
}
