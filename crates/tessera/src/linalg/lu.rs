//! The functions of one LU factorization with partial pivoting (faer's `PartialPivLu`):
//! `det`, `slogdet`, `inv` and `solve` (docs/design.md L5).
//!
//! A matrix is singular for `inv` and `solve` when its `U` factor has an exact zero on the
//! diagonal, LAPACK's `getrf` test that NumPy reports as "Singular matrix"; a nearly singular
//! one gives large values, as there.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use num_complex::Complex;

use super::{
    compute_dtype, linalg_error, matrix_dims, per_matrix, prepared, put, real_dtype, result_dtype,
    to_mat, with_field, Field,
};
use crate::dtype::Element;
use crate::error::{ErrorKind, Result, TesseraError};
use crate::layout::broadcast_shapes;
use crate::promote::result_type;
use crate::tensor::Tensor;

/// Whether `U` has an exact zero on its diagonal.
fn singular<T: Field>(lu: &faer::linalg::solvers::PartialPivLu<T::F>) -> bool {
    let u = lu.U();
    (0..u.nrows()).any(|i| {
        let (re, im) = T::from_faer(u[(i, i)]).to_complex();
        re == 0.0 && im == 0.0
    })
}

/// The determinant of each square matrix (`[.., n, n]` -> `[..]`; 1 for `n == 0`): the
/// product of `U`'s diagonal and the permutation's sign, accumulated in (complex) f64. A zero
/// pivot gives exactly 0 (faer's own `determinant` multiplies in the NaNs that the elimination
/// after a zero pivot leaves in `U`).
pub(crate) fn det(x: &Tensor) -> Result<Tensor> {
    matrix_dims(x.shape(), "det", true)?;
    let a = prepared(x)?;
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &[vec![]], |_, src, n, _, o| {
        let mut d = Complex::new(1.0f64, 0.0);
        if n > 0 {
            let lu = to_mat::<T>(src, n, n).partial_piv_lu();
            let u = lu.U();
            for i in 0..n {
                let (re, im) = T::from_faer(u[(i, i)]).to_complex();
                if re == 0.0 && im == 0.0 {
                    d = Complex::new(0.0, 0.0);
                    break;
                }
                d *= Complex::new(re, im);
            }
            if d.norm() != 0.0 && odd_permutation(lu.P().arrays().0) {
                d = -d;
            }
        }
        o[0][0] = T::from_complex(d.re, d.im);
        Ok(())
    }))?;
    out[0].astype(result_dtype(x.dtype()))
}

/// The sign (a unit complex number for complex input, 0 when singular) and the natural log of
/// the absolute value (-inf when singular) of each determinant, from the LU factors: no
/// overflow for large matrices.
pub(crate) fn slogdet(x: &Tensor) -> Result<(Tensor, Tensor)> {
    matrix_dims(x.shape(), "slogdet", true)?;
    let a = prepared(x)?;
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &[vec![], vec![]], |_, src, n, _, o| {
        let (mut sign, mut log) = (Complex::new(1.0f64, 0.0), 0.0f64);
        if n > 0 {
            let lu = to_mat::<T>(src, n, n).partial_piv_lu();
            let u = lu.U();
            for i in 0..n {
                let (re, im) = T::from_faer(u[(i, i)]).to_complex();
                let d = Complex::new(re, im);
                let abs = d.norm();
                if abs == 0.0 {
                    (sign, log) = (Complex::new(0.0, 0.0), f64::NEG_INFINITY);
                    break;
                }
                sign *= d / abs;
                log += abs.ln();
            }
            if odd_permutation(lu.P().arrays().0) {
                sign = -sign;
            }
        }
        o[0][0] = T::from_complex(sign.re, sign.im);
        o[1][0] = T::from_f64(log);
        Ok(())
    }))?;
    let d = result_dtype(x.dtype());
    let log = out[1].astype(compute_dtype(d))?;
    let log = if log.dtype().is_complex() {
        log.real()?
    } else {
        log
    };
    Ok((out[0].astype(d)?, log.astype(real_dtype(d))?))
}

