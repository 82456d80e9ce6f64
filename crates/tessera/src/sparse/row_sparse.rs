//! Row-sparse arrays: sorted unique row ids plus a dense block of those rows (docs/design.md O4).

use super::{alloc, index_vec, values, with_slice, SparseError};
use crate::error::Result;
use crate::tensor::Tensor;
use crate::with_dtype;

/// An N-D array (N ≥ 1) whose stored rows (slices along axis 0) are listed in `indices`
/// (sorted, unique) with their values in the dense block `data` of shape
/// `[len(indices), shape[1..]...]`; every other row is zero.
///
/// ```
/// use tessera::{RowSparseArray, Tensor};
/// let block = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
/// let r = RowSparseArray::try_new(&[3, 2], vec![1], block).unwrap();
/// assert_eq!(r.to_dense().unwrap().to_vec::<f32>().unwrap(), vec![0., 0., 1., 2., 0., 0.]);
/// ```
#[derive(Clone, Debug)]
pub struct RowSparseArray {
    shape: Vec<usize>,
    indices: Tensor,
    data: Tensor,
}

impl RowSparseArray {
    /// Checked constructor: each O4 violation is its own [`SparseError`].
    pub fn try_new(shape: &[usize], indices: Vec<i64>, data: Tensor) -> Result<RowSparseArray> {
        check_block(shape, indices.len(), &data)?;
        check_rows(&indices, shape[0])?;
        Self::store(shape, indices, data)
    }

    /// Parts built by a kernel that keeps the O4 row-id invariants (sorted unique in-range
    /// rows; checked in debug builds). The shape checks (rank at least 1, a size that fits, a
    /// block of shape `[len(indices), shape[1..]...]`) cost O(rank) and always run, so a
    /// wrong block is `BlockShape`, never a later panic. Crate-private: it was public as
    /// `new_unchecked`; callers outside the crate use [`try_new`](Self::try_new).
    pub(crate) fn from_trusted(
        shape: &[usize],
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<RowSparseArray> {
        check_block(shape, indices.len(), &data)?;
        debug_assert!(check_rows(&indices, shape[0]).is_ok());
        Self::store(shape, indices, data)
    }

    /// The parts as stored: row ids as a 1-D `int64` tensor, a contiguous block.
    fn store(shape: &[usize], indices: Vec<i64>, data: Tensor) -> Result<RowSparseArray> {
        Ok(RowSparseArray {
            shape: shape.to_vec(),
            indices: values(indices)?,
            data: data.contiguous_dense()?,
        })
    }

    /// Parts already held as tensors (a kernel keeping the row ids of an array and replacing
    /// its block). The shapes are checked as by [`from_trusted`](Self::from_trusted); the row
    /// ids are not read (kernels reading them re-check them, see [`validate`](Self::validate)).
    pub(crate) fn from_parts(
        shape: Vec<usize>,
        indices: Tensor,
        data: Tensor,
    ) -> Result<RowSparseArray> {
        if indices.rank() != 1 || indices.dtype() != crate::DType::I64 {
            return Err(SparseError::Part(format!(
                "row_sparse row ids must be 1-D int64, got {} {:?}",
                indices.dtype(),
                indices.shape()
            ))
            .into());
        }
        check_block(&shape, indices.numel(), &data)?;
        Ok(RowSparseArray {
            shape,
            indices,
            data,
        })
    }

    /// The logical shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Stored row ids (`int64`, sorted, unique). Shared: never write into it.
    pub fn indices(&self) -> &Tensor {
        &self.indices
    }

    /// The dense block of stored rows.
    pub fn data(&self) -> &Tensor {
        &self.data
    }

    /// Elements per row (product of `shape[1..]`).
    pub fn row_len(&self) -> usize {
        self.shape[1..].iter().product()
    }

    /// Re-checks the O4 invariants on the current row ids: sorted, unique, in range. The
    /// ids are a shared tensor that must never be written; every kernel that reads them runs
    /// this check, so ids written anyway give [`SparseError::Modified`] naming the broken
    /// invariant, never a panic or a wrong result.
    ///
    /// ```
    /// use tessera::{RowSparseArray, Tensor};
    /// let block = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
    /// let r = RowSparseArray::try_new(&[3, 2], vec![1], block).unwrap();
    /// assert!(r.validate().is_ok());
    /// r.indices().fill_(3).unwrap(); // breaks the contract: row 3 of 3
    /// assert!(r.validate().is_err());
    /// assert!(r.to_dense().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        self.checked_rows().map(|_| ())
    }

    /// The row ids, after [`validate`](Self::validate)'s checks on them.
    pub(crate) fn checked_rows(&self) -> Result<Vec<i64>> {
        let rows = index_vec(&self.indices)?;
        // Holds by construction; checked again since every offset below depends on it.
        check_block(&self.shape, rows.len(), &self.data)?;
        check_rows(&rows, self.shape[0]).map_err(SparseError::modified)?;
        Ok(rows)
    }

