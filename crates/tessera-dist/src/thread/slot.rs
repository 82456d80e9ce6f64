//! What each rank deposits for a collective of the thread backend: the collective's kind and
//! its arguments, and what every rank must pass alike.

use tessera::{DType, Tensor};

use crate::sbp::PartialOp;

/// What one rank deposits for a collective: its kind and its arguments.
#[derive(Clone)]
pub(super) enum Slot {
    Barrier,
    Broadcast {
        buf: Tensor,
        root: usize,
    },
    AllGather {
        send: Tensor,
        counts: Vec<usize>,
    },
    AllReduce {
        send: Tensor,
        op: PartialOp,
    },
    ReduceScatter {
        send: Tensor,
        counts: Vec<usize>,
        op: PartialOp,
    },
    AllToAll {
        send: Tensor,
        send_counts: Vec<usize>,
        recv_counts: Vec<usize>,
    },
    /// `all_to_all_views`: the send views and the recv views.
    AllToAllViews {
        send: Vec<Tensor>,
        recv: Vec<Tensor>,
    },
    Split {
        color: usize,
        key: usize,
    },
}

impl Slot {
    /// The collective's name.
    pub fn tag(&self) -> &'static str {
        match self {
            Slot::Barrier => "barrier",
            Slot::Broadcast { .. } => "broadcast",
            Slot::AllGather { .. } => "all_gather_v",
            Slot::AllReduce { .. } => "all_reduce",
            Slot::ReduceScatter { .. } => "reduce_scatter_v",
            Slot::AllToAll { .. } => "all_to_all_v",
            Slot::AllToAllViews { .. } => "all_to_all_views",
            Slot::Split { .. } => "split",
        }
    }

    /// The send buffer of a collective that has one.
    pub fn buffer(&self) -> Option<&Tensor> {
        match self {
            Slot::Broadcast { buf: t, .. }
            | Slot::AllGather { send: t, .. }
            | Slot::AllReduce { send: t, .. }
            | Slot::ReduceScatter { send: t, .. }
            | Slot::AllToAll { send: t, .. } => Some(t),
            _ => None,
        }
    }

    /// The dtype every rank must pass alike.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            Slot::AllToAllViews { send, .. } => send.first().map(Tensor::dtype),
            s => s.buffer().map(Tensor::dtype),
        }
    }

    /// The arguments every rank must pass alike (the all-to-alls are checked pair by pair, a
    /// split's color and key differ by design).
    pub fn agreed(&self) -> Vec<usize> {
        match self {
            Slot::Broadcast { buf, root } => vec![*root, buf.numel()],
            Slot::AllGather { counts, .. } => counts.clone(),
            Slot::AllReduce { send, op } => vec![*op as usize, send.numel()],
            Slot::ReduceScatter { counts, op, .. } => [&[*op as usize][..], counts].concat(),
            _ => Vec::new(),
        }
    }
}
