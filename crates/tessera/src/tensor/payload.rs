//! The sparse payload a [`Tensor`] may hold, as the tensor layer sees it (docs/design.md O3,
//! O4): opaque metadata plus a way to densify. The tensor layer has no sparse formats of its
//! own; the sparse layer above it implements [`SparsePayload`] for its parts and recovers
//! them by downcasting (`&dyn SparsePayload` upcasts to `&dyn Any`). So the tensor layer never
//! imports the layers above it, and dense kernels, which pass the `dense_storage` gate, can
//! never read a payload as dense elements.

use std::any::Any;

use super::Tensor;
use crate::dtype::DType;
use crate::error::Result;
use crate::stype::StorageType;

/// The parts of a sparse tensor, opaque to the tensor layer. Implementations must describe a
/// non-default storage type, and `shape` must stay fixed for the payload's lifetime (the
/// tensor caches it as its layout).
pub(crate) trait SparsePayload: Any + Send + Sync {
    /// The storage type (never [`StorageType::Default`]).
    fn stype(&self) -> StorageType;
    /// The element dtype.
    fn dtype(&self) -> DType;
    /// The logical (dense) shape.
    fn shape(&self) -> Vec<usize>;
    /// A dense copy (an error when the parts no longer describe a valid array).
    fn to_dense(&self) -> Result<Tensor>;
}
