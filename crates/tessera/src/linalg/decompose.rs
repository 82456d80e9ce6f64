//! The decompositions: `cholesky`, `eigh` / `eigvalsh`, `svd` / `svdvals` and `qr`
//! (docs/design.md L6), each on faer's solver of that name.
//!
//! Eigenvectors and singular vectors are unique only up to a sign (a unit phase for complex
//! input) and, for repeated values, a rotation: faer's choice may differ from LAPACK's, as
//! LAPACK builds differ among themselves; the factorizations reconstruct their input either
//! way. The iterative solvers (`eigh`, `svd`) refuse input with inf or NaN (`LinAlg`, as
//! NumPy's "did not converge").

use faer::Side;

use super::{
    all_finite, linalg_error, matrix_dims, per_matrix, prepared, put, real_dtype, result_dtype,
    to_mat, with_field, Field,
};
use crate::error::Result;
use crate::tensor::Tensor;

/// `t` in the real dtype of `d` (`t` holds real values in a dtype of `d`'s precision).
fn real_part(t: &Tensor, d: crate::dtype::DType) -> Result<Tensor> {
    let t = if t.dtype().is_complex() {
        t.real()?
    } else {
        t.clone()
    };
    t.astype(real_dtype(d))
}

/// Writes the `n x n` identity.
fn identity<T: Field>(out: &mut [T], n: usize) {
    for (i, v) in out.iter_mut().enumerate() {
        *v = T::from_f64(if i % (n + 1) == 0 { 1.0 } else { 0.0 });
    }
}

/// The Cholesky factor of each Hermitian positive-definite matrix: lower `L` with
/// `L L^H = a` (from `a`'s lower triangle), or with `upper` the upper `U = L^H` with
/// `U^H U = a` (from the upper triangle, as NumPy); `LinAlg` when a matrix is not positive
/// definite.
pub(crate) fn cholesky(x: &Tensor, upper: bool) -> Result<Tensor> {
    matrix_dims(x.shape(), "cholesky", true)?;
    let a = prepared(x)?;
    let n = a.shape()[a.rank() - 1];
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &[vec![n, n]], |_, src, n, _, o| {
        let side = if upper { Side::Upper } else { Side::Lower };
        let llt = to_mat::<T>(src, n, n)
            .llt(side)
            .map_err(|_| linalg_error("cholesky: matrix is not positive definite"))?;
        let l = llt.L();
        for i in 0..n {
            for j in 0..n {
                let v = if j <= i { T::from_faer(l[(i, j)]) } else { T::default() };
                if upper {
                    o[0][j * n + i] = v.conj();
                } else {
                    o[0][i * n + j] = v;
                }
            }
        }
        Ok(())
    }))?;
    out[0].astype(result_dtype(x.dtype()))
}

/// The eigenvalues (ascending, real) of each Hermitian matrix, read from its lower triangle,
/// and with `vectors` the eigenvectors (`[.., n, n]`, column `i` for value `i`).
pub(crate) fn eigh(x: &Tensor, vectors: bool) -> Result<(Tensor, Option<Tensor>)> {
    matrix_dims(x.shape(), "eigh", true)?;
    let a = prepared(x)?;
    let n = a.shape()[a.rank() - 1];
    let tails = if vectors {
        vec![vec![n], vec![n, n]]
    } else {
        vec![vec![n]]
    };
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &tails, |_, src, n, _, o| {
        if n == 0 {
            return Ok(());
        }
        if !all_finite(src) {
            return Err(linalg_error("eigh: did not converge (the matrix holds inf or NaN)"));
        }
        let m = to_mat::<T>(src, n, n);
        let fail = |e| linalg_error(format!("eigh: did not converge ({e:?})"));
        if vectors {
            let e = m.self_adjoint_eigen(Side::Lower).map_err(fail)?;
            for (i, v) in e.S().column_vector().iter().enumerate() {
                o[0][i] = T::from_faer(*v);
            }
            put::<T>(e.U(), o[1], false);
        } else {
            for (i, v) in m.self_adjoint_eigenvalues(Side::Lower).map_err(fail)?.into_iter().enumerate() {
                o[0][i] = T::from_real(v);
            }
        }
        Ok(())
    }))?;
    let d = result_dtype(x.dtype());
    let values = real_part(&out[0], d)?;
    let vecs = match out.get(1) {
        Some(v) => Some(v.astype(d)?),
        None => None,
    };
    Ok((values, vecs))
}

