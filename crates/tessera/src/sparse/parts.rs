//! [`SparseParts`], the payload of a sparse [`Tensor`], and the `Tensor` methods that read or
//! build it (docs/design.md O3, O4).

use std::any::Any;

use super::{CsrMatrix, RowSparseArray};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::stype::StorageType;
use crate::tensor::{SparsePayload, Tensor};

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
    /// Wraps checked sparse parts (the logical shape comes from the parts).
    pub(crate) fn from_sparse(parts: SparseParts) -> Result<Tensor> {
        Tensor::from_payload(parts)
    }

    /// The sparse parts, or `None` for a dense tensor.
    pub fn sparse_parts(&self) -> Option<&SparseParts> {
        let payload: &dyn Any = self.sparse_payload()?;
        payload.downcast_ref::<SparseParts>()
    }

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
            _ => Err(ErrorKind::InvalidArgument(format!(
                "expected a csr tensor, got {}",
                self.stype()
            ))
            .into()),
        }
    }

    /// The row-sparse parts of a row-sparse tensor, or an error naming the storage type.
    pub fn as_row_sparse(&self) -> Result<&RowSparseArray> {
        match self.sparse_parts() {
            Some(SparseParts::RowSparse(r)) => Ok(r),
            _ => Err(ErrorKind::InvalidArgument(format!(
                "expected a row_sparse tensor, got {}",
                self.stype()
            ))
            .into()),
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

impl SparsePayload for SparseParts {
    fn stype(&self) -> StorageType {
        SparseParts::stype(self)
    }

    fn dtype(&self) -> DType {
        SparseParts::dtype(self)
    }

    fn shape(&self) -> Vec<usize> {
        SparseParts::shape(self)
    }

    fn to_dense(&self) -> Result<Tensor> {
        SparseParts::to_dense(self)
    }
}
