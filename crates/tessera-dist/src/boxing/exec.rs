//! The boxing executor: runs a [`Plan`] step by step, each step one collective of the mesh
//! axis's communicator (which chooses how to move the data) or a local slice.

use tessera::Tensor;

use crate::boxing::plan::{Plan, Step, StepKind};
use crate::comm::{identity_tensor, narrow, Comm};
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

fn as_isize(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&d| d as isize).collect()
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
            comm.all_gather_axis(local, a, &balanced_counts(g[a], p))?
        }
        StepKind::AllReduce(op) => {
            let flat = local.contiguous()?.reshape(&[-1])?;
            comm.all_reduce(&flat, op)?.view(&as_isize(&g))?
        }
        StepKind::ReduceScatter(op, a) => {
            comm.reduce_scatter_axis(local, a, &balanced_counts(g[a], p), op)?
        }
        StepKind::AllToAll { from, to } => {
            // Block s of the local shard (its `to` range) goes to rank s; the block from rank
            // r lands in the output's `from` range of r.
            let (to_counts, from_counts) = (balanced_counts(g[to], p), balanced_counts(g[from], p));
            comm.all_to_all_axis(local, to, &to_counts, from, &from_counts)?
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
