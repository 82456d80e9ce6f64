//! The Array API's sorting, searching, set, cumulative and joining functions (docs/design.md
//! section A): the dense kernels behind the registry ops of `ops/defs/arrayfns.rs` and
//! `ops/defs/arrayfns_join.rs`, and whose typed `Tensor` methods are in
//! `ops/methods/arrayfns.rs`.
//!
//! Every kernel that works along one axis sees its input as *lanes* (`lanes.rs`): the axis
//! moved last and the tensor made contiguous, so that each lane is one slice. Orders follow
//! NumPy (`sort::nan_last`): ascending, `-0.0 == 0.0`, every NaN after every number.

pub(crate) mod argext;
pub(crate) mod cumulative;
pub(crate) mod join;
pub(crate) mod lanes;
pub(crate) mod locate;
pub(crate) mod network;
mod offsets;
pub(crate) mod partition_copy;
pub(crate) mod quicksort;
pub(crate) mod radix;
pub(crate) mod repeat;
pub(crate) mod search;
pub(crate) mod select;
pub(crate) mod sort;
pub(crate) mod unique;

use crate::tensor::Tensor;

/// The four results of [`Tensor::unique_all`].
#[derive(Clone, Debug)]
pub struct UniqueAll {
    /// The distinct elements, sorted.
    pub values: Tensor,
    /// int64: the index (in the flattened input) of each value's first occurrence.
    pub indices: Tensor,
    /// int64, the input's shape: each element's position in `values`.
    pub inverse_indices: Tensor,
    /// int64: how many times each value occurs.
    pub counts: Tensor,
}
