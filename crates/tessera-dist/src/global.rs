//! Global tensors (docs/design.md D1–D2): a logical tensor placed on a mesh with an nd-SBP; each
//! rank holds its physical shard as an ordinary [`Tensor`].

use std::sync::Arc;

use tessera::{DType, Tensor};

use crate::boxing::{exec, plan};
use crate::comm::identity_tensor;
use crate::error::{DistError, Result};
use crate::mesh::Mesh;
use crate::sbp::{check_sbp, fmt_nd, local_ranges, physical_shape, Sbp};

/// A logical tensor distributed over a [`Mesh`] according to an nd-SBP.
#[derive(Clone)]
pub struct GlobalTensor {
    local: Tensor,
    logical: Vec<usize>,
    sbp: Vec<Sbp>,
    mesh: Arc<Mesh>,
}

impl std::fmt::Debug for GlobalTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GlobalTensor(logical {:?}, sbp {}, local {:?}, {:?})",
            self.logical,
            fmt_nd(&self.sbp),
            self.local.shape(),
            self.mesh
        )
    }
}

impl GlobalTensor {
    /// Wraps this rank's shard. With `check`, errors unless the local shape is the physical
    /// shape the SBP gives this rank (D2). No communication.
    pub fn from_local(
        local: Tensor,
        logical_shape: &[usize],
        sbp: &[Sbp],
        mesh: &Arc<Mesh>,
        check: bool,
    ) -> Result<GlobalTensor> {
        check_sbp(sbp, logical_shape.len(), mesh.shape())?;
        if check {
            let want = physical_shape(logical_shape, sbp, mesh.shape(), mesh.coords())?;
            if local.shape() != want.as_slice() {
                return Err(DistError::Placement(format!(
                    "local shape {:?} on mesh coordinates {:?}, but logical {logical_shape:?} with {} gives {want:?}",
                    local.shape(),
                    mesh.coords(),
                    fmt_nd(sbp)
                )));
            }
        }
        Ok(GlobalTensor {
            local,
            logical: logical_shape.to_vec(),
            sbp: sbp.to_vec(),
            mesh: mesh.clone(),
        })
    }

    /// Places a full logical tensor that every rank holds (the same values everywhere): each
    /// rank keeps its slice; for Partial, the first rank of that mesh axis keeps the values
    /// and the others hold the identity. No communication.
    pub fn from_logical(full: &Tensor, sbp: &[Sbp], mesh: &Arc<Mesh>) -> Result<GlobalTensor> {
        let logical = full.shape().to_vec();
        let ranges = local_ranges(&logical, sbp, mesh.shape(), mesh.coords())?;
        let spec: Vec<_> = ranges
            .iter()
            .map(|r| tessera::index::IndexSpec::interval(r.start as isize, r.end as isize))
            .collect();
        let mut local = full.index(&spec)?;
        for (axis, s) in sbp.iter().enumerate() {
            if let Sbp::Partial(op) = s {
                if mesh.coords()[axis] != 0 {
                    local = identity_tensor(local.shape(), *op, local.dtype())?;
                }
            }
        }
        GlobalTensor::from_local(local, &logical, sbp, mesh, false)
    }

    /// The full logical tensor on every rank (boxes to all-Broadcast; collective).
    pub fn to_full(&self) -> Result<Tensor> {
        let all_b = vec![Sbp::Broadcast; self.sbp.len()];
        Ok(self.to_sbp(&all_b)?.local)
    }

    /// Boxing (D6): the same logical tensor with nd-SBP `dst`. Collective.
    pub fn to_sbp(&self, dst: &[Sbp]) -> Result<GlobalTensor> {
        let p = plan::plan(
            &self.logical,
            self.dtype().itemsize(),
            self.mesh.shape(),
            &self.sbp,
            dst,
        )?;
        let local = exec::execute(&p, &self.local, &self.logical, &self.mesh)?;
        Ok(GlobalTensor {
            local,
            logical: self.logical.clone(),
            sbp: dst.to_vec(),
            mesh: self.mesh.clone(),
        })
    }

    /// This rank's shard.
    pub fn to_local(&self) -> Tensor {
        self.local.clone()
    }

    /// This rank's shard, borrowed.
    pub fn local(&self) -> &Tensor {
        &self.local
    }

    /// The logical (global) shape.
    pub fn logical_shape(&self) -> &[usize] {
        &self.logical
    }

    /// The nd-SBP, one entry per mesh axis.
    pub fn sbp(&self) -> &[Sbp] {
        &self.sbp
    }

    /// The mesh.
    pub fn mesh(&self) -> &Arc<Mesh> {
        &self.mesh
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.local.dtype()
    }
}