    /// A dense copy.
    ///
    /// Errors: `Allocation` if the dense copy cannot be allocated, `Sparse(Modified)` for
    /// row ids written after construction.
    pub fn to_dense(&self) -> Result<Tensor> {
        let rows = self.checked_rows()?;
        let w = self.row_len();
        let out = Tensor::zeros(&self.shape, self.data.dtype())?;
        with_dtype!(self.data.dtype(), T => {
            // A fresh storage: no other guard on it can exist.
            let mut dense = out.dense_storage()?.write::<T>()?;
            with_slice::<T, _>(&self.data, |block| {
                for (k, &r) in rows.iter().enumerate() {
                    let r = r as usize;
                    dense[r * w..(r + 1) * w].copy_from_slice(&block[k * w..(k + 1) * w]);
                }
            })?;
        });
        Ok(out)
    }

    /// Keeps the stored rows whose ids are in `keep` (any order, duplicates ignored).
    pub fn retain(&self, keep: &[i64]) -> Result<RowSparseArray> {
        let rows = self.checked_rows()?;
        let mut keep = alloc::collect(keep.len(), keep.iter().copied())?;
        keep.sort_unstable();
        let sel: Vec<usize> = (0..rows.len())
            .filter(|&k| keep.binary_search(&rows[k]).is_ok())
            .collect();
        self.select(&rows, &sel)
    }

    /// A copy without stored rows that are entirely zero.
    pub fn eliminate_zeros(&self) -> Result<RowSparseArray> {
        let rows = self.checked_rows()?;
        let w = self.row_len();
        let sel: Vec<usize> = with_dtype!(self.data.dtype(), T => {
            with_slice::<T, _>(&self.data, |b| {
                (0..rows.len())
                    .filter(|&k| b[k * w..(k + 1) * w].iter().any(|v| *v != T::default()))
                    .collect()
            })?
        });
        self.select(&rows, &sel)
    }

    /// The stored rows at positions `sel` (increasing).
    fn select(&self, rows: &[i64], sel: &[usize]) -> Result<RowSparseArray> {
        let w = self.row_len();
        let mut dims = vec![sel.len()];
        dims.extend_from_slice(&self.shape[1..]);
        let data = with_dtype!(self.data.dtype(), T => {
            let v = with_slice::<T, _>(&self.data, |b| {
                let n = sel.len() * w; // at most the block's length
                alloc::collect(n, sel.iter().flat_map(|&k| b[k * w..(k + 1) * w].iter().copied()))
            })??;
            Tensor::from_vec(v, &dims)?
        });
        Self::from_trusted(&self.shape, sel.iter().map(|&k| rows[k]).collect(), data)
    }
}

/// Checks the shapes of row-sparse parts: rank at least 1, a logical size that fits in
/// `usize` (so `row_len` and dense offsets never overflow), and a block of shape
/// `[stored, shape[1..]...]`.
fn check_block(shape: &[usize], stored: usize, data: &Tensor) -> Result<()> {
    if shape.is_empty() {
        return Err(SparseError::Part("row_sparse needs rank >= 1".into()).into());
    }
    alloc::product(shape, "row_sparse shape")?;
    if data.shape().first() != Some(&stored) || data.shape()[1..] != shape[1..] {
        let mut expected = vec![stored];
        expected.extend_from_slice(&shape[1..]);
        return Err(SparseError::BlockShape {
            expected,
            got: data.shape().to_vec(),
        }
        .into());
    }
    Ok(())
}

/// Checks row ids against O4: each in `[0, rows)`, strictly increasing (so sorted and
/// unique); reports the first violation.
fn check_rows(ids: &[i64], rows: usize) -> std::result::Result<(), SparseError> {
    for (k, &row) in ids.iter().enumerate() {
        if row < 0 || row as usize >= rows {
            return Err(SparseError::RowOutOfRange { row, rows });
        }
        if k > 0 {
            let prev = ids[k - 1];
            if prev == row {
                return Err(SparseError::DuplicateRow(row));
            }
            if prev > row {
                return Err(SparseError::UnsortedRows { prev, next: row });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::error::{ErrorKind, TesseraError};

    fn block(dims: &[usize]) -> Tensor {
        Tensor::zeros(dims, DType::F64).unwrap()
    }

    fn is_block_shape(e: TesseraError) -> bool {
        matches!(e.kind(), ErrorKind::Sparse(SparseError::BlockShape { .. }))
    }

    #[test]
    fn trusted_parts_with_a_wrong_block_shape_are_an_error() {
        // Too few rows in the block, wrong trailing dims, a block of another rank, no rank.
        for (shape, rows, dims) in [
            (&[4usize, 3][..], vec![0i64, 2], &[1usize, 3][..]),
            (&[4, 3], vec![0, 2], &[2, 2]),
            (&[4, 3], vec![1], &[3]),
            (&[4], vec![1], &[1, 1]),
        ] {
            let e = RowSparseArray::from_trusted(shape, rows, block(dims)).unwrap_err();
            assert!(is_block_shape(e), "{shape:?} {dims:?}");
        }
        let e = RowSparseArray::from_trusted(&[], vec![], block(&[0])).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Sparse(_)), "{e}");
        assert!(RowSparseArray::from_trusted(&[4, 3], vec![0, 2], block(&[2, 3])).is_ok());
    }
}
