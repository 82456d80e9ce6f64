//! Sparse storage (docs/design.md O3, O4): CSR matrices and row-sparse arrays held inside a
//! [`Tensor`](crate::Tensor), their invariants and errors, conversions and kernels.
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

mod builder;
pub(crate) mod cast;
mod csr;
mod index;
pub(crate) mod kernels;
mod row_sparse;
mod spmv;

pub use builder::csr_from_triplets;
pub use csr::CsrMatrix;
pub use crate::error::SparseError;
pub use row_sparse::RowSparseArray;

pub(crate) use index::index_vec;
pub(crate) use spmv::csr_dot;

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::stype::StorageType;
use crate::tensor::Tensor;

/// The parts of a sparse tensor.
#[derive(Clone, Debug)]
pub enum SparseParts {
    /// Compressed sparse rows.
    Csr(CsrMatrix),
    /// Sorted unique row indices plus a dense block of those rows.
    RowSparse(RowSparseArray),
}

impl SparseParts {
    /// The storage type.
    pub fn stype(&self) -> StorageType {
        match self {
            SparseParts::Csr(_) => StorageType::Csr,
            SparseParts::RowSparse(_) => StorageType::RowSparse,
        }
    }

    /// The logical (dense) shape.
    pub fn shape(&self) -> Vec<usize> {
        match self {
            SparseParts::Csr(m) => m.shape().to_vec(),
            SparseParts::RowSparse(r) => r.shape().to_vec(),
        }
    }

    /// The element dtype.
    pub fn dtype(&self) -> DType {
        match self {
            SparseParts::Csr(m) => m.data().dtype(),
            SparseParts::RowSparse(r) => r.data().dtype(),
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Result<Tensor> {
        match self {
            SparseParts::Csr(m) => m.to_dense(),
            SparseParts::RowSparse(r) => r.to_dense(),
        }
    }
}

impl Tensor {
    /// A sparse tensor from checked parts (see [`CsrMatrix::try_new`],
    /// [`RowSparseArray::try_new`]).
    ///
    /// ```
    /// use tessera::{CsrMatrix, SparseParts, StorageType, Tensor};
    /// let data = Tensor::from_vec(vec![5i64], &[1]).unwrap();
    /// let m = CsrMatrix::try_new([1, 3], vec![0, 1], vec![2], data).unwrap();
    /// let t = Tensor::from_sparse_parts(SparseParts::Csr(m)).unwrap();
    /// assert_eq!((t.stype(), t.shape()), (StorageType::Csr, &[1usize, 3][..]));
    /// assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 0, 5]);
    /// ```
    pub fn from_sparse_parts(parts: SparseParts) -> Result<Tensor> {
        Tensor::from_sparse(parts)
    }

    /// The CSR parts of a CSR tensor, or an error naming the actual storage type.
    pub fn as_csr(&self) -> Result<&CsrMatrix> {
        match self.sparse_parts() {
            Some(SparseParts::Csr(m)) => Ok(m),
            _ => Err(crate::TesseraError::InvalidArgument(format!(
                "expected a csr tensor, got {}",
                self.stype()
            ))),
        }
    }

    /// The row-sparse parts of a row-sparse tensor, or an error naming the storage type.
    pub fn as_row_sparse(&self) -> Result<&RowSparseArray> {
        match self.sparse_parts() {
            Some(SparseParts::RowSparse(r)) => Ok(r),
            _ => Err(crate::TesseraError::InvalidArgument(format!(
                "expected a row_sparse tensor, got {}",
                self.stype()
            ))),
        }
    }

    /// Rows `start..end` of a CSR tensor, as CSR (SciPy `m[start:end]`).
    pub fn csr_rows(&self, start: usize, end: usize) -> Result<Tensor> {
        Tensor::from_sparse(SparseParts::Csr(self.as_csr()?.rows_slice(start, end)?))
    }

    /// The rows of a row-sparse tensor whose ids are in `rows` (MXNet `retain`); the other
    /// stored rows are dropped.
    pub fn retain(&self, rows: &[i64]) -> Result<Tensor> {
        Tensor::from_sparse(SparseParts::RowSparse(self.as_row_sparse()?.retain(rows)?))
    }

    /// A copy without explicitly stored zeros (CSR: zero values; row-sparse: all-zero rows).
    /// Dense tensors are returned unchanged.
    pub fn eliminate_zeros(&self) -> Result<Tensor> {
        match self.sparse_parts() {
            None => Ok(self.clone()),
            Some(SparseParts::Csr(m)) => {
                Tensor::from_sparse(SparseParts::Csr(m.eliminate_zeros()?))
            }
            Some(SparseParts::RowSparse(r)) => {
                Tensor::from_sparse(SparseParts::RowSparse(r.eliminate_zeros()?))
            }
        }
    }
}

/// Runs `f` on the elements of a contiguous dense tensor (a sparse part) as a slice.
pub(crate) fn with_slice<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    let t = t.contiguous()?;
    let g = t.dense_storage()?.read::<T>()?;
    let off = t.layout().offset();
    Ok(f(&g[off..off + t.numel()]))
}

/// Values of `T` as a 1-D tensor.
pub(crate) fn values<T: Element>(v: Vec<T>) -> Result<Tensor> {
    let n = v.len();
    Tensor::from_vec(v, &[n])
}
