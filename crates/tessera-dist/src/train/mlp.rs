//! The gradients issue's MLP (`relu(x W + b)` layers, softmax cross-entropy) over global
//! tensors, data, model or hybrid parallel (docs/design.md D11). The weights come from any
//! single-device model (`tessera_models::mlp::Mlp` in the examples and tests), so a parallel
//! run starts where the single-process run starts.

use std::sync::Arc;

use tessera::{BinaryOp, Tensor, UnaryOp};

use crate::error::{DistError, Result};
use crate::global::GlobalTensor;
use crate::mesh::Mesh;
use crate::ops;
use crate::sbp::Sbp;

/// How the MLP is spread over the ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parallelism {
    /// The batch `Split(0)`, every parameter `Broadcast` (a 1-D mesh).
    Data,
    /// The batch `Broadcast`; the first hidden layer's weight `Split(1)` (its bias `Split(0)`)
    /// and the next weight `Split(0)`, so the hidden activations stay split between them and
    /// one all-reduce joins them (Megatron's MLP split; a 1-D mesh).
    Model,
    /// A 2-D mesh `[data, model]`: data parallel on axis 0, model parallel on axis 1.
    Hybrid,
}

impl Parallelism {
    /// The mesh for `ranks` ranks: `[ranks]`, or `[ranks / 2, 2]` for [`Parallelism::Hybrid`]
    /// (an even number of ranks).
    pub fn mesh_shape(self, ranks: usize) -> Result<Vec<usize>> {
        match self {
            Parallelism::Data | Parallelism::Model => Ok(vec![ranks]),
            Parallelism::Hybrid if ranks >= 2 && ranks.is_multiple_of(2) => Ok(vec![ranks / 2, 2]),
            Parallelism::Hybrid => Err(DistError::Placement(format!(
                "hybrid parallelism needs an even number of ranks, got {ranks}"
            ))),
        }
    }

    /// The placement of the batch (inputs and targets).
    pub fn batch(self) -> Vec<Sbp> {
        match self {
            Parallelism::Data => vec![Sbp::Split(0)],
            Parallelism::Model => vec![Sbp::Broadcast],
            Parallelism::Hybrid => vec![Sbp::Split(0), Sbp::Broadcast],
        }
    }

    /// The placements of layer `i`'s weight and bias.
    pub fn layer(self, i: usize) -> (Vec<Sbp>, Vec<Sbp>) {
        let model = match i {
            0 => (Sbp::Split(1), Sbp::Split(0)),
            1 => (Sbp::Split(0), Sbp::Broadcast),
            _ => (Sbp::Broadcast, Sbp::Broadcast),
        };
        match self {
            Parallelism::Data => (vec![Sbp::Broadcast], vec![Sbp::Broadcast]),
            Parallelism::Model => (vec![model.0], vec![model.1]),
            Parallelism::Hybrid => (vec![Sbp::Broadcast, model.0], vec![Sbp::Broadcast, model.1]),
        }
    }
}

/// An MLP whose parameters are global tensors.
pub struct GlobalMlp {
    /// `[(W, b)]` of each layer.
    pub layers: Vec<(GlobalTensor, GlobalTensor)>,
}

impl GlobalMlp {
    /// Places full weights `[(W, b)]` (the same on every rank) per `par` on `mesh`, as leaves
    /// that require a gradient.
    pub fn from_full(
        layers: &[(Tensor, Tensor)],
        par: Parallelism,
        mesh: &Arc<Mesh>,
    ) -> Result<GlobalMlp> {
        let layers = layers
            .iter()
            .enumerate()
            .map(|(i, (w, b))| {
                let (ws, bs) = par.layer(i);
                let place = |t: &Tensor, sbp: &[Sbp]| -> Result<GlobalTensor> {
                    let g = GlobalTensor::from_logical(&t.detach(), sbp, mesh)?;
                    // A leaf of its own (not a view of the full weight).
                    let own = g.local().copy()?;
                    g.with_local(own).requires_grad_(true)
                };
                Ok((place(w, &ws)?, place(b, &bs)?))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(GlobalMlp { layers })
    }

    /// Logits `[batch, outputs]`.
    pub fn forward(&self, x: &GlobalTensor) -> Result<GlobalTensor> {
        let mut h = x.clone();
        for (i, (w, b)) in self.layers.iter().enumerate() {
            h = ops::binary(&ops::matmul(&h, w)?, b, BinaryOp::Add)?;
            if i + 1 < self.layers.len() {
                h = ops::unary(&h, UnaryOp::Relu)?;
            }
        }
        Ok(h)
    }

    /// Every parameter, `W` then `b` of each layer.
    pub fn params(&self) -> Vec<GlobalTensor> {
        self.layers
            .iter()
            .flat_map(|(w, b)| [w.clone(), b.clone()])
            .collect()
    }

    /// The full weights on every rank (collective).
    pub fn to_full(&self) -> Result<Vec<(Tensor, Tensor)>> {
        self.layers
            .iter()
            .map(|(w, b)| Ok((w.to_full()?, b.to_full()?)))
            .collect()
    }
}

/// Mean softmax cross-entropy of `logits` `[batch, classes]` against `one_hot` targets, the
/// single-device `tessera_models::loss::cross_entropy` in global ops (the row maximum is
/// subtracted as a constant).
pub fn cross_entropy(logits: &GlobalTensor, one_hot: &GlobalTensor) -> Result<GlobalTensor> {
    let m = ops::reduce(&logits.detach(), "max", Some(&[1]), true)?;
    let shifted = ops::binary(logits, &m, BinaryOp::Sub)?;
    let sum = ops::reduce(
        &ops::unary(&shifted, UnaryOp::Exp)?,
        "sum",
        Some(&[1]),
        true,
    )?;
    let logp = ops::binary(&shifted, &ops::unary(&sum, UnaryOp::Log)?, BinaryOp::Sub)?;
    let picked = ops::reduce(
        &ops::binary(one_hot, &logp, BinaryOp::Mul)?,
        "sum",
        Some(&[1]),
        false,
    )?;
    ops::unary(&ops::reduce(&picked, "mean", None, false)?, UnaryOp::Neg)
}
