//! The communicator interface (docs/design.md D7): the collectives boxing needs, on 1-D contiguous
//! tensors, plus an all-to-all between strided views. Every rank of a group must call the
//! same collectives in the same order with consistent arguments (SPMD); a backend detects
//! what it can and returns an error on every rank rather than hanging.

use std::sync::Arc;

use tessera::{BinaryOp, DType, Scalar, Tensor};

use crate::error::{DistError, Result};
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
    /// Concatenates every rank's `send` along `axis`: rank r's has `counts[r]` elements
    /// there, and every other dim is the same on every rank. The default packs flat buffers
    /// through [`Communicator::all_gather_v`]; a backend may write the shards straight into
    /// each other's outputs instead.
    fn all_gather_axis(&self, send: &Tensor, axis: usize, counts: &[usize]) -> Result<Tensor> {
        all_gather_axis_packed(self, send, axis, counts)
    }
    /// Reduces every rank's `send` (one shape on every rank, `counts.sum()` along `axis`) and
    /// gives rank r the `counts[r]` slices along `axis` starting at `counts[..r].sum()`,
    /// combined in rank order. The default packs the slices and calls
    /// [`Communicator::reduce_scatter_v`].
    fn reduce_scatter_axis(
        &self,
        send: &Tensor,
        axis: usize,
        counts: &[usize],
        op: PartialOp,
    ) -> Result<Tensor> {
        reduce_scatter_axis_packed(self, send, axis, counts, op)
    }
    /// Rank r cuts `send` along `split_axis` into blocks of `split_counts` (block s goes to
    /// rank s) and joins the blocks it receives along `concat_axis` (`concat_counts[s]` from
    /// rank s, in rank order); `send` has `concat_counts[r]` along `concat_axis`, and every
    /// other dim is the same on every rank. The default runs
    /// [`Communicator::all_to_all_views`] into a new output.
    fn all_to_all_axis(
        &self,
        send: &Tensor,
        split_axis: usize,
        split_counts: &[usize],
        concat_axis: usize,
        concat_counts: &[usize],
    ) -> Result<Tensor> {
        let (split, concat) = ((split_axis, split_counts), (concat_axis, concat_counts));
        let shape = all_to_all_shape(self, send, split, concat)?;
        all_to_all_axis_views(self, send, split, concat, &shape)
    }
    /// All-to-all between views: rank r sends the elements of `send[s]` (row-major order) to
    /// each rank s and writes what it receives from rank s into `recv[s]`. The views may be
    /// strided (a column block of a row-major shard, rows of an output), so a backend can
    /// move them without packing into staging buffers.
    ///
    /// Every rank passes `size()` send and `size()` recv views of one dtype; `send[s]` on
    /// rank r must have the shape of `recv[r]` on rank s; no recv view may share storage with
    /// a send view. The default packs the views and calls [`Communicator::all_to_all_v`].
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        all_to_all_views_packed(self, send, recv)
    }
    /// Splits the group: ranks with the same `color` form a new group, ordered by
    /// `(key, rank)`.
    fn split(&self, color: usize, key: usize) -> Result<Comm>;
}

/// Checks the local arguments of [`Communicator::all_to_all_views`] on a group of `p` ranks
/// and returns their dtype (`None` when there are no views).
pub(crate) fn check_views(send: &[Tensor], recv: &[Tensor], p: usize) -> Result<Option<DType>> {
    if send.len() != p || recv.len() != p {
        return Err(DistError::Mismatch(format!(
            "all_to_all_views: {} send and {} recv views for a group of {p} ranks",
            send.len(),
            recv.len()
        )));
    }
    let dtype = send.first().map(Tensor::dtype);
    if let Some(t) = send.iter().chain(recv).find(|t| Some(t.dtype()) != dtype) {
        return Err(DistError::Mismatch(format!(
            "all_to_all_views: views of dtypes {} and {}",
            dtype.map_or("?".into(), |d| d.to_string()),
            t.dtype()
        )));
    }
    if let Some(r) = recv
        .iter()
        .find(|r| r.numel() > 0 && send.iter().any(|s| s.numel() > 0 && r.shares_storage(s)))
    {
        return Err(DistError::Placement(format!(
            "all_to_all_views: a recv view of shape {:?} shares storage with a send view",
            r.shape()
        )));
    }
    Ok(dtype)
}

