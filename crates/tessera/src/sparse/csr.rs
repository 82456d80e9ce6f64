//! CSR matrices: the parts, the checked and unchecked constructors (DESIGN O4), densify,
//! row slicing and `eliminate_zeros`. Index parts are `int32` or `int64` (see `index.rs`).

use super::index::{index_dtype_for, index_part, index_tensor, index_vec, with_index, CsrIndex};
use super::{with_slice, SparseError};
use crate::dtype::{DType, Element};
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
    /// Checked constructor: every O4 violation is its own [`SparseError`]. The index parts
    /// are stored in [`index_dtype`](Self::index_dtype) (`int32` when the matrix fits).
    pub fn try_new(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        check_csr(shape, &indptr, &indices, &data, true)?;
        Self::store(shape, indptr, indices, data)
    }

    /// Checked constructor from index tensors (SciPy's parts: `int32` or `int64`, any other
    /// integer dtype is widened). Every O4 violation is its own [`SparseError`]. A part that is
    /// already contiguous in the matrix's index dtype is kept, not copied: it is then shared
    /// and must never be written.
    ///
    /// ```
    /// use tessera::{CsrMatrix, DType, Tensor};
    /// let ptr = Tensor::from_vec(vec![0i32, 1, 2], &[3]).unwrap();
    /// let idx = Tensor::from_vec(vec![1i32, 0], &[2]).unwrap();
    /// let data = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    /// let m = CsrMatrix::try_from_tensors([2, 2], ptr.clone(), idx, data).unwrap();
    /// assert_eq!(m.index_dtype(), DType::I32);
    /// assert!(m.indptr().shares_storage(&ptr));
    /// ```
    pub fn try_from_tensors(
        shape: [usize; 2],
        indptr: Tensor,
        indices: Tensor,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        let (mut indptr, mut indices) = (
            index_part("indptr", indptr)?,
            index_part("indices", indices)?,
        );
        if indptr.dtype() != indices.dtype() {
            indptr = indptr.astype(DType::I64)?;
            indices = indices.astype(DType::I64)?;
        }
        with_index!(indptr.dtype(), I => {
            with_slice::<I, _>(&indptr, |p| {
                with_slice::<I, _>(&indices, |i| check_csr(shape, p, i, &data, true))
            })???
        });
        let dt = index_dtype_for(indices.numel(), shape[1]);
        Ok(CsrMatrix {
            shape,
            indptr: indptr.astype_if(dt)?,
            indices: indices.astype_if(dt)?,
            data: data.contiguous()?,
        })
    }

    /// Constructor for parts already in canonical order: the structure is still checked in
    /// one linear pass (lengths, `indptr` from 0 non-decreasing to nnz, every column in
    /// range), so kernels never index out of bounds; sorted, unique columns per row are not
    /// (kernels relying on them give unspecified results when they do not hold).
    pub fn new_unchecked(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        check_csr(shape, &indptr, &indices, &data, false)?;
        Self::store(shape, indptr, indices, data)
    }

    /// Parts built by a kernel that keeps every O4 invariant (checked in debug builds).
    pub(crate) fn from_trusted(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        debug_assert!(check_csr(shape, &indptr, &indices, &data, true).is_ok());
        Self::store(shape, indptr, indices, data)
    }

    /// Checked parts, with the index parts in the matrix's index dtype.
    fn store(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        let dt = index_dtype_for(indices.len(), shape[1]);
        Ok(CsrMatrix {
            shape,
            indptr: index_tensor(indptr, dt)?,
            indices: index_tensor(indices, dt)?,
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

    /// The dtype of [`indptr`](Self::indptr) and [`indices`](Self::indices): `int32` when
    /// `nnz` and the column count fit in `i32` (as SciPy chooses), else `int64`.
    pub fn index_dtype(&self) -> DType {
        self.indices.dtype()
    }

    /// Row pointers ([`index_dtype`](Self::index_dtype), `rows + 1` entries). Shared: never
    /// write into it.
    pub fn indptr(&self) -> &Tensor {
        &self.indptr
    }

    /// Column indices ([`index_dtype`](Self::index_dtype), `nnz` entries). Shared: never
    /// write into it.
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
        let idx = with_index!(self.index_dtype(), I => {
            with_slice::<I, _>(&self.indices, |s| s[lo..hi].iter().map(|c| c.to_i64()).collect())?
        });
        let data = with_dtype!(self.data.dtype(), T => {
            values(with_slice::<T, _>(&self.data, |s| s[lo..hi].to_vec())?)?
        });
        Self::from_trusted([end - start, self.shape[1]], new_ptr, idx, data)
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
            Self::from_trusted(self.shape, p, i, values(d)?)
        })
    }
}

/// Checks the O4 invariants of CSR parts, reporting the first violation: the structure
/// (lengths, `indptr` from 0 non-decreasing to nnz, columns in range) always, sorted unique
/// columns per row when `canonical`.
fn check_csr<I: CsrIndex>(
    shape: [usize; 2],
    indptr: &[I],
    indices: &[I],
    data: &Tensor,
    canonical: bool,
) -> Result<()> {
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
    if indptr[0] != I::default() {
        return Err(SparseError::IndptrStart(indptr[0].to_i64()).into());
    }
    for (row, w) in indptr.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(SparseError::IndptrDecreasing {
                row,
                from: w[0].to_i64(),
                to: w[1].to_i64(),
            }
            .into());
        }
    }
    let nnz = indices.len();
    if indptr[rows].to_i64() != nnz as i64 {
        return Err(SparseError::IndptrEnd {
            end: indptr[rows].to_i64(),
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
        let cols_of_row = &indices[indptr[row].to_usize()..indptr[row + 1].to_usize()];
        for (k, &c) in cols_of_row.iter().enumerate() {
            let col = c.to_i64();
            if col < 0 || col as usize >= cols {
                return Err(SparseError::ColumnOutOfRange { row, col, cols }.into());
            }
            if canonical && k > 0 {
                let prev = cols_of_row[k - 1].to_i64();
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
