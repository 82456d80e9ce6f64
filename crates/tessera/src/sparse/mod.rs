//! Sparse storage (docs/design.md O3, O4): CSR matrices and row-sparse arrays held inside a
//! [`Tensor`], their invariants, conversions and kernels. Layer: above the
//! tensor layer, below ops. [`SparseParts`] is the payload a sparse `Tensor` holds (it
//! implements the tensor layer's `SparsePayload`); the `Tensor` methods on sparse parts
//! (`sparse_parts`, `as_csr`, `cast_storage`, ...) are defined here. The errors are the error
//! layer's [`SparseError`], re-exported here.
//!
//! A sparse tensor keeps its parts as dense tensors: index parts (1-D, contiguous; CSR
//! `indptr`/`indices` in one index dtype per matrix, `int32` when it fits and else `int64`;
//! row-sparse row ids `int64`) and `data` (the element dtype). The parts are shared between tensors
//! (a sparse kernel that keeps the pattern, such as `quadratic` with `c = 0`, shares the
//! index arrays with its input); they must never be written. They still can be (`fill_` on
//! a part, a NumPy view of it), so every kernel that reads the index parts re-checks them
//! first ([`CsrMatrix::validate`], [`RowSparseArray::validate`]; SpMV bounds-checks inside its
//! loop instead) and parts written anyway give [`SparseError::Modified`], never a panic, an
//! out-of-bounds read or a wrong result. Kernels that only read or map the values (`quadratic`,
//! scalar ops, `astype`, `sum` over all axes) do not look at the indices and do not check
//! them; their output shares the written parts and the next kernel reading those reports it.
//!
//! Parts can be views of one buffer (`CsrMatrix::try_from_tensors` keeps the caller's tensors),
//! so a kernel takes one read guard per storage (`with_slices`, `unshared`), never two
//! guards of one lock: a parking_lot reader waits behind a queued writer, and a second guard
//! would deadlock with a concurrent `fill_`. Buffers sized by a user shape are allocated
//! fallibly with checked sizes (`alloc.rs`; dense outputs via `Tensor::zeros`), giving
//! `ErrorKind::Allocation` / `ShapeOverflow` instead of aborting.

mod alloc;
mod builder;
mod cast;
mod csr;
mod index;
pub(crate) mod kernels;
mod parts;
mod row_sparse;
mod spmv;
mod transpose_dot;

pub use crate::error::SparseError;
pub use builder::csr_from_triplets;
pub use csr::CsrMatrix;
pub use parts::SparseParts;
pub use row_sparse::RowSparseArray;

pub(crate) use index::index_vec;
pub(crate) use spmv::csr_dot;
pub(crate) use transpose_dot::csr_t_dot;

use crate::dtype::Element;
use crate::error::Result;
use crate::tensor::Tensor;

/// Runs `f` on the elements of a dense tensor (a sparse part) as a slice (a non-contiguous
/// tensor is copied first).
///
/// Takes a read guard of the tensor's storage for the duration of `f`. Never call it inside
/// `f` of another `with_slice` on a tensor that may share that storage (sparse parts can be
/// views of one buffer): a parking_lot reader waits behind a queued writer, so a second read
/// guard of one storage on one thread deadlocks with a concurrent `fill_` or `assign`. Read
/// two tensors of one element type with [`with_slices`]; for tensors of two element types,
/// [`unshared`] one of them first.
pub(crate) fn with_slice<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    let t = t.contiguous_dense()?;
    let g = t.dense_storage()?.read::<T>()?;
    let off = t.layout().offset();
    Ok(f(&g[off..off + t.numel()]))
}

/// Runs `f` on the elements of two dense tensors of one element type as slices, taking one
/// read guard per storage: one guard serves both when they share a storage (as `zip_into`
/// in the tensor layer does), so no thread ever holds two guards of one lock.
pub(crate) fn with_slices<T: Element, R>(
    a: &Tensor,
    b: &Tensor,
    f: impl FnOnce(&[T], &[T]) -> R,
) -> Result<R> {
    let (a, b) = (a.contiguous_dense()?, b.contiguous_dense()?);
    let ga = a.dense_storage()?.read::<T>()?;
    let gb = match a.shares_storage(&b) {
        // One storage has one dtype, checked as `T` by the guard of `a`.
        true => None,
        false => Some(b.dense_storage()?.read::<T>()?),
    };
    let whole_b: &[T] = gb.as_deref().unwrap_or(&ga);
    let (oa, ob) = (a.layout().offset(), b.layout().offset());
    Ok(f(&ga[oa..oa + a.numel()], &whole_b[ob..ob + b.numel()]))
}

/// `t`, or a contiguous copy of it (a storage of its own) when it shares a storage with one of
/// `others`: then `t` can be read while guards of the others are held. The copy is made
/// under one guard, before any other is taken; only parts that share a buffer pay for it.
pub(crate) fn unshared(t: &Tensor, others: &[&Tensor]) -> Result<Tensor> {
    match others.iter().any(|o| t.shares_storage(o)) {
        true => t.copy_dense(),
        false => Ok(t.clone()),
    }
}

/// Values of `T` as a 1-D tensor.
pub(crate) fn values<T: Element>(v: Vec<T>) -> Result<Tensor> {
    let n = v.len();
    Tensor::from_vec(v, &[n])
}