/// A view of `t` restricted to `range` along `axis` ([`Tensor::narrow`]).
pub(crate) fn narrow(t: &Tensor, axis: usize, range: std::ops::Range<usize>) -> Result<Tensor> {
    Ok(t.narrow(axis as isize, range.start, range.len())?)
}

/// The start of each rank's part for `counts`, and the total (`offsets[p]`).
pub(crate) fn offsets(counts: &[usize]) -> Vec<usize> {
    let mut at = vec![0];
    for &c in counts {
        at.push(at[at.len() - 1] + c);
    }
    at
}

/// `shape` with `shape[axis]` replaced by `n`.
pub(crate) fn with_dim(shape: &[usize], axis: usize, n: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s[axis] = n;
    s
}

/// Checks that `axis` is a dim of `t` and `counts` has one entry per rank of a group of `p`.
pub(crate) fn check_axis_counts(
    what: &str,
    t: &Tensor,
    axis: usize,
    counts: &[usize],
    p: usize,
) -> Result<()> {
    if axis >= t.rank() {
        return Err(DistError::Placement(format!(
            "{what}: axis {axis} of a tensor of shape {:?}",
            t.shape()
        )));
    }
    if counts.len() != p {
        return Err(DistError::Mismatch(format!(
            "{what}: {} counts for a group of {p} ranks",
            counts.len()
        )));
    }
    // The whole along `axis` must be a tensor that can exist (the size arithmetic of every
    // backend relies on it): the core's element-count check, then its byte bound.
    let whole = counts.iter().try_fold(0usize, |a, &c| a.checked_add(c));
    let elems = whole.map(|n| tessera::storage::checked_numel(&with_dim(t.shape(), axis, n)));
    let fits = matches!(elems, Some(Ok(n)) if n.checked_mul(t.dtype().itemsize())
        .is_some_and(|b| b <= isize::MAX as usize));
    if !fits {
        return Err(DistError::Tensor(
            tessera::ErrorKind::ShapeOverflow(format!(
                "{what}: counts {counts:?} along axis {axis} of shape {:?}",
                t.shape()
            ))
            .into(),
        ));
    }
    Ok(())
}

/// An axis of an all-to-all and the per-rank counts along it.
pub(crate) type AxisCounts<'a> = (usize, &'a [usize]);

/// The shape of this rank's output of [`Communicator::all_to_all_axis`], after checking the
/// arguments.
pub(crate) fn all_to_all_shape<C: Communicator + ?Sized>(
    comm: &C,
    send: &Tensor,
    (split_axis, split_counts): AxisCounts,
    (concat_axis, concat_counts): AxisCounts,
) -> Result<Vec<usize>> {
    let (p, me) = (comm.size(), comm.rank());
    check_axis_counts("all_to_all_axis", send, split_axis, split_counts, p)?;
    check_axis_counts("all_to_all_axis", send, concat_axis, concat_counts, p)?;
    let shape = send.shape();
    if split_axis == concat_axis
        || shape[split_axis] != split_counts.iter().sum::<usize>()
        || shape[concat_axis] != concat_counts[me]
    {
        return Err(DistError::Mismatch(format!(
            "all_to_all_axis: a send of shape {shape:?} split along {split_axis} by \
             {split_counts:?}, joined along {concat_axis} by {concat_counts:?}"
        )));
    }
    let out = with_dim(shape, split_axis, split_counts[me]);
    Ok(with_dim(&out, concat_axis, concat_counts.iter().sum()))
}

