//! Boxing collectives written straight into peers' outputs. When the backend's peers write
//! into shared outputs ([`Comm::prefers_shared_outputs`]: MPI ranks on one Linux host) and a
//! step's output is at least [`SHARED_OUTPUT_MIN_BYTES`], all-gather, reduce-scatter and
//! all-reduce run as [`Comm::all_to_all_views`] calls into outputs in shared memory, which the
//! MPI backend moves with ordinary streaming stores (module `cma`) instead of MPI's
//! collectives. Otherwise (the same answer on every rank) each function returns `None` and the
//! executor calls the backend's collective.
//!
//! Measured on 2 MPI ranks (`benches/boxing.rs`, f32, 4 runs), as a fraction of the raw MPI
//! collective's time on pre-packed buffers:
//!
//! | conversion | 1 MiB | 64 MiB | raw collective |
//! | --- | --- | --- | --- |
//! | S(0) -> B | 0.47-0.59 | 0.81-0.84 | `MPI_Allgatherv` |
//! | P(sum) -> B | 0.48-0.61 | 0.38-0.43 | `MPI_Allreduce` |
//! | P(sum) -> S(0) | 0.41-0.45 | 0.11-0.14 | `MPI_Reduce_scatter` |
//!
//! Open MPI's reductions move large buffers through 32 KiB shared-memory fragments (64 MiB
//! `MPI_Reduce_scatter`: ~60 ms here); the direct reduce-scatter writes each part once and
//! combines it with one pass of the core's binary kernel.

use tessera::index::IndexSpec;
use tessera::Tensor;

use super::exec::narrow;
use crate::comm::{combine, combine_op, Comm, SHARED_OUTPUT_MIN_BYTES};
use crate::error::{DistError, Result};
use crate::sbp::{balanced_range, PartialOp};

/// An all-to-all output: in shared memory when it is large and the backend's peers write into
/// it directly, else (or when no shared file can be made) in ordinary memory. Every rank asks
/// the backend whatever its own size, since the first ask may be collective.
pub(super) fn output(comm: &Comm, shape: &[usize], dtype: tessera::DType) -> Result<Tensor> {
    if shared(comm, shape, dtype) {
        #[cfg(target_os = "linux")]
        if let Ok(t) = Tensor::empty_shared(shape, dtype) {
            return Ok(t);
        }
    }
    Ok(Tensor::empty(shape, dtype)?)
}

/// Whether an output of `shape` goes into shared memory (collective: the same on every rank
/// for the same shape).
fn shared(comm: &Comm, shape: &[usize], dtype: tessera::DType) -> bool {
    let bytes = shape.iter().product::<usize>() * dtype.itemsize();
    comm.prefers_shared_outputs() && bytes >= SHARED_OUTPUT_MIN_BYTES
}

/// Whether a step with a `g`-shaped result goes direct (collective: the same on every rank).
fn direct(comm: &Comm, g: &[usize], dtype: tessera::DType) -> bool {
    shared(comm, g, dtype) && comm.size() > 1
}

/// The all-gather of the shards `local` along `axis` into a `g`-shaped output: an all-to-all
/// that sends `local` to every rank, so each rank writes its shard into every peer's output
/// and nobody unpacks a gather buffer.
pub(super) fn gather(
    comm: &Comm,
    local: &Tensor,
    g: &[usize],
    axis: usize,
) -> Result<Option<Tensor>> {
    if !direct(comm, g, local.dtype()) {
        return Ok(None);
    }
    let p = comm.size();
    let out = output(comm, g, local.dtype())?;
    let recv = (0..p)
        .map(|r| narrow(&out, axis, balanced_range(g[axis], p, r)))
        .collect::<Result<Vec<_>>>()?;
    comm.all_to_all_views(&vec![local.clone(); p], &recv)?;
    Ok(Some(out))
}

/// The reduce-scatter along `axis` of the `g`-shaped partial values `local`: every rank writes
/// its part of each peer's shard into a staging slot of that peer (an all-to-all), then each
/// rank combines its own part with the staged ones, in rank order. `None` also when `op` does
/// not keep the dtype (the backend's collective decides what happens then).
pub(super) fn reduce_scatter(
    comm: &Comm,
    local: &Tensor,
    g: &[usize],
    axis: usize,
    op: PartialOp,
) -> Result<Option<Tensor>> {
    let dtype = local.dtype();
    let keeps_dtype = combine_op(op).result_dtype(dtype, dtype).ok() == Some(dtype);
    if !direct(comm, g, dtype) || !keeps_dtype {
        return Ok(None);
    }
    let (p, me) = (comm.size(), comm.rank());
    let range = |r: usize| balanced_range(g[axis], p, r);
    let mut shard = g.to_vec();
    shard[axis] = range(me).len();
    // Slot r holds rank r's part of this rank's shard (slot `me` stays unused).
    let staged = output(comm, &[&[p][..], &shard].concat(), dtype)?;
    let slot = |r: usize| -> Result<Tensor> { Ok(staged.index(&[IndexSpec::Point(r as isize)])?) };
    // Nothing moves to or from this rank itself: an empty block on both sides.
    let send = (0..p)
        .map(|s| narrow(local, axis, if s == me { 0..0 } else { range(s) }))
        .collect::<Result<Vec<_>>>()?;
    let recv = (0..p)
        .map(|r| {
            if r == me {
                narrow(&slot(r)?, axis, 0..0)
            } else {
                slot(r)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    comm.all_to_all_views(&send, &recv)?;
    let parts = (0..p)
        .map(|r| {
            if r == me {
                narrow(local, axis, range(me))
            } else {
                slot(r)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(combine(&parts, op)?))
}

/// The all-reduce of the `g`-shaped partial values `local`: a direct reduce-scatter along axis
/// 0, then a direct all-gather of the reduced shards.
pub(super) fn all_reduce(
    comm: &Comm,
    local: &Tensor,
    g: &[usize],
    op: PartialOp,
) -> Result<Option<Tensor>> {
    if g.is_empty() {
        return Ok(None);
    }
    let Some(shard) = reduce_scatter(comm, local, g, 0, op)? else {
        return Ok(None);
    };
    // The same condition as the reduce-scatter's, so this goes direct too.
    match gather(comm, &shard, g, 0)? {
        Some(out) => Ok(Some(out)),
        None => Err(DistError::Comm(
            "all_reduce: the direct all-gather was refused".into(),
        )),
    }
}
