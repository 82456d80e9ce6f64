//! Dense 2-D matrix product `a @ b`.
//!
//! Operands are promoted to a common dtype ([`crate::promote::result_type`]) and made
//! contiguous. The kernel is cache-blocked (row blocks × depth blocks × column blocks, the
//! inner loop an `axpy` over a contiguous row of `b`, which the compiler vectorises for `f32`
//! and `f64`) and runs row blocks in parallel. `f16`/`bf16` accumulate in `f32` and round
//! once; integers wrap on overflow; `bool` is the logical (or, and) product, as NumPy.

use rayon::prelude::*;

use super::Tensor;
use crate::dtype::DType;
use crate::error::{Result, TesseraError};
use crate::kernels::scalar_math::Arith;
use crate::promote::result_type;
use crate::with_dtype;

/// Rows of `a` per parallel task.
const ROW_BLOCK: usize = 64;
/// Depth (shared dim) per block: a `DEPTH_BLOCK × COL_BLOCK` panel of `b` stays in cache.
const DEPTH_BLOCK: usize = 256;
/// Columns per block.
const COL_BLOCK: usize = 512;

impl Tensor {
    /// Matrix product of two 2-D tensors: `[m, k] @ [k, n] -> [m, n]`.
    ///
    /// Errors: `InvalidArgument` unless both operands are 2-D, `ShapeMismatch` when the inner
    /// dims differ, `DType` when the dtypes have no common type.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    /// let b = Tensor::from_slice(&[1f32, 0., 0., 1., 1., 1.], &[3, 2]).unwrap();
    /// let c = a.matmul(&b).unwrap();
    /// assert_eq!(c.shape(), &[2, 2]);
    /// assert_eq!(c.to_vec::<f32>().unwrap(), vec![4., 5., 10., 11.]);
    /// assert!(a.matmul(&a).is_err());
    /// ```
    pub(crate) fn matmul_dense(&self, other: &Tensor) -> Result<Tensor> {
        let (m, k, n) = matmul_dims(self.shape(), other.shape())?;
        let dt = result_type(self.dtype(), other.dtype())?;
        if matches!(dt, DType::F16 | DType::BF16) {
            let a = self.astype_dense(DType::F32)?;
            let b = other.astype_dense(DType::F32)?;
            return a.matmul_dense(&b)?.astype_dense(dt);
        }
        let a = cast_contiguous(self, dt)?;
        let b = cast_contiguous(other, dt)?;
        let out = Tensor::zeros(&[m, n], dt)?;
        with_dtype!(dt, T => {
            // Both operands are contiguous: read them in place (one guard when they share a
            // storage, as in `a.matmul(&a)`; a second read lock could wait behind a writer).
            let ga = a.dense_storage()?.read_as::<T>();
            let gb = if a.shares_storage(&b) { None } else { Some(b.dense_storage()?.read_as::<T>()) };
            let (oa, ob) = (a.layout().offset(), b.layout().offset());
            // `get` rather than indexing: an empty operand may carry any offset.
            let av = ga.get(oa..oa + m * k).unwrap_or(&[]);
            let bv = gb.as_deref().unwrap_or(&ga).get(ob..ob + k * n).unwrap_or(&[]);
            let mut cv = out.dense_storage()?.write_as::<T>();
            gemm::<T>(av, bv, &mut cv, m, k, n);
        });
        Ok(out)
    }
}

/// `(m, k, n)` of a product of shapes `a` and `b`, or a typed error.
pub(crate) fn matmul_dims(a: &[usize], b: &[usize]) -> Result<(usize, usize, usize)> {
    if a.len() != 2 || b.len() != 2 {
        return Err(TesseraError::InvalidArgument(format!(
            "matmul needs two 2-D tensors, got shapes {a:?} and {b:?}"
        )));
    }
    if a[1] != b[0] {
        return Err(TesseraError::ShapeMismatch(
            format!("matmul: inner dims differ in {a:?} @ {b:?}").into(),
        ));
    }
    Ok((a[0], a[1], b[1]))
}

fn cast_contiguous(t: &Tensor, dt: DType) -> Result<Tensor> {
    if t.dtype() == dt {
        t.contiguous_dense()
    } else {
        t.astype_dense(dt)
    }
}

/// `c[m, n] += a[m, k] @ b[k, n]`, all row-major and contiguous.
fn gemm<T: Arith>(a: &[T], b: &[T], c: &mut [T], m: usize, k: usize, n: usize) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let block = |(blk, c_rows): (usize, &mut [T])| {
        let i0 = blk * ROW_BLOCK;
        let rows = c_rows.len() / n;
        for k0 in (0..k).step_by(DEPTH_BLOCK) {
            let k1 = (k0 + DEPTH_BLOCK).min(k);
            for j0 in (0..n).step_by(COL_BLOCK) {
                let j1 = (j0 + COL_BLOCK).min(n);
                for r in 0..rows {
                    let a_row = &a[(i0 + r) * k..(i0 + r + 1) * k];
                    let c_row = &mut c_rows[r * n + j0..r * n + j1];
                    for (kk, &aik) in a_row[k0..k1].iter().enumerate() {
                        let b_row = &b[(k0 + kk) * n + j0..(k0 + kk) * n + j1];
                        for (cv, &bv) in c_row.iter_mut().zip(b_row) {
                            *cv = cv.add(aik.mul(bv));
                        }
                    }
                }
            }
        }
    };
    // Sequential in a forked child (the pool has no threads there) or on a one-thread pool.
    if crate::kernels::parallel::enabled() {
        c.par_chunks_mut(ROW_BLOCK * n).enumerate().for_each(block);
    } else {
        c.chunks_mut(ROW_BLOCK * n).enumerate().for_each(block);
    }
}
