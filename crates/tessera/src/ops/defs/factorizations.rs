//! The matrix factorizations of the standard's `linalg` extension (kernels: `linalg/`, on
//! faer; docs/design.md L4-L7): `det`, `slogdet`, `inv`, `solve`, `cholesky`, `eigh`,
//! `eigvalsh`, `svd`, `svdvals`, `qr`. Each reads the last two dims as a stack of matrices.
//! Gradient rules (real matrices): `factorization_grads.rs`; `qr` has none.

use super::factorization_grads as grads;
use super::shape_ops::NoParams;
use crate::autograd::Saves;
use crate::error::Result;
use crate::layout::broadcast_shapes;
use crate::linalg::{self, matrix_dims, real_dtype, result_dtype};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::stype::{StypeDecision, TensorMeta};
use crate::promote::result_type;
use crate::tensor::Tensor;

op_params! {
    /// Parameters of `cholesky`.
    pub struct CholeskyParams {
        /// Return the upper factor `U` (`U^H U = a`) instead of the lower `L`.
        upper: bool = false;
    }
}

op_params! {
    /// Parameters of `svd`.
    pub struct SvdParams {
        /// Square `U` and `Vh` (`[m, m]`, `[n, n]`) instead of the reduced ones.
        full_matrices: bool = true;
    }
}

op_params! {
    /// Parameters of `qr`.
    pub struct QrParams {
        /// The complete factorization (`Q` `[m, m]`, `R` `[m, n]`) instead of the reduced one.
        complete: bool = false;
    }
}

const WHY: &str = "the gradient of qr is not built (issue 18 lists the differentiable functions)";

/// The input and the first output.
const X_Y: Saves = Saves {
    inputs: &[0],
    outputs: &[0],
};
/// Both outputs (eigh's values and vectors).
const Y1_Y2: Saves = Saves {
    inputs: &[],
    outputs: &[0, 1],
};
/// svd's U and Vh.
const U_VH: Saves = Saves {
    inputs: &[],
    outputs: &[0, 2],
};

fn dims(batch: &[usize], tail: &[usize]) -> Vec<usize> {
    let mut d = batch.to_vec();
    d.extend_from_slice(tail);
    d
}

/// Output metas of a square-matrix function: `tails[i]` after the batch dims, in the result
/// dtype (or its real dtype where `real[i]`).
fn square(m: &TensorMeta, what: &str, tails: &[(&[usize], bool)]) -> Result<Vec<TensorMeta>> {
    let (batch, _, _) = matrix_dims(&m.shape, what, true)?;
    let d = result_dtype(m.dtype);
    Ok(tails
        .iter()
        .map(|&(t, real)| TensorMeta::dense(dims(&batch, t), if real { real_dtype(d) } else { d }))
        .collect())
}

fn n_of(m: &TensorMeta) -> usize {
    m.shape.last().copied().unwrap_or(0)
}

fn infer_solve(_: &NoParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let (batch_a, n, _) = matrix_dims(&m[0].shape, "solve", true)?;
    let d = result_dtype(result_type(m[0].dtype, m[1].dtype)?);
    let shape = if m[1].shape.len() == 1 {
        dims(&batch_a, &[n])
    } else {
        let (batch_b, _, k) = matrix_dims(&m[1].shape, "solve", false)?;
        let batch = broadcast_shapes(&batch_a, &batch_b)?;
        dims(&batch, &[n, k])
    };
    Ok(vec![TensorMeta::dense(shape, d)])
}

fn infer_svd(p: &SvdParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let (batch, r, c) = matrix_dims(&m[0].shape, "svd", false)?;
    let k = r.min(c);
    let (ur, vr) = if p.full_matrices { (r, c) } else { (k, k) };
    let d = result_dtype(m[0].dtype);
    Ok(vec![
        TensorMeta::dense(dims(&batch, &[r, ur]), d),
        TensorMeta::dense(dims(&batch, &[k]), real_dtype(d)),
        TensorMeta::dense(dims(&batch, &[vr, c]), d),
    ])
}

fn infer_svdvals(_: &NoParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let (batch, r, c) = matrix_dims(&m[0].shape, "svdvals", false)?;
    Ok(vec![TensorMeta::dense(
        dims(&batch, &[r.min(c)]),
        real_dtype(result_dtype(m[0].dtype)),
    )])
}

fn infer_qr(p: &QrParams, m: &[TensorMeta]) -> Result<Vec<TensorMeta>> {
    let (batch, r, c) = matrix_dims(&m[0].shape, "qr", false)?;
    let k = if p.complete { r } else { r.min(c) };
    let d = result_dtype(m[0].dtype);
    Ok(vec![
        TensorMeta::dense(dims(&batch, &[r, k]), d),
        TensorMeta::dense(dims(&batch, &[k, c]), d),
    ])
}

