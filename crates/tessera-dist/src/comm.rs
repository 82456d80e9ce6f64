//! The communicator interface (DESIGN D7): the collectives boxing needs, on 1-D contiguous
//! tensors. Every rank of a group must call the same collectives in the same order with
//! consistent arguments (SPMD); a backend detects what it can and returns an error on every
//! rank rather than hanging.

use std::sync::Arc;

use tessera::{BinaryOp, DType, Scalar, Tensor};

use crate::error::Result;
use crate::sbp::PartialOp;

/// A shared handle to a communicator.
pub type Comm = Arc<dyn Communicator>;

/// Collective communication among the `size()` ranks of a group.
///
/// Buffers are 1-D tensors (any layout; backends make them contiguous); results are new
/// contiguous 1-D tensors of the same dtype. Counts are in elements, indexed by rank.
pub trait Communicator: Send + Sync {
    /// This rank's index in the group, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks in the group.
    fn size(&self) -> usize;
    /// Waits until every rank has arrived.
    fn barrier(&self) -> Result<()>;
    /// Returns `root`'s `buf` on every rank (other ranks pass a buffer of the same dtype and
    /// length, whose contents are ignored).
    fn broadcast(&self, buf: &Tensor, root: usize) -> Result<Tensor>;
    /// Concatenates every rank's `send` in rank order; `counts[r]` is rank r's length.
    fn all_gather_v(&self, send: &Tensor, counts: &[usize]) -> Result<Tensor>;
    /// Elementwise reduction of every rank's `send`, combined in rank order 0..p-1.
    fn all_reduce(&self, send: &Tensor, op: PartialOp) -> Result<Tensor>;
    /// Reduces every rank's `send` (length `sum(counts)`) and gives rank r the `counts[r]`
    /// elements starting at `counts[..r].sum()`.
    fn reduce_scatter_v(&self, send: &Tensor, counts: &[usize], op: PartialOp) -> Result<Tensor>;
    /// Rank r sends `send_counts[s]` consecutive elements of `send` to each rank s (in rank
    /// order) and receives `recv_counts[s]` from each, concatenated in rank order.
    fn all_to_all_v(
        &self,
        send: &Tensor,
        send_counts: &[usize],
        recv_counts: &[usize],
    ) -> Result<Tensor>;
    /// Splits the group: ranks with the same `color` form a new group, ordered by
    /// `(key, rank)`.
    fn split(&self, color: usize, key: usize) -> Result<Comm>;
}

/// The elementwise operation that combines two partial values.
pub(crate) fn combine_op(op: PartialOp) -> BinaryOp {
    match op {
        PartialOp::Sum => BinaryOp::Add,
        PartialOp::Max => BinaryOp::Maximum,
        PartialOp::Min => BinaryOp::Minimum,
    }
}

/// The identity of `op` in `dtype` (D3): 0, the lowest value, the highest value.
pub fn identity(op: PartialOp, dtype: DType) -> Scalar {
    match (op, dtype) {
        (PartialOp::Sum, _) => Scalar::Int(0),
        (PartialOp::Max, DType::Bool) => Scalar::Bool(false),
        (PartialOp::Min, DType::Bool) => Scalar::Bool(true),
        (PartialOp::Max, _) => Scalar::Float(f64::NEG_INFINITY),
        (PartialOp::Min, _) => Scalar::Float(f64::INFINITY),
    }
}

/// A tensor of `shape` filled with the identity of `op`.
pub(crate) fn identity_tensor(shape: &[usize], op: PartialOp, dtype: DType) -> Result<Tensor> {
    Ok(Tensor::full(shape, identity(op, dtype), dtype)?)
}
