//! Gradient buckets reduced during backward (docs/design.md D11; PyTorch DDP's reducer): the
//! dense gradients of the parameters that need an all-reduce are grouped, in reverse
//! parameter order (the order backward finishes them), into buckets of at most `cap` bytes.
//! The engine reports each leaf's gradient as soon as it is final
//! ([`tessera::autograd::backward_with_hook`]); once every gradient of the next bucket is in,
//! the bucket is flattened and handed to a communication thread, which all-reduces it on
//! communicators of its own while backward goes on. Buckets start in index order on every
//! rank, whatever order their gradients arrive in, so the ranks' collectives match.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tessera::autograd::LeafKey;
use tessera::{StorageType, Tensor};

use crate::comm::Comm;
use crate::error::{DistError, Result};
use crate::sbp::PartialOp;

/// One bucket: parameter indices and the mesh axes their gradients are summed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Indices into the optimiser's parameters.
    pub params: Vec<usize>,
    /// Mesh axes of the all-reduces (where the parameters are `Broadcast`).
    pub axes: Vec<usize>,
}

/// Buckets for parameters `(elements, bytes per element, reduce axes)` (empty axes: not
/// reduced): reverse order, grouped by axes, each at most `cap` bytes (a larger parameter
/// alone).
pub fn plan(params: &[(usize, usize, Vec<usize>)], cap: usize) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    let mut open: HashMap<Vec<usize>, (usize, usize)> = HashMap::new(); // axes -> (bucket, bytes)
    for i in (0..params.len()).rev() {
        let (n, item, axes) = &params[i];
        if axes.is_empty() {
            continue;
        }
        let bytes = n * item;
        match open.get_mut(axes) {
            Some((b, used)) if *used + bytes <= cap => {
                out[*b].params.push(i);
                *used += bytes;
            }
            _ => {
                open.insert(axes.clone(), (out.len(), bytes));
                out.push(Bucket {
                    params: vec![i],
                    axes: axes.clone(),
                });
            }
        }
    }
    out
}

/// What the overlap measured in one backward.
#[derive(Clone, Copy, Debug, Default)]
pub struct OverlapStats {
    /// Wall time of backward itself (until the engine returned).
    pub backward: Duration,
    /// Time the communication thread spent in all-reduces.
    pub comm: Duration,
    /// Time waited after backward for the reductions still running.
    pub wait: Duration,
}

impl OverlapStats {
    /// The share of communication time hidden behind backward: `1 - wait / comm`.
    pub fn hidden_fraction(&self) -> f64 {
        if self.comm.is_zero() {
            return 1.0;
        }
        (1.0 - self.wait.as_secs_f64() / self.comm.as_secs_f64()).clamp(0.0, 1.0)
    }
}

/// A bucket's flattened gradients on their way to the communication thread.
pub(crate) struct Job {
    bucket: usize,
    flat: Tensor,
}

/// The state of one overlapped backward: which gradients arrived, which buckets started.
pub(crate) struct Reducer<'a> {
    buckets: &'a [Bucket],
    /// The parameters' shards (zeros of their size stand in for a missing gradient).
    params: &'a [Tensor],
    /// Leaf key -> parameter index.
    index: HashMap<LeafKey, usize>,
    /// The gradient each parameter got in this pass (dense ones only).
    grads: Vec<Option<Tensor>>,
    /// Parameters whose gradient came row_sparse: reduced after backward instead.
    sparse: Vec<bool>,
    started: usize,
    tx: mpsc::Sender<Job>,
}

