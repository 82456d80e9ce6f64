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
        if shape.is_empty() {
            return Err(SparseError::Part("row_sparse needs rank >= 1".into()).into());
        }
        // The logical size must fit, so `row_len` and dense offsets never overflow.
        alloc::product(shape, "row_sparse shape")?;
        let mut expected = vec![indices.len()];
        expected.extend_from_slice(&shape[1..]);
        if data.shape() != expected.as_slice() {
            return Err(SparseError::BlockShape {
                expected,
                got: data.shape().to_vec(),
            }
            .into());
        }
        check_rows(&indices, shape[0])?;
        Self::store(shape, indices, data)
    }

    /// Parts built by a kernel that keeps every O4 invariant (rank at least 1, sorted unique
    /// in-range rows, a block of the right shape); checked in debug builds. Crate-private: it
    /// was public as `new_unchecked`, which let bad parts through to a later panic (an empty
    /// shape, a block too small for its rows); callers outside the crate use
    /// [`try_new`](Self::try_new), whose checks are one linear pass over the row ids.
    pub(crate) fn from_trusted(
        shape: &[usize],
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<RowSparseArray> {
        debug_assert!(Self::try_new(shape, indices.clone(), data.clone()).is_ok());
        Self::store(shape, indices, data)
    }

    /// The parts as stored: row ids as a 1-D `int64` tensor, a contiguous block.
    fn store(shape: &[usize], indices: Vec<i64>, data: Tensor) -> Result<RowSparseArray> {
        Ok(RowSparseArray {
            shape: shape.to_vec(),
            indices: values(indices)?,
            data: data.contiguous()?,
        })
    }

    /// Parts already held as tensors.
    pub(crate) fn from_parts(shape: Vec<usize>, indices: Tensor, data: Tensor) -> RowSparseArray {
        RowSparseArray {
            shape,
            indices,
            data,
        }
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
        if self.data.shape().first() != Some(&rows.len()) {
            return Err(SparseError::BlockShape {
                expected: [rows.len()]
                    .into_iter()
                    .chain(self.shape[1..].iter().copied())
                    .collect(),
                got: self.data.shape().to_vec(),
            }
            .modified()
            .into());
        }
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