/// [`Communicator::all_to_all_axis`] through [`Communicator::all_to_all_views`] into a new
/// output of `shape` (from [`all_to_all_shape`]): block s of `send` along the split axis goes
/// to rank s, the block from rank r lands in the output's range of r along the concat axis.
pub(crate) fn all_to_all_axis_views<C: Communicator + ?Sized>(
    comm: &C,
    send: &Tensor,
    (split_axis, split_counts): AxisCounts,
    (concat_axis, concat_counts): AxisCounts,
    shape: &[usize],
) -> Result<Tensor> {
    let (out, sendv, recvv) = all_to_all_axis_blocks(
        send,
        (split_axis, split_counts),
        (concat_axis, concat_counts),
        shape,
    )?;
    comm.all_to_all_views(&sendv, &recvv)?;
    Ok(out)
}

/// The new output of `shape` and the views [`all_to_all_axis_views`] exchanges: block s of
/// `send` along the split axis, and rank r's range of the output along the concat axis.
pub(crate) fn all_to_all_axis_blocks(
    send: &Tensor,
    (split_axis, split_counts): AxisCounts,
    (concat_axis, concat_counts): AxisCounts,
    shape: &[usize],
) -> Result<(Tensor, Vec<Tensor>, Vec<Tensor>)> {
    let out = Tensor::empty(shape, send.dtype())?;
    let (so, co) = (offsets(split_counts), offsets(concat_counts));
    let sendv = (0..split_counts.len())
        .map(|s| narrow(send, split_axis, so[s]..so[s + 1]))
        .collect::<Result<Vec<_>>>()?;
    let recvv = (0..concat_counts.len())
        .map(|r| narrow(&out, concat_axis, co[r]..co[r + 1]))
        .collect::<Result<Vec<_>>>()?;
    Ok((out, sendv, recvv))
}

/// [`Communicator::all_gather_axis`] through [`Communicator::all_gather_v`]: the shards as
/// flat buffers, unpacked along `axis` (no copy when the shards are row blocks).
pub fn all_gather_axis_packed<C: Communicator + ?Sized>(
    comm: &C,
    send: &Tensor,
    axis: usize,
    counts: &[usize],
) -> Result<Tensor> {
    check_axis_counts("all_gather_axis", send, axis, counts, comm.size())?;
    let shape = send.shape();
    let out_shape = with_dim(shape, axis, counts.iter().sum());
    let elems: Vec<usize> = counts
        .iter()
        .map(|&c| with_dim(shape, axis, c).iter().product())
        .collect();
    let flat = send.contiguous().and_then(|c| c.reshape(&[-1]));
    let buf = match flat {
        Ok(flat) => comm.all_gather_v(&flat, &elems)?,
        Err(e) => return refuse(e.into(), |r| comm.all_gather_v(r, &elems), send.dtype()),
    };
    if shape[..axis].iter().product::<usize>() == 1 {
        // The shards are already the row-major layout of the whole.
        return shaped(&buf, &out_shape);
    }
    let out = Tensor::empty(&out_shape, buf.dtype())?;
    let (at, start) = (offsets(&elems), offsets(counts));
    for r in 0..counts.len() {
        let piece = shaped(
            &buf.narrow(0, at[r], elems[r])?,
            &with_dim(shape, axis, counts[r]),
        )?;
        narrow(&out, axis, start[r]..start[r + 1])?.assign(&piece)?;
    }
    Ok(out)
}

