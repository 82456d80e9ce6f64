//! `cast_storage` among default, csr and row_sparse (dense to sparse keeps only non-zeros).

use super::{alloc, with_slice, CsrMatrix, RowSparseArray, SparseParts};
use crate::error::{ErrorKind, Result};
use crate::stype::StorageType;
use crate::tensor::Tensor;
use crate::with_dtype;

impl Tensor {
    /// Converts to another storage type: `default`, `csr` (2-D only) or `row_sparse` (rank
    /// at least 1). Casting to the tensor's own storage type returns the same handle; dense
    /// to sparse stores only the non-zero elements (rows for row-sparse).
    ///
    /// ```
    /// use tessera::{StorageType, Tensor};
    /// let d = Tensor::from_vec(vec![0.0f64, 1., 2., 0.], &[2, 2]).unwrap();
    /// let c = d.cast_storage(StorageType::Csr).unwrap();
    /// assert_eq!(c.stype(), StorageType::Csr);
    /// assert_eq!(c.to_vec::<f64>().unwrap(), vec![0., 1., 2., 0.]);
    /// ```
    pub fn cast_storage(&self, to: StorageType) -> Result<Tensor> {
        if self.stype() == to {
            return Ok(self.clone());
        }
        let dense = self.densified()?;
        match to {
            StorageType::Default => Ok(dense),
            StorageType::Csr => Tensor::from_sparse(SparseParts::Csr(dense_to_csr(&dense)?)),
            StorageType::RowSparse => {
                Tensor::from_sparse(SparseParts::RowSparse(dense_to_row_sparse(&dense)?))
            }
        }
    }
}

fn dense_to_csr(d: &Tensor) -> Result<CsrMatrix> {
    let [rows, cols] = match d.shape() {
        &[r, c] => [r, c],
        s => {
            return Err(ErrorKind::InvalidShape(format!(
                "csr storage needs a 2-D tensor, got shape {s:?}"
            ))
            .into())
        }
    };
    let mut indptr = alloc::with_capacity(alloc::add(rows, 1, "csr row pointers")?)?;
    with_dtype!(d.dtype(), T => {
        let (idx, vals) = with_slice::<T, _>(d, |v| {
            indptr.push(0i64);
            let (mut idx, mut vals) = (Vec::new(), Vec::new());
            for r in 0..rows {
                for (c, &x) in v[r * cols..(r + 1) * cols].iter().enumerate() {
                    if x != T::default() {
                        idx.push(c as i64);
                        vals.push(x);
                    }
                }
                indptr.push(idx.len() as i64);
            }
            (idx, vals)
        })?;
        CsrMatrix::from_trusted([rows, cols], indptr, idx, super::values(vals)?, true)
    })
}

fn dense_to_row_sparse(d: &Tensor) -> Result<RowSparseArray> {
    if d.rank() == 0 {
        return Err(ErrorKind::InvalidShape(
            "row_sparse storage needs rank >= 1, got a 0-d tensor".into(),
        )
        .into());
    }
    let shape = d.shape().to_vec();
    let w: usize = shape[1..].iter().product();
    with_dtype!(d.dtype(), T => {
        let (rows, block) = with_slice::<T, _>(d, |v| {
            let (mut rows, mut block) = (Vec::new(), Vec::new());
            for r in 0..shape[0] {
                let row = &v[r * w..(r + 1) * w];
                if row.iter().any(|x| *x != T::default()) {
                    rows.push(r as i64);
                    block.extend_from_slice(row);
                }
            }
            (rows, block)
        })?;
        let mut dims = vec![rows.len()];
        dims.extend_from_slice(&shape[1..]);
        RowSparseArray::from_trusted(&shape, rows, Tensor::from_vec(block, &dims)?)
    })
}