/// The singular values (descending, real) of each `m x n` matrix, and with `vectors` the
/// factors `U` and `Vh` of `a = U diag(S) Vh`: `[.., m, m]` and `[.., n, n]` when `full`,
/// else `[.., m, k]` and `[.., k, n]` (`k = min(m, n)`).
pub(crate) fn svd(
    x: &Tensor,
    vectors: bool,
    full: bool,
) -> Result<(Tensor, Option<(Tensor, Tensor)>)> {
    let (_, m, n) = matrix_dims(x.shape(), "svd", false)?;
    let a = prepared(x)?;
    let k = m.min(n);
    let (ur, vr) = if full { (m, n) } else { (k, k) };
    let tails = if vectors {
        vec![vec![k], vec![m, ur], vec![vr, n]]
    } else {
        vec![vec![k]]
    };
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &tails, |_, src, m, n, o| {
        if k == 0 {
            if vectors && full {
                identity(o[1], m);
                identity(o[2], n);
            }
            return Ok(());
        }
        if !all_finite(src) {
            return Err(linalg_error("svd: did not converge (the matrix holds inf or NaN)"));
        }
        let a = to_mat::<T>(src, m, n);
        let fail = |e| linalg_error(format!("svd: did not converge ({e:?})"));
        if vectors {
            let s = if full { a.svd() } else { a.thin_svd() }.map_err(fail)?;
            for (i, v) in s.S().column_vector().iter().enumerate() {
                o[0][i] = T::from_faer(*v);
            }
            put::<T>(s.U(), o[1], false);
            put::<T>(s.V(), o[2], true);
        } else {
            for (i, v) in a.singular_values().map_err(fail)?.into_iter().enumerate() {
                o[0][i] = T::from_real(v);
            }
        }
        Ok(())
    }))?;
    let d = result_dtype(x.dtype());
    let values = real_part(&out[0], d)?;
    let factors = match (out.get(1), out.get(2)) {
        (Some(u), Some(vh)) => Some((u.astype(d)?, vh.astype(d)?)),
        _ => None,
    };
    Ok((values, factors))
}

/// The QR factorization of each `m x n` matrix: `Q` with orthonormal columns and upper
/// triangular `R`, `[.., m, k]` and `[.., k, n]` (`k = min(m, n)`), or with `complete`
/// `[.., m, m]` and `[.., m, n]`.
pub(crate) fn qr(x: &Tensor, complete: bool) -> Result<(Tensor, Tensor)> {
    let (_, m, n) = matrix_dims(x.shape(), "qr", false)?;
    let a = prepared(x)?;
    let k = if complete { m } else { m.min(n) };
    let out = with_field!(a.dtype(), T => per_matrix::<T>(&a, &[vec![m, k], vec![k, n]], |_, src, m, n, o| {
        if m == 0 || n == 0 {
            // Reduced: both factors are empty. Complete: Q is the identity, R zeros.
            if complete {
                identity(o[0], m);
                o[1].fill(T::default());
            }
            return Ok(());
        }
        // R's rows past faer's factor (m > n, complete) are zeros.
        o[1].fill(T::default());
        let f = to_mat::<T>(src, m, n).qr();
        if complete {
            put::<T>(f.compute_Q().as_ref(), o[0], false);
            put::<T>(f.R(), o[1], false);
        } else {
            put::<T>(f.compute_thin_Q().as_ref(), o[0], false);
            put::<T>(f.thin_R(), o[1], false);
        }
        Ok(())
    }))?;
    let d = result_dtype(x.dtype());
    Ok((out[0].astype(d)?, out[1].astype(d)?))
}