/// [`Communicator::reduce_scatter_axis`] through [`Communicator::reduce_scatter_v`]: the
/// slices packed in rank order into one flat buffer (no copy when they are row blocks).
pub fn reduce_scatter_axis_packed<C: Communicator + ?Sized>(
    comm: &C,
    send: &Tensor,
    axis: usize,
    counts: &[usize],
    op: PartialOp,
) -> Result<Tensor> {
    check_axis_counts("reduce_scatter_axis", send, axis, counts, comm.size())?;
    let shape = send.shape();
    if shape[axis] != counts.iter().sum::<usize>() {
        return Err(DistError::Mismatch(format!(
            "reduce_scatter_axis: shape {shape:?} along axis {axis}, counts {counts:?}"
        )));
    }
    let elems: Vec<usize> = counts
        .iter()
        .map(|&c| with_dim(shape, axis, c).iter().product())
        .collect();
    let packed = (|| -> Result<Tensor> {
        if shape[..axis].iter().product::<usize>() == 1 {
            return Ok(send.contiguous()?.reshape(&[-1])?);
        }
        let buf = Tensor::empty(&[send.numel()], send.dtype())?;
        let (at, start) = (offsets(&elems), offsets(counts));
        for r in 0..counts.len() {
            let piece = narrow(send, axis, start[r]..start[r + 1])?;
            shaped(&buf.narrow(0, at[r], elems[r])?, piece.shape())?.assign(&piece)?;
        }
        Ok(buf)
    })();
    let packed = match packed {
        Ok(p) => p,
        Err(e) => return refuse(e, |r| comm.reduce_scatter_v(r, &elems, op), send.dtype()),
    };
    let me = comm.rank();
    shaped(
        &comm.reduce_scatter_v(&packed, &elems, op)?,
        &with_dim(shape, axis, counts[me]),
    )
}

/// Takes part in a 1-D collective (`call`) for a rank whose preparation failed with `e`
/// (an allocation, say), so that its peers are not left waiting for it (docs/design.md D7):
/// the rank passes a 2-D buffer, which every backend refuses on every rank, and returns `e`.
fn refuse<T>(
    e: DistError,
    call: impl FnOnce(&Tensor) -> Result<Tensor>,
    dtype: DType,
) -> Result<T> {
    if let Ok(refusal) = Tensor::empty(&[0, 0], dtype) {
        // The peers' error is the collective's; this rank's is its own.
        let _ = call(&refusal);
    }
    Err(e)
}

/// `t` (1-D, contiguous) seen with `shape`.
pub(crate) fn shaped(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    Ok(t.view(&dims)?)
}

/// [`Communicator::all_to_all_views`] through one packed send buffer and
/// [`Communicator::all_to_all_v`]: one copy in, one copy out.
pub fn all_to_all_views_packed<C: Communicator + ?Sized>(
    comm: &C,
    send: &[Tensor],
    recv: &[Tensor],
) -> Result<()> {
    let Some(dtype) = check_views(send, recv, comm.size())? else {
        return Ok(());
    };
    let send_counts: Vec<usize> = send.iter().map(Tensor::numel).collect();
    let recv_counts: Vec<usize> = recv.iter().map(Tensor::numel).collect();
    let buf = Tensor::empty(&[send_counts.iter().sum()], dtype)?;
    let mut at = 0;
    for s in send {
        shaped(&buf.narrow(0, at, s.numel())?, s.shape())?.assign(s)?;
        at += s.numel();
    }
    let got = comm.all_to_all_v(&buf, &send_counts, &recv_counts)?;
    at = 0;
    for r in recv {
        r.assign(&shaped(&got.narrow(0, at, r.numel())?, r.shape())?)?;
        at += r.numel();
    }
    Ok(())
}

/// The elementwise operation that combines two partial values.
pub(crate) fn combine_op(op: PartialOp) -> BinaryOp {
    match op {
        PartialOp::Sum => BinaryOp::Add,
        PartialOp::Max => BinaryOp::Maximum,
        PartialOp::Min => BinaryOp::Minimum,
    }
}

/// Combines `parts` (at least one, of one dtype) with `op` in order, `parts[0]` first, into
/// a new tensor of their dtype: one pass of the binary kernel for the first two, in place
/// after. An error when `op` would change the dtype. Every backend and the direct boxing
/// collectives reduce this way, so they agree to the bit.
pub(crate) fn combine(parts: &[Tensor], op: PartialOp) -> Result<Tensor> {
    let bop = combine_op(op);
    let (out, done) = match parts {
        [a, b, ..] if bop.result_dtype(a.dtype(), b.dtype()).ok() == Some(a.dtype()) => {
            (a.binary(b, bop)?, 2)
        }
        [a, ..] => (a.copy()?, 1),
        [] => return Err(DistError::Comm("combine: no parts".into())),
    };
    for p in &parts[done..] {
        out.binary_(p, bop)?;
    }
    Ok(out)
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
