//! CSR matrices: the parts, the checked and unchecked constructors (DESIGN O4), densify,
//! row slicing and `eliminate_zeros`.

use super::{i64_tensor, index_vec, with_slice, SparseError};
use crate::dtype::Element;
use crate::error::{Result, TesseraError};
use crate::tensor::Tensor;
use crate::with_dtype;

/// A 2-D compressed-sparse-row matrix: row `i` stores the columns
/// `indices[indptr[i]..indptr[i + 1]]` (sorted, unique) with values `data[...]`.
///
/// ```
/// use tessera::{CsrMatrix, Tensor};
/// let data = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
/// let m = CsrMatrix::try_new([2, 2], vec![0, 1, 2], vec![1, 0], data).unwrap();
/// assert_eq!(m.to_dense().unwrap().to_vec::<f64>().unwrap(), vec![0., 1., 2., 0.]);
/// assert!(CsrMatrix::try_new([2, 2], vec![0, 1], vec![1], Tensor::from_vec(vec![1.0f64], &[1]).unwrap()).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct CsrMatrix {
    shape: [usize; 2],
    indptr: Tensor,
    indices: Tensor,
    data: Tensor,
}

impl CsrMatrix {
    /// Checked constructor: every O4 violation is its own [`SparseError`].
    pub fn try_new(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        check_csr(shape, &indptr, &indices, &data)?;
        Self::from_checked(shape, indptr, indices, data)
    }

    /// Constructor for trusted, canonical parts: only the lengths are checked (kernels stay
    /// memory-safe on bad indices, but results are then unspecified).
    pub fn new_unchecked(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        if indptr.len() != shape[0] + 1 {
            return Err(SparseError::IndptrLength {
                expected: shape[0] + 1,
                got: indptr.len(),
            }
            .into());
        }
        if indices.len() != data.numel() || data.rank() != 1 {
            return Err(SparseError::DataLength {
                indices: indices.len(),
                data: data.numel(),
            }
            .into());
        }
        Self::from_checked(shape, indptr, indices, data)
    }

    fn from_checked(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        Ok(CsrMatrix {
            shape,
            indptr: i64_tensor(indptr)?,
            indices: i64_tensor(indices)?,
            data: data.contiguous()?,
        })
    }

    /// Parts already held as tensors (kernels keeping a pattern share its index tensors).
    pub(crate) fn from_parts(
        shape: [usize; 2],
        indptr: Tensor,
        indices: Tensor,
        data: Tensor,
    ) -> CsrMatrix {
        debug_assert_eq!(indices.numel(), data.numel());
        CsrMatrix {
            shape,
            indptr,
            indices,
            data,
        }
    }

    /// `[rows, cols]`.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Row pointers (`int64`, `rows + 1` entries). Shared: never write into it.
    pub fn indptr(&self) -> &Tensor {
        &self.indptr
    }

    /// Column indices (`int64`, `nnz` entries). Shared: never write into it.
    pub fn indices(&self) -> &Tensor {
        &self.indices
    }

    /// Stored values (1-D, `nnz` entries).
    pub fn data(&self) -> &Tensor {
        &self.data
    }

    /// Number of stored elements (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.data.numel()
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Result<Tensor> {
        let [rows, cols] = self.shape;
        let indptr = index_vec(&self.indptr)?;
        let indices = index_vec(&self.indices)?;
        with_dtype!(self.data.dtype(), T => {
            let mut dense = vec![T::default(); rows * cols];
            with_slice::<T, _>(&self.data, |vals| {
                for r in 0..rows {
                    for k in indptr[r] as usize..indptr[r + 1] as usize {
                        dense[r * cols + indices[k] as usize] = vals[k];
                    }
                }
            })?;
            Tensor::from_vec(dense, &self.shape)
        })
    }

    /// Rows `start..end` (SciPy `m[start:end]`); the values are copied.
    pub fn rows_slice(&self, start: usize, end: usize) -> Result<CsrMatrix> {
        if start > end || end > self.shape[0] {
            return Err(TesseraError::Index(format!(
                "csr row range {start}..{end} is out of bounds for {} rows",
                self.shape[0]
            )));
        }
        let indptr = index_vec(&self.indptr)?;
        let (lo, hi) = (indptr[start] as usize, indptr[end] as usize);
        let new_ptr: Vec<i64> = indptr[start..=end].iter().map(|p| p - lo as i64).collect();
        let idx = with_slice::<i64, _>(&self.indices, |s| s[lo..hi].to_vec())?;
        let data = with_dtype!(self.data.dtype(), T => {
            values(with_slice::<T, _>(&self.data, |s| s[lo..hi].to_vec())?)?
        });
        Self::from_checked([end - start, self.shape[1]], new_ptr, idx, data)
    }

    /// A copy without the explicitly stored zeros.
    pub fn eliminate_zeros(&self) -> Result<CsrMatrix> {
        let indptr = index_vec(&self.indptr)?;
        let indices = index_vec(&self.indices)?;
        with_dtype!(self.data.dtype(), T => {
            let vals = with_slice::<T, _>(&self.data, |s| s.to_vec())?;
            let (mut p, mut i, mut d) = (vec![0i64], Vec::new(), Vec::new());
            for r in 0..self.shape[0] {
                for k in indptr[r] as usize..indptr[r + 1] as usize {
                    if vals[k] != T::default() {
                        i.push(indices[k]);
                        d.push(vals[k]);
                    }
                }
                p.push(i.len() as i64);
            }
            Self::from_checked(self.shape, p, i, values(d)?)
        })
    }
}

/// Checks every O4 invariant of CSR parts, reporting the first violation.
fn check_csr(shape: [usize; 2], indptr: &[i64], indices: &[i64], data: &Tensor) -> Result<()> {
    let [rows, cols] = shape;
    if data.rank() != 1 {
        return Err(SparseError::Part(format!(
            "csr data must be 1-D, got shape {:?}",
            data.shape()
        ))
        .into());
    }
    if indptr.len() != rows + 1 {
        return Err(SparseError::IndptrLength {
            expected: rows + 1,
            got: indptr.len(),
        }
        .into());
    }
    if indptr[0] != 0 {
        return Err(SparseError::IndptrStart(indptr[0]).into());
    }
    for (row, w) in indptr.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(SparseError::IndptrDecreasing {
                row,
                from: w[0],
                to: w[1],
            }
            .into());
        }
    }
    let nnz = indices.len();
    if indptr[rows] != nnz as i64 {
        return Err(SparseError::IndptrEnd {
            end: indptr[rows],
            nnz,
        }
        .into());
    }
    if data.numel() != nnz {
        return Err(SparseError::DataLength {
            indices: nnz,
            data: data.numel(),
        }
        .into());
    }
    for row in 0..rows {
        let cols_of_row = &indices[indptr[row] as usize..indptr[row + 1] as usize];
        for (k, &col) in cols_of_row.iter().enumerate() {
            if col < 0 || col as usize >= cols {
                return Err(SparseError::ColumnOutOfRange { row, col, cols }.into());
            }
            if k > 0 {
                let prev = cols_of_row[k - 1];
                if prev == col {
                    return Err(SparseError::DuplicateColumn { row, col }.into());
                }
                if prev > col {
                    return Err(SparseError::UnsortedColumns {
                        row,
                        prev,
                        next: col,
                    }
                    .into());
                }
            }
        }
    }
    Ok(())
}

/// Values of `T` as a 1-D tensor.
pub(crate) fn values<T: Element>(v: Vec<T>) -> Result<Tensor> {
    let n = v.len();
    Tensor::from_vec(v, &[n])
}
