//! Building canonical CSR from unsorted COO triples (docs/design.md O4: sort, sum duplicates).

use super::{alloc, values, CsrMatrix, SparseError};
use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::scalar_math::Arith;

/// Canonical CSR from `(row, col, value)` triples in any order; duplicates are summed
/// (SciPy `coo_matrix(...).tocsr()`). Out-of-range coordinates are errors.
///
/// ```
/// use tessera::sparse::csr_from_triplets;
/// let m = csr_from_triplets([2, 2], &[1, 0, 1], &[0, 1, 0], &[1.0f64, 2.0, 3.0]).unwrap();
/// assert_eq!(m.to_dense().unwrap().to_vec::<f64>().unwrap(), vec![0., 2., 4., 0.]);
/// ```
pub fn csr_from_triplets<T: Element + Arith>(
    shape: [usize; 2],
    rows: &[i64],
    cols: &[i64],
    vals: &[T],
) -> Result<CsrMatrix> {
    if rows.len() != cols.len() || rows.len() != vals.len() {
        return Err(SparseError::Part(format!(
            "coo triples need equal lengths, got {} rows, {} cols, {} values",
            rows.len(),
            cols.len(),
            vals.len()
        ))
        .into());
    }
    for (&r, &c) in rows.iter().zip(cols) {
        if r < 0 || r as usize >= shape[0] {
            return Err(SparseError::Part(format!(
                "coo row {r} is out of range for {} rows",
                shape[0]
            ))
            .into());
        }
        if c < 0 || c as usize >= shape[1] {
            return Err(SparseError::ColumnOutOfRange {
                row: r as usize,
                col: c,
                cols: shape[1],
            }
            .into());
        }
    }
    let mut order: Vec<usize> = alloc::collect(rows.len(), 0..rows.len())?;
    order.sort_unstable_by_key(|&k| (rows[k], cols[k]));
    let mut indptr = alloc::filled(alloc::add(shape[0], 1, "csr row pointers")?, 0i64)?;
    // At most one stored element per triple, so no push reallocates.
    let (mut idx, mut data): (Vec<i64>, Vec<T>) = (
        alloc::with_capacity(rows.len())?,
        alloc::with_capacity(rows.len())?,
    );
    let mut last: Option<(i64, i64)> = None;
    for k in order {
        let key = (rows[k], cols[k]);
        if last == Some(key) {
            let v = data.last_mut().expect("a previous entry exists");
            *v = Arith::add(*v, vals[k]);
        } else {
            idx.push(cols[k]);
            data.push(vals[k]);
            indptr[rows[k] as usize + 1] += 1;
            last = Some(key);
        }
    }
    for r in 0..shape[0] {
        indptr[r + 1] += indptr[r];
    }
    CsrMatrix::from_trusted(shape, indptr, idx, values(data)?, true)
}
