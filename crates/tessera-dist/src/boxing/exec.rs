//! The boxing executor: runs a [`Plan`] step by step through the mesh's per-axis
//! communicators, packing and unpacking shards with the core's strided copies.

use tessera::index::IndexSpec;
use tessera::Tensor;

use crate::boxing::direct;
use crate::boxing::plan::{Plan, Step, StepKind};
use crate::comm::{identity_tensor, Comm};
use crate::error::Result;
use crate::mesh::Mesh;
use crate::sbp::{balanced_counts, balanced_range, physical_shape, Sbp};

/// The local tensor after running `plan` on `local` (a shard of a `logical`-shaped tensor).
pub fn execute(plan: &Plan, local: &Tensor, logical: &[usize], mesh: &Mesh) -> Result<Tensor> {
    let mut t = local.clone();
    for step in &plan.steps {
        t = run_step(step, &t, logical, mesh)?;
    }
    Ok(t)
}

/// A view of `t` restricted to `range` along `axis`.
pub(super) fn narrow(t: &Tensor, axis: usize, range: std::ops::Range<usize>) -> Result<Tensor> {
    let mut spec = vec![IndexSpec::All; t.rank()];
    spec[axis] = IndexSpec::interval(range.start as isize, range.end as isize);
    Ok(t.index(&spec)?)
}

fn flat(t: &Tensor) -> Result<Tensor> {
    Ok(t.contiguous()?.reshape(&[-1])?)
}

fn as_isize(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&d| d as isize).collect()
}

/// The product of `shape` with `shape[axis]` replaced by `n`.
fn numel_with(shape: &[usize], axis: usize, n: usize) -> usize {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if i == axis { n } else { d })
        .product()
}

/// Joins per-rank chunks (1-D, in rank order) of `shape` split along `axis` into one tensor.
fn unpack(buf: &Tensor, shape: &[usize], axis: usize, counts: &[usize]) -> Result<Tensor> {
    if shape[..axis].iter().product::<usize>() == 1 {
        // The chunks are already the row-major layout of the whole.
        return Ok(buf.view(&as_isize(shape))?);
    }
    let out = Tensor::empty(shape, buf.dtype())?;
    let (mut at, mut start) = (0usize, 0usize);
    for &c in counts {
        let n = numel_with(shape, axis, c);
        let mut piece_shape = shape.to_vec();
        piece_shape[axis] = c;
        let spec = [IndexSpec::interval(at as isize, (at + n) as isize)];
        let piece = buf.index(&spec)?.view(&as_isize(&piece_shape))?;
        narrow(&out, axis, start..start + c)?.assign(&piece)?;
        at += n;
        start += c;
    }
    Ok(out)
}

/// Cuts `t` along `axis` into `counts` pieces and packs them, in order, into one 1-D buffer.
fn pack(t: &Tensor, axis: usize, counts: &[usize]) -> Result<Tensor> {
    if t.shape()[..axis].iter().product::<usize>() == 1 {
        return flat(t);
    }
    let out = Tensor::empty(&[t.numel()], t.dtype())?;
    let (mut at, mut start) = (0usize, 0usize);
    for &c in counts {
        let piece = narrow(t, axis, start..start + c)?;
        let n = piece.numel();
        let spec = [IndexSpec::interval(at as isize, (at + n) as isize)];
        out.index(&spec)?
            .view(&as_isize(piece.shape()))?
            .assign(&piece)?;
        at += n;
        start += c;
    }
    Ok(out)
}

fn run_step(step: &Step, local: &Tensor, logical: &[usize], mesh: &Mesh) -> Result<Tensor> {
    let axis = step.mesh_axis;
    let comm: &Comm = mesh.axis_comm(axis);
    let (p, me) = (comm.size(), comm.rank());
    // The tensor the group of this mesh axis holds collectively.
    let mut group_sbp = step.from.clone();
    group_sbp[axis] = Sbp::Broadcast;
    let g = physical_shape(logical, &group_sbp, mesh.shape(), mesh.coords())?;
    let dtype = local.dtype();
    Ok(match step.kind {
        StepKind::AllGather { axis: a } => {
            if let Some(out) = direct::gather(comm, local, &g, a)? {
                return Ok(out);
            }
            let parts = balanced_counts(g[a], p);
            let counts: Vec<usize> = parts.iter().map(|&c| numel_with(&g, a, c)).collect();
            let buf = comm.all_gather_v(&flat(local)?, &counts)?;
            unpack(&buf, &g, a, &parts)?
        }
        StepKind::AllReduce(op) => match direct::all_reduce(comm, local, &g, op)? {
            Some(out) => out,
            None => comm.all_reduce(&flat(local)?, op)?.view(&as_isize(&g))?,
        },
        StepKind::ReduceScatter(op, a) => {
            if let Some(out) = direct::reduce_scatter(comm, local, &g, a, op)? {
                return Ok(out);
            }
            let parts = balanced_counts(g[a], p);
            let counts: Vec<usize> = parts.iter().map(|&c| numel_with(&g, a, c)).collect();
            let buf = comm.reduce_scatter_v(&pack(local, a, &parts)?, &counts, op)?;
            let mut shape = g.clone();
            shape[a] = parts[me];
            buf.view(&as_isize(&shape))?
        }
        StepKind::AllToAll { from, to } => {
            // Block s of the local shard (its `to` range) goes to rank s; the block from rank
            // r lands in the output's `from` range of r. Views on both sides: no packing.
            let mut mine = g.clone();
            mine[to] = balanced_range(g[to], p, me).len();
            let out = direct::output(comm, &mine, dtype)?;
            let send = (0..p)
                .map(|s| narrow(local, to, balanced_range(g[to], p, s)))
                .collect::<Result<Vec<_>>>()?;
            let recv = (0..p)
                .map(|r| narrow(&out, from, balanced_range(g[from], p, r)))
                .collect::<Result<Vec<_>>>()?;
            comm.all_to_all_views(&send, &recv)?;
            out
        }
        StepKind::Slice(a) => narrow(local, a, balanced_range(g[a], p, me))?,
        StepKind::KeepFirst(op) => {
            if me == 0 {
                local.clone()
            } else {
                identity_tensor(local.shape(), op, dtype)?
            }
        }
        StepKind::Scatter(op, a) => {
            let out = identity_tensor(&g, op, dtype)?;
            narrow(&out, a, balanced_range(g[a], p, me))?.assign(local)?;
            out
        }
    })
}