fn one(t: Tensor) -> Result<Vec<Tensor>> {
    Ok(vec![t])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<NoParams>::new(
            "det",
            "The determinant of each square matrix in the last two dims (LU with partial pivoting; 1 for 0 x 0).",
            &["x"],
            &["det"],
            |_, m| square(&m[0], "det", &[(&[], false)]),
            |_, x| one(linalg::det(&x[0])?),
        )
        .backward("gA = g det(A) A^-T", X_Y, grads::det_backward),
    );
    r.add(
        OpDef::<NoParams>::new(
            "slogdet",
            "The sign (unit modulus for complex; 0 when singular) and natural log of the absolute value (-inf when singular) of each determinant.",
            &["x"],
            &["sign", "logabsdet"],
            |_, m| square(&m[0], "slogdet", &[(&[], false), (&[], true)]),
            |_, x| {
                let (s, l) = linalg::slogdet(&x[0])?;
                Ok(vec![s, l])
            },
        )
        .stype(|_, s| StypeDecision::dense_only(s, 2))
        .backward("gA = g_logabsdet A^-T (the sign has no gradient)", Saves::X, grads::slogdet_backward),
    );
    r.add(
        OpDef::<NoParams>::new(
            "inv",
            "The inverse of each square matrix; a singular one is a LinAlg error.",
            &["x"],
            &["inverse"],
            |_, m| {
                let n = n_of(&m[0]);
                square(&m[0], "inv", &[(&[n, n], false)])
            },
            |_, x| one(linalg::inv(&x[0])?),
        )
        .backward("gA = -Y^T g Y^T", Saves::Y, grads::inv_backward),
    );
    r.add(
        OpDef::<NoParams>::new(
            "solve",
            "The solution of a @ x = b for each square matrix of a: b is a vector [n] when 1-D, else a stack [.., n, k] whose batch dims broadcast with a's; a singular matrix is a LinAlg error.",
            &["a", "b"],
            &["x"],
            infer_solve,
            |_, x| one(linalg::solve(&x[0], &x[1])?),
        )
        .backward("gB = solve(A^T, g), gA = -gB X^T, each summed over its broadcast batch dims", X_Y, grads::solve_backward),
    );
    r.add(
        OpDef::<CholeskyParams>::new(
            "cholesky",
            "The Cholesky factor of each Hermitian positive-definite matrix: lower L with L L^H = x (from x's lower triangle), or upper U with U^H U = x; a matrix that is not positive definite is a LinAlg error.",
            &["x"],
            &["factor"],
            |_, m| {
                let n = n_of(&m[0]);
                square(&m[0], "cholesky", &[(&[n, n], false)])
            },
            |p, x| one(linalg::cholesky(&x[0], p.upper)?),
        )
        .backward("G = L^-T Phi(L^T gL) L^-1 (Phi: lower triangle, diagonal halved), symmetrised and folded onto the triangle read", Saves::Y, |p: &CholeskyParams, ctx| grads::cholesky_backward(p.upper, ctx)),
    );
    r.add(
        OpDef::<NoParams>::new(
            "eigh",
            "The eigenvalues (ascending, real) and eigenvectors (columns) of each Hermitian matrix, read from its lower triangle.",
            &["x"],
            &["eigenvalues", "eigenvectors"],
            |_, m| {
                let n = n_of(&m[0]);
                square(&m[0], "eigh", &[(&[n], true), (&[n, n], false)])
            },
            |_, x| {
                let (w, v) = linalg::eigh(&x[0], true)?;
                Ok(vec![w, v.ok_or_else(missing)?])
            },
        )
        .stype(|_, s| StypeDecision::dense_only(s, 2))
        .backward("G = V (diag(gw) + F o (V^T gV)) V^T, F_ij = 1 / (w_j - w_i), symmetrised and folded onto the lower triangle", Y1_Y2, grads::eigh_backward),
    );
    r.add(
        OpDef::<NoParams>::new(
            "eigvalsh",
            "The eigenvalues (ascending, real) of each Hermitian matrix, read from its lower triangle.",
            &["x"],
            &["eigenvalues"],
            |_, m| {
                let n = n_of(&m[0]);
                square(&m[0], "eigvalsh", &[(&[n], true)])
            },
            |_, x| one(linalg::eigh(&x[0], false)?.0),
        )
        .backward("G = V diag(gw) V^T (V recomputed), folded onto the lower triangle", X_Y, grads::eigvalsh_backward),
    );
    r.add(
        OpDef::<SvdParams>::new(
            "svd",
            "The singular value decomposition x = U diag(S) Vh of each matrix: S descending and real; U [m, m] and Vh [n, n] with full_matrices, else [m, k] and [k, n] (k = min(m, n)).",
            &["x"],
            &["U", "S", "Vh"],
            infer_svd,
            |p, x| {
                let (s, f) = linalg::svd(&x[0], true, p.full_matrices)?;
                let (u, vh) = f.ok_or_else(missing)?;
                Ok(vec![u, s, vh])
            },
        )
        .stype(|_, s| StypeDecision::dense_only(s, 3))
        .backward("gA = U diag(gS) Vh; a gradient reaching U or Vh is an error (not built)", U_VH, |_: &SvdParams, ctx| grads::singular_values_backward(ctx, true)),
    );
    r.add(
        OpDef::<NoParams>::new(
            "svdvals",
            "The singular values (descending, real) of each matrix.",
            &["x"],
            &["S"],
            infer_svdvals,
            |_, x| one(linalg::svd(&x[0], false, false)?.0),
        )
        .backward(
            "gA = U diag(gS) Vh (U, Vh recomputed)",
            Saves::X,
            |_: &NoParams, ctx| grads::singular_values_backward(ctx, false),
        ),
    );
    r.add(
        OpDef::<QrParams>::new(
            "qr",
            "The QR factorization of each matrix: Q with orthonormal columns and upper triangular R, [m, k] and [k, n] (k = min(m, n)), or [m, m] and [m, n] when complete.",
            &["x"],
            &["Q", "R"],
            infer_qr,
            |p, x| {
                let (q, r) = linalg::qr(&x[0], p.complete)?;
                Ok(vec![q, r])
            },
        )
        .stype(|_, s| StypeDecision::dense_only(s, 2))
        .not_differentiable(WHY),
    );
}

fn missing() -> crate::error::TesseraError {
    crate::error::ErrorKind::InvalidArgument("factorization returned no factors".into()).into()
}