/// Whether a permutation (as the image of each index) is odd: `n` minus its number of cycles.
fn odd_permutation(p: &[usize]) -> bool {
    let mut seen = vec![false; p.len()];
    let mut cycles = 0;
    for s in 0..p.len() {
        if !seen[s] {
            cycles += 1;
            let mut j = s;
            while !seen[j] {
                seen[j] = true;
                j = p[j];
            }
        }
    }
    (p.len() - cycles) % 2 == 1
}

/// The inverse of each square matrix; `LinAlg` ("singular matrix") when one is singular.
pub(crate) fn inv(x: &Tensor) -> Result<Tensor> {
    matrix_dims(x.shape(), "inv", true)?;
    let a = prepared(x)?;
    let n = a.shape()[a.rank() - 1];
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &[vec![n, n]], |_, src, n, _, o| {
        if n == 0 {
            return Ok(());
        }
        let lu = to_mat::<T>(src, n, n).partial_piv_lu();
        if singular::<T>(&lu) {
            return Err(linalg_error("inv: singular matrix"));
        }
        put::<T>(lu.inverse().as_ref(), o[0], false);
        Ok(())
    }))?;
    out[0].astype(result_dtype(x.dtype()))
}

/// The solution `x` of `a @ x = b` for each square matrix of `a` (`[.., n, n]`): `b` is a
/// vector when it is 1-D (`[n]`, the result `[.., n]`), else a stack of matrices `[.., n, k]`
/// whose batch dims broadcast with `a`'s (the 2024.12 standard's rule, NumPy 2's).
pub(crate) fn solve(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (batch_a, n, _) = matrix_dims(a.shape(), "solve", true)?;
    let vector = b.rank() == 1;
    let (batch, k) = if vector {
        if b.shape()[0] != n {
            return Err(mismatch(a, b));
        }
        (batch_a.clone(), 1)
    } else {
        let (batch_b, nb, k) = matrix_dims(b.shape(), "solve", false)?;
        if nb != n {
            return Err(mismatch(a, b));
        }
        let batch = broadcast_shapes(&batch_a, &batch_b).map_err(|_| mismatch(a, b))?;
        (batch, k)
    };
    let rd = result_dtype(result_type(a.dtype(), b.dtype())?);
    let cd = compute_dtype(rd);
    let dims = |tail: &[usize]| {
        let mut d = batch.clone();
        d.extend_from_slice(tail);
        d
    };
    let a = a.astype(cd)?.broadcast_to(&dims(&[n, n]))?.contiguous()?;
    let b = if vector { b.unsqueeze(-1)? } else { b.clone() };
    let b = b.astype(cd)?.broadcast_to(&dims(&[n, k]))?.contiguous()?;
    let out = with_field!(cd, T => {
        let rhs: Vec<T> = b.to_vec::<T>()?;
        per_matrix::<T>(&a, &[vec![n, k]], |i, src, n, _, o| {
            if n == 0 || k == 0 {
                return Ok(());
            }
            let lu = to_mat::<T>(src, n, n).partial_piv_lu();
            if singular::<T>(&lu) {
                return Err(linalg_error("solve: singular matrix"));
            }
            let r = to_mat::<T>(&rhs[i * n * k..(i + 1) * n * k], n, k);
            put::<T>(lu.solve(r).as_ref(), o[0], false);
            Ok(())
        })
    })?;
    let x = out[0].astype(rd)?;
    if vector {
        x.squeeze(Some(&[-1]))
    } else {
        Ok(x)
    }
}

fn mismatch(a: &Tensor, b: &Tensor) -> TesseraError {
    ErrorKind::InvalidShape(format!(
        "solve: a of shape {:?} and b of shape {:?} do not match (b is [n] or [.., n, k] with \
         batch dims that broadcast with a's)",
        a.shape(),
        b.shape()
    ))
    .into()
}
