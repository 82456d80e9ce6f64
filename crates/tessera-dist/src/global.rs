//! Global tensors (docs/design.md D1–D2): a logical tensor placed on a mesh with an nd-SBP; each
//! rank holds its physical shard as an ordinary [`Tensor`].

use std::sync::Arc;

use tessera::autograd::{is_grad_enabled, record_function};
use tessera::{DType, ErrorKind, Tensor, TesseraError};

use crate::boxing::{exec, plan};
use crate::comm::identity_tensor;
use crate::error::{DistError, Result};
use crate::mesh::Mesh;
use crate::sbp::{check_sbp, dual_nd, fmt_nd, local_ranges, physical_shape, Sbp};

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

    /// A tensor every rank holds alike, placed `Broadcast` on every mesh axis without a copy:
    /// the handle itself, so a leaf stays that leaf (a model's parameter handed to
    /// [`crate::train::DistOptimizer`] while the model runs its forward locally).
    pub fn from_replica(t: Tensor, mesh: &Arc<Mesh>) -> Result<GlobalTensor> {
        let sbp = vec![Sbp::Broadcast; mesh.shape().len()];
        let shape = t.shape().to_vec();
        GlobalTensor::from_local(t, &shape, &sbp, mesh, false)
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
    ///
    /// Recorded for backward when the shard requires a gradient (D10): the gradient is boxed
    /// back from the dual of `dst` to the dual of this placement.
    pub fn to_sbp(&self, dst: &[Sbp]) -> Result<GlobalTensor> {
        if dst == self.sbp.as_slice() {
            // Nothing moves, and nothing is recorded (every global op boxes each input to
            // its signature's placement, most often the one it has).
            return Ok(self.clone());
        }
        let p = plan::plan(
            &self.logical,
            self.dtype().itemsize(),
            self.mesh.shape(),
            &self.sbp,
            dst,
        )?;
        let local = {
            let _plain = tessera::autograd::no_grad();
            exec::execute(&p, &self.local, &self.logical, &self.mesh)?
        };
        let local = if recording(&[self]) {
            record_boxing(self, local, dst)
        } else {
            local
        };
        Ok(GlobalTensor {
            local,
            logical: self.logical.clone(),
            sbp: dst.to_vec(),
            mesh: self.mesh.clone(),
        })
    }

    /// The same placement over another shard of the same physical shape (no checks).
    pub(crate) fn with_local(&self, local: Tensor) -> GlobalTensor {
        GlobalTensor {
            local,
            logical: self.logical.clone(),
            sbp: self.sbp.clone(),
            mesh: self.mesh.clone(),
        }
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

/// Autograd (docs/design.md D10; see [`crate::autograd`]).
impl GlobalTensor {
    /// Whether this rank's shard requires a gradient.
    pub fn requires_grad(&self) -> bool {
        self.local().requires_grad()
    }

    /// Makes the shard a leaf that requires a gradient (or stops requiring one), as
    /// [`Tensor::requires_grad_`]. Every rank must do it alike.
    pub fn requires_grad_(self, requires: bool) -> Result<GlobalTensor> {
        let local = self.local().clone().requires_grad_(requires)?;
        Ok(self.with_local(local))
    }

    /// The gradient accumulated by [`crate::autograd::backward`], placed with the dual SBP of this tensor's:
    /// `Partial(sum)` for a `Broadcast` parameter (box it to `Broadcast` to sum the ranks'
    /// shares, which is data parallelism's all-reduce), the same split for a `Split` one.
    pub fn grad(&self) -> Result<Option<GlobalTensor>> {
        let Some(g) = self.local().grad() else {
            return Ok(None);
        };
        let sbp = dual_nd(self.sbp())?;
        GlobalTensor::from_local(g, self.logical_shape(), &sbp, self.mesh(), true).map(Some)
    }

    /// The same global tensor without autograd state (shares the shard's memory).
    pub fn detach(&self) -> GlobalTensor {
        self.with_local(self.local().detach())
    }
}

/// Whether an op on `inputs` is recorded for backward: grad mode on and some input's shard
/// requires a gradient. Shards of one global tensor agree on it on every rank.
pub(crate) fn recording(inputs: &[&GlobalTensor]) -> bool {
    is_grad_enabled() && inputs.iter().any(|g| g.requires_grad())
}

fn local_error(e: DistError) -> TesseraError {
    match e {
        DistError::Tensor(t) => t,
        other => ErrorKind::Autograd(format!("backward of a global op: {other}")).into(),
    }
}

/// Records the boxing of `x` (SBP `x.sbp()`) into `boxed` (this rank's shard under `dst`):
/// its backward boxes the gradient from `dual(dst)` to `dual(x.sbp())`, a collective every
/// rank runs.
pub(crate) fn record_boxing(x: &GlobalTensor, boxed: Tensor, dst: &[Sbp]) -> Tensor {
    let src = x.sbp().to_vec();
    let dst = dst.to_vec();
    let logical = x.logical_shape().to_vec();
    let mesh: Arc<Mesh> = x.mesh().clone();
    let backward = move |g: &[Tensor]| -> tessera::Result<Vec<Option<Tensor>>> {
        let (from, to) = match (dual_nd(&dst), dual_nd(&src)) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(e), _) | (_, Err(e)) => {
                return Err(local_error(DistError::Placement(format!(
                    "boxing {} -> {}: {e}",
                    fmt_nd(&src),
                    fmt_nd(&dst)
                ))))
            }
        };
        let grad = GlobalTensor::from_local(g[0].clone(), &logical, &from, &mesh, false)
            .and_then(|g| g.to_sbp(&to))
            .map_err(local_error)?;
        Ok(vec![Some(grad.to_local())])
    };
    record_function(
        "boxing",
        std::slice::from_ref(x.local()),
        vec![boxed],
        true,
        Box::new(backward),
    )
    .remove(0)
}