impl<'a> Reducer<'a> {
    pub(crate) fn new(
        buckets: &'a [Bucket],
        params: &'a [Tensor],
        tx: mpsc::Sender<Job>,
    ) -> Reducer<'a> {
        Reducer {
            buckets,
            params,
            index: params
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some((p.leaf_key()?, i)))
                .collect(),
            grads: vec![None; params.len()],
            sparse: vec![false; params.len()],
            started: 0,
            tx,
        }
    }

    /// The engine's report: `leaf`'s gradient of this pass is final.
    pub(crate) fn arrived(&mut self, leaf: LeafKey, grad: &Tensor) -> Result<()> {
        let Some(&i) = self.index.get(&leaf) else {
            return Ok(()); // not a parameter of this optimiser
        };
        if grad.stype() == StorageType::RowSparse {
            self.sparse[i] = true;
        } else {
            self.grads[i] = Some(grad.clone());
        }
        self.start_ready(false)
    }

    /// Starts the buckets, in order, whose gradients are all in (with `flush`: every bucket
    /// left, zeros standing in for missing gradients, so every rank joins every reduction).
    pub(crate) fn start_ready(&mut self, flush: bool) -> Result<()> {
        while let Some(b) = self.buckets.get(self.started) {
            let ready = b
                .params
                .iter()
                .all(|&i| self.grads[i].is_some() || self.sparse[i]);
            if !ready && !flush {
                break;
            }
            // The bucket holds its dense gradients only, in order (the unpacking after
            // backward skips the same ones); row_sparse gradients are reduced after
            // backward, as row_sparse. Whether a gradient is row_sparse is the same on every
            // rank (the same graph).
            let parts = b
                .params
                .iter()
                .filter(|&&i| !self.sparse[i])
                .map(|&i| match &self.grads[i] {
                    Some(g) => Ok(g.reshape(&[-1])?),
                    None => {
                        let p = &self.params[i];
                        Ok(Tensor::zeros(&[p.numel()], p.dtype())?)
                    }
                })
                .collect::<Result<Vec<Tensor>>>()?;
            let flat = match parts.len() {
                0 => Tensor::zeros(&[0], self.params[b.params[0]].dtype())?,
                _ => Tensor::concat(&parts, Some(0))?,
            };
            self.tx
                .send(Job {
                    bucket: self.started,
                    flat,
                })
                .map_err(|_| DistError::Aborted("the gradient reduction thread stopped".into()))?;
            self.started += 1;
        }
        Ok(())
    }

    /// Parameters whose gradient came row_sparse in this pass.
    pub(crate) fn sparse(&self) -> &[bool] {
        &self.sparse
    }
}

/// The communication thread's loop: all-reduces each bucket over its axes' communicators,
/// in arrival order; returns the reduced buffers by bucket and the time spent.
pub(crate) fn serve(
    rx: mpsc::Receiver<Job>,
    buckets: &[Bucket],
    comms: &[Option<Comm>],
) -> Result<(Vec<Option<Tensor>>, Duration)> {
    let mut out = vec![None; buckets.len()];
    let mut spent = Duration::ZERO;
    let mut failure = None;
    for job in rx {
        if failure.is_some() {
            continue; // drain: the main thread sees the error after backward
        }
        let t0 = Instant::now();
        let mut flat = job.flat;
        for &axis in &buckets[job.bucket].axes {
            let comm = comms[axis].as_ref().ok_or_else(|| {
                DistError::Placement(format!("no reduction communicator for mesh axis {axis}"))
            });
            match comm.and_then(|c| c.all_reduce(&flat, PartialOp::Sum)) {
                Ok(r) => flat = r,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        spent += t0.elapsed();
        out[job.bucket] = Some(flat);
    }
    match failure {
        Some(e) => Err(e),
        None => Ok((out, spent)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_fill_in_reverse_order_by_axes_up_to_the_cap() {
        // Sizes in bytes 400, 40, 400, 4, 4 (f32), axes: [0], [0], [], [0, 1], [0].
        let params = vec![
            (100, 4, vec![0]),
            (10, 4, vec![0]),
            (100, 4, vec![]),
            (1, 4, vec![0, 1]),
            (1, 4, vec![0]),
        ];
        let b = plan(&params, 64);
        assert_eq!(
            b,
            vec![
                Bucket {
                    params: vec![4, 1],
                    axes: vec![0]
                },
                Bucket {
                    params: vec![3],
                    axes: vec![0, 1]
                },
                Bucket {
                    params: vec![0],
                    axes: vec![0]
                },
            ]
        );
        // A cap that holds everything: one bucket per axes set.
        assert_eq!(plan(&params, 1 << 20).len(), 2);
    }
}
