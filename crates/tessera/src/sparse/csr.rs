//! CSR matrices: the parts, the checked constructors (docs/design.md O4), densify,
//! row slicing and `eliminate_zeros`. Index parts are `int32` or `int64` (see `index.rs`).

use super::index::{index_dtype_for, index_part, index_tensor, with_index, CsrIndex};
use super::{alloc, values, with_slice, with_slices, SparseError};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
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
    /// Whether the columns were sorted and unique per row at construction; kernels
    /// re-check that too when it held (see [`CsrMatrix::validate`]).
    canonical: bool,
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
        Self::store(shape, indptr, indices, data, true)
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
            indptr = indptr.astype_if(DType::I64)?;
            indices = indices.astype_if(DType::I64)?;
        }
        with_index!(indptr.dtype(), I => {
            with_slices::<I, _>(&indptr, &indices, |p, i| check_csr(shape, p, i, &data, true))??
        });
        let dt = index_dtype_for(indices.numel(), shape[1]);
        Ok(CsrMatrix {
            shape,
            indptr: indptr.astype_if(dt)?,
            indices: indices.astype_if(dt)?,
            data: data.contiguous_dense()?,
            canonical: true,
        })
    }

    /// Checked constructor that also accepts parts out of canonical order (SciPy's
    /// `csr_matrix((data, indices, indptr))`): the structure is checked as by
    /// [`try_new`](Self::try_new) (lengths, `indptr` from 0 non-decreasing to nnz, every column
    /// in range), so kernels never index out of bounds, and every such violation is its own
    /// [`SparseError`]; unsorted or repeated columns within a row are not an error but are
    /// recorded: [`has_canonical_format`](Self::has_canonical_format) is then `false` (kernels
    /// relying on canonical order give unspecified, never out-of-bounds, results).
    ///
    /// Named for what it accepts, not `new_unchecked`: in Rust `_unchecked` means the caller
    /// upholds the invariants (usually an `unsafe fn`), and this constructor checks every
    /// invariant that memory safety and the typed-error rule need.
    ///
    /// ```
    /// use tessera::{CsrMatrix, Tensor};
    /// let data = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    /// let m = CsrMatrix::try_new_noncanonical([1, 3], vec![0, 2], vec![2, 0], data.clone()).unwrap();
    /// assert!(!m.has_canonical_format());
    /// assert!(CsrMatrix::try_new_noncanonical([1, 3], vec![0, 2], vec![2, 3], data).is_err());
    /// ```
    pub fn try_new_noncanonical(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
    ) -> Result<CsrMatrix> {
        let canonical = match check_csr(shape, &indptr, &indices, &data, true) {
            Ok(()) => true,
            Err(SparseError::UnsortedColumns { .. } | SparseError::DuplicateColumn { .. }) => {
                check_csr(shape, &indptr, &indices, &data, false)?;
                false
            }
            Err(e) => return Err(e.into()),
        };
        Self::store(shape, indptr, indices, data, canonical)
    }

    /// Parts built by a kernel that keeps every O4 invariant, sorted unique columns
    /// included when `canonical` (the kernel's inputs were canonical); checked in debug
    /// builds.
    pub(crate) fn from_trusted(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
        canonical: bool,
    ) -> Result<CsrMatrix> {
        debug_assert!(check_csr(shape, &indptr, &indices, &data, canonical).is_ok());
        Self::store(shape, indptr, indices, data, canonical)
    }

    /// Checked parts, with the index parts in the matrix's index dtype.
    fn store(
        shape: [usize; 2],
        indptr: Vec<i64>,
        indices: Vec<i64>,
        data: Tensor,
        canonical: bool,
    ) -> Result<CsrMatrix> {
        let dt = index_dtype_for(indices.len(), shape[1]);
        Ok(CsrMatrix {
            shape,
            indptr: index_tensor(indptr, dt)?,
            indices: index_tensor(indices, dt)?,
            data: data.contiguous_dense()?,
            canonical,
        })
    }

    /// The same pattern (index tensors shared) with other values (kernels keeping a
    /// pattern); `data` must be 1-D with `nnz` elements (`Part` / `DataLength` otherwise).
    pub(crate) fn with_data(&self, data: Tensor) -> Result<CsrMatrix> {
        check_data(self.indices.numel(), &data)?;
        Ok(CsrMatrix {
            data: data.contiguous_dense()?,
            ..self.clone()
        })
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

    /// Whether the columns of every row were sorted and unique when the matrix was built
    /// (always, except from [`try_new_noncanonical`](Self::try_new_noncanonical) with unordered
    /// parts).
    pub fn has_canonical_format(&self) -> bool {
        self.canonical
    }

    /// Re-checks the O4 invariants on the current contents of the parts (sorted unique
    /// columns only when [`has_canonical_format`](Self::has_canonical_format)). The index parts
    /// are shared tensors that must never be written; every kernel that reads them runs
    /// this check (or, for SpMV, bounds checks in its loop), so parts written anyway give
    /// [`SparseError::Modified`] naming the broken invariant, never a panic or a wrong result.
    ///
    /// ```
    /// use tessera::{CsrMatrix, Tensor};
    /// let data = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    /// let m = CsrMatrix::try_new([1, 2], vec![0, 1], vec![1], data).unwrap();
    /// assert!(m.validate().is_ok());
    /// m.indices().fill_(5).unwrap(); // breaks the contract: column 5 of 2
    /// assert!(m.validate().is_err());
    /// assert!(m.to_dense().is_err());
    /// ```
    pub fn validate(&self) -> Result<()> {
        self.check_parts(false).map(|_| ())
    }

    /// `indptr` and `indices` widened to `i64`, after [`validate`](Self::validate)'s checks
    /// on the same contents (the read guards, one per storage, are held through the check and
    /// the copy).
    pub(crate) fn checked_index_vecs(&self) -> Result<(Vec<i64>, Vec<i64>)> {
        self.check_parts(true)
    }

    /// [`validate`](Self::validate)'s checks, then with `widen` the index parts as `i64`
    /// (empty vectors without it, so validating copies nothing).
    fn check_parts(&self, widen: bool) -> Result<(Vec<i64>, Vec<i64>)> {
        with_index!(self.index_dtype(), I => {
            with_slices::<I, _>(&self.indptr, &self.indices, |p, i| {
                check_csr(self.shape, p, i, &self.data, self.canonical)
                    .map_err(SparseError::modified)?;
                let wide = |s: &[I]| -> Result<Vec<i64>> {
                    match widen {
                        true => alloc::collect(s.len(), s.iter().map(|v| v.to_i64())),
                        false => Ok(Vec::new()),
                    }
                };
                Ok::<_, TesseraError>((wide(p)?, wide(i)?))
            })?
        })
    }

    /// A dense copy.
    ///
    /// Errors: `ShapeOverflow` if `rows * cols` overflows, `Allocation` if the dense copy
    /// cannot be allocated, `Sparse(Modified)` for parts written after construction.
    pub fn to_dense(&self) -> Result<Tensor> {
        let [rows, cols] = self.shape;
        alloc::mul(rows, cols, "csr to_dense")?;
        let (indptr, indices) = self.checked_index_vecs()?;
        let out = Tensor::zeros(&self.shape, self.data.dtype())?;
        with_dtype!(self.data.dtype(), T => {
            // A fresh storage: no other guard on it can exist.
            let mut dense = out.dense_storage()?.write::<T>()?;
            with_slice::<T, _>(&self.data, |vals| {
                for r in 0..rows {
                    for k in indptr[r] as usize..indptr[r + 1] as usize {
                        dense[r * cols + indices[k] as usize] = vals[k];
                    }
                }
            })?;
        });
        Ok(out)
    }

    /// Rows `start..end` (SciPy `m[start:end]`); the values are copied. Only the selected
    /// rows' pointers and columns are re-checked (see [`validate`](Self::validate)).
    pub fn rows_slice(&self, start: usize, end: usize) -> Result<CsrMatrix> {
        if start > end || end > self.shape[0] {
            return Err(ErrorKind::Index(
                format!(
                    "csr row range {start}..{end} is out of bounds for {} rows",
                    self.shape[0]
                )
                .into(),
            )
            .into());
        }
        let cols = self.shape[1];
        let (new_ptr, idx, lo, hi) = with_index!(self.index_dtype(), I => {
            with_slices::<I, _>(&self.indptr, &self.indices, |p, i| {
                let window = p.get(start..=end).ok_or_else(|| {
                    SparseError::IndptrLength { expected: self.shape[0] + 1, got: p.len() }
                        .modified()
                })?;
                check_rows(start, window, i, cols, self.canonical).map_err(SparseError::modified)?;
                // Checked: the window's pointers are non-decreasing and within `i`.
                let (lo, hi) = (window[0].to_usize(), window[end - start].to_usize());
                let ptr = alloc::collect(window.len(), window.iter().map(|v| (v.to_usize() - lo) as i64))?;
                let idx = alloc::collect(hi - lo, i[lo..hi].iter().map(|c| c.to_i64()))?;
                Ok::<_, TesseraError>((ptr, idx, lo, hi))
            })??
        });
        let data = with_dtype!(self.data.dtype(), T => {
            let v = with_slice::<T, _>(&self.data, |s| {
                s.get(lo..hi).map(|v| alloc::collect(v.len(), v.iter().copied()))
            })?;
            values(v.ok_or_else(|| SparseError::DataLength { indices: hi, data: self.nnz() }.modified())??)?
        });
        Self::from_trusted([end - start, cols], new_ptr, idx, data, self.canonical)
    }

    /// A copy without the explicitly stored zeros.
    pub fn eliminate_zeros(&self) -> Result<CsrMatrix> {
        let (indptr, indices) = self.checked_index_vecs()?;
        with_dtype!(self.data.dtype(), T => {
            // Sized up front (rows + 1 pointers, at most nnz kept), so no push reallocates.
            let mut p = alloc::with_capacity(indptr.len())?;
            let (mut i, mut d) = (alloc::with_capacity(indices.len())?, alloc::with_capacity(indices.len())?);
            p.push(0i64);
            with_slice::<T, _>(&self.data, |vals| {
                for r in 0..self.shape[0] {
                    for k in indptr[r] as usize..indptr[r + 1] as usize {
                        if vals[k] != T::default() {
                            i.push(indices[k]);
                            d.push(vals[k]);
                        }
                    }
                    p.push(i.len() as i64);
                }
            })?;
            Self::from_trusted(self.shape, p, i, values(d)?, self.canonical)
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
) -> std::result::Result<(), SparseError> {
    let [rows, cols] = shape;
    if data.rank() != 1 {
        // Reported before the index parts, as the first violation.
        return check_data(0, data);
    }
    let Some(ptrs) = rows.checked_add(1) else {
        return Err(SparseError::Part(format!(
            "csr shape {shape:?}: rows + 1 row pointers overflow"
        )));
    };
    if indptr.len() != ptrs {
        return Err(SparseError::IndptrLength {
            expected: ptrs,
            got: indptr.len(),
        });
    }
    if indptr[0] != I::default() {
        return Err(SparseError::IndptrStart(indptr[0].to_i64()));
    }
    // Decreasing and out-of-range pointers (and the columns) are checked by `check_rows`, in
    // one pass over `indptr`; then its end and the data length.
    check_rows(0, indptr, indices, cols, canonical)?;
    let nnz = indices.len();
    if indptr[rows].to_i64() != nnz as i64 {
        return Err(SparseError::IndptrEnd {
            end: indptr[rows].to_i64(),
            nnz,
        });
    }
    check_data(nnz, data)
}

/// Checks that the values `data` of a CSR matrix with `nnz` stored elements are 1-D of length
/// `nnz`.
fn check_data(nnz: usize, data: &Tensor) -> std::result::Result<(), SparseError> {
    if data.rank() != 1 {
        return Err(SparseError::Part(format!(
            "csr data must be 1-D, got shape {:?}",
            data.shape()
        )));
    }
    if data.numel() != nnz {
        return Err(SparseError::DataLength {
            indices: nnz,
            data: data.numel(),
        });
    }
    Ok(())
}

/// Checks the rows `first..first + ptr.len() - 1` whose pointers are `ptr` (a window of
/// `indptr`) against `idx` (all of `indices`): pointers within `[0, nnz]` and non-decreasing,
/// columns in `[0, cols)`, and sorted and unique per row when `canonical`. One pass over the
/// window's pointers and stored columns; on success every `idx[ptr[k]..ptr[k + 1]]` is valid.
fn check_rows<I: CsrIndex>(
    first: usize,
    ptr: &[I],
    idx: &[I],
    cols: usize,
    canonical: bool,
) -> std::result::Result<(), SparseError> {
    let nnz = idx.len();
    let in_range = |at: usize, p: I| match usize::try_from(p.to_i64()) {
        Ok(v) if v <= nnz => Ok(v),
        _ => Err(SparseError::IndptrOutOfRange {
            row: at,
            ptr: p.to_i64(),
            nnz,
        }),
    };
    let Some((&p0, rest)) = ptr.split_first() else {
        return Ok(());
    };
    let mut s = in_range(first, p0)?;
    for (k, &p) in rest.iter().enumerate() {
        let row = first + k;
        if p.to_i64() < s as i64 {
            return Err(SparseError::IndptrDecreasing {
                row,
                from: s as i64,
                to: p.to_i64(),
            });
        }
        let e = in_range(row + 1, p)?;
        let cols_of_row = &idx[s..e];
        for (j, &c) in cols_of_row.iter().enumerate() {
            let col = c.to_i64();
            if col < 0 || col as usize >= cols {
                return Err(SparseError::ColumnOutOfRange { row, col, cols });
            }
            if canonical && j > 0 {
                let prev = cols_of_row[j - 1].to_i64();
                if prev == col {
                    return Err(SparseError::DuplicateColumn { row, col });
                }
                if prev > col {
                    return Err(SparseError::UnsortedColumns {
                        row,
                        prev,
                        next: col,
                    });
                }
            }
        }
        s = e;
    }
    Ok(())
}
