//! The factorizations of the standard's `linalg` extension as `Tensor` methods (registry ops
//! `det`, `slogdet`, `inv`, `solve`, `cholesky`, `eigh`, `eigvalsh`, `svd`, `svdvals`, `qr`;
//! docs/design.md L4-L7), and what is built on them: `pinv` and `matrix_rank` (L7).
//!
//! Each reads the last two dims as a stack of matrices. Float32, float64, complex64 and
//! complex128 compute in their own precision, float16 / bfloat16 in float32 (results cast
//! back), integers and bool in float64; eigenvalues, singular values and `log|det|` are real.

use std::slice;

use super::call1;
use crate::dtype::DType;
use crate::dtype_info::finfo;
use crate::error::Result;
use crate::ops::defs::{CholeskyParams, NoParams, QrParams, SvdParams};
use crate::ops::params::OpParams;
use crate::ops::registry::registry;
use crate::tensor::arith::{BinaryOp, CompareOp};
use crate::tensor::Tensor;

/// Runs the registered op `name` and returns all its outputs.
fn call<P: OpParams>(name: &str, p: &P, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    registry().def::<P>(name)?.call(p, inputs)
}

/// Exactly `N` outputs.
fn outputs<const N: usize>(v: Vec<Tensor>) -> Result<[Tensor; N]> {
    let got = v.len();
    v.try_into().map_err(|_| {
        crate::error::ErrorKind::InvalidArgument(format!("expected {N} outputs, got {got}")).into()
    })
}

/// Which singular values `s` (`[.., k]`, `k > 0`) of `x` count as non-zero for `pinv` and
/// `matrix_rank`: those above `rtol` times the largest, `rtol` defaulting to the standard's
/// `max(m, n)` times the machine epsilon of the real dtype. A bool tensor of `s`'s shape.
fn above_cutoff(x: &Tensor, s: &Tensor, rtol: Option<f64>) -> Result<Tensor> {
    let rtol = match rtol {
        Some(t) => t,
        None => {
            let r = x.rank();
            let (m, n) = (x.shape()[r - 2], x.shape()[r - 1]);
            m.max(n) as f64 * finfo(s.dtype())?.eps
        }
    };
    let cutoff = s
        .max(Some(&[-1]), true)?
        .binary_scalar(rtol, BinaryOp::Mul)?;
    s.compare(&cutoff, CompareOp::Gt)
}

impl Tensor {
    /// The determinant of each square matrix in the last two dims.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[4.0f64, 2.0, 2.0, 3.0], &[2, 2]).unwrap();
    /// assert!((a.det().unwrap().to_vec::<f64>().unwrap()[0] - 8.0).abs() < 1e-12);
    /// ```
    pub fn det(&self) -> Result<Tensor> {
        call1("det", &NoParams {}, slice::from_ref(self))
    }

    /// `(sign, logabsdet)` of each determinant: the sign (a unit complex number for complex
    /// input; 0 when singular) and `ln |det|` (-inf when singular), without overflow.
    pub fn slogdet(&self) -> Result<(Tensor, Tensor)> {
        let [s, l] = outputs(call("slogdet", &NoParams {}, slice::from_ref(self))?)?;
        Ok((s, l))
    }

    /// The inverse of each square matrix; [`ErrorKind::LinAlg`](crate::ErrorKind::LinAlg)
    /// when one is singular.
    pub fn inv(&self) -> Result<Tensor> {
        call1("inv", &NoParams {}, slice::from_ref(self))
    }

    /// The solution `x` of `self @ x = b` for each square matrix: a 1-D `b` is one vector
    /// `[n]`, otherwise `b` is a stack `[.., n, k]` whose batch dims broadcast with `self`'s;
    /// `LinAlg` when a matrix is singular.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let a = Tensor::from_slice(&[4.0f64, 2.0, 2.0, 3.0], &[2, 2]).unwrap();
    /// let x = a.solve(&Tensor::from_slice(&[2.0f64, 1.0], &[2]).unwrap()).unwrap();
    /// let x = x.to_vec::<f64>().unwrap();
    /// assert!((x[0] - 0.5).abs() < 1e-12 && x[1].abs() < 1e-12);
    /// ```
    pub fn solve(&self, b: &Tensor) -> Result<Tensor> {
        call1("solve", &NoParams {}, &[self.clone(), b.clone()])
    }

    /// The Cholesky factor of each Hermitian positive-definite matrix: lower `L` (`L L^H =
    /// self`), or with `upper` the upper `U` (`U^H U = self`); `LinAlg` when one is not
    /// positive definite.
    pub fn cholesky(&self, upper: bool) -> Result<Tensor> {
        call1("cholesky", &CholeskyParams { upper }, slice::from_ref(self))
    }

    /// `(eigenvalues, eigenvectors)` of each Hermitian matrix (its lower triangle is read):
    /// the values ascending and real, the vectors as columns.
    pub fn eigh(&self) -> Result<(Tensor, Tensor)> {
        let [w, v] = outputs(call("eigh", &NoParams {}, slice::from_ref(self))?)?;
        Ok((w, v))
    }

    /// The eigenvalues of each Hermitian matrix, ascending and real.
    pub fn eigvalsh(&self) -> Result<Tensor> {
        call1("eigvalsh", &NoParams {}, slice::from_ref(self))
    }

    /// `(U, S, Vh)` with `self = U diag(S) Vh` for each matrix: `S` descending and real; `U`
    /// `[.., m, m]` and `Vh` `[.., n, n]` when `full_matrices`, else `[.., m, k]` and `[.., k,
    /// n]` (`k = min(m, n)`).
    pub fn svd(&self, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
        let [u, s, vh] = outputs(call(
            "svd",
            &SvdParams { full_matrices },
            slice::from_ref(self),
        )?)?;
        Ok((u, s, vh))
    }

    /// The singular values of each matrix, descending and real.
    pub fn svdvals(&self) -> Result<Tensor> {
        call1("svdvals", &NoParams {}, slice::from_ref(self))
    }

    /// `(Q, R)` of each matrix: `Q` with orthonormal columns, `R` upper triangular; `[.., m,
    /// k]` and `[.., k, n]` (`k = min(m, n)`), or `[.., m, m]` and `[.., m, n]` when
    /// `complete`.
    pub fn qr(&self, complete: bool) -> Result<(Tensor, Tensor)> {
        let [q, r] = outputs(call("qr", &QrParams { complete }, slice::from_ref(self))?)?;
        Ok((q, r))
    }

    /// The Moore-Penrose pseudo-inverse of each matrix (`[.., m, n]` -> `[.., n, m]`), from
    /// its SVD: singular values at most `rtol` times the largest are taken as zero. `rtol`
    /// defaults to `max(m, n)` times the dtype's epsilon (the standard's default).
    pub fn pinv(&self, rtol: Option<f64>) -> Result<Tensor> {
        let (u, s, vh) = self.svd(false)?;
        let r = self.rank();
        if s.shape()[r - 2] == 0 {
            let mut dims = self.shape().to_vec();
            dims.swap(r - 2, r - 1);
            return Tensor::zeros(&dims, u.dtype());
        }
        let keep = above_cutoff(self, &s, rtol)?;
        let zero = Tensor::zeros(&[], s.dtype())?;
        let safe = Tensor::where_(&keep, &s, &Tensor::full(&[], 1.0, s.dtype())?)?;
        let inv_s = Tensor::where_(&keep, &safe.rbinary_scalar(1.0, BinaryOp::Div)?, &zero)?;
        // pinv = V diag(1/s) U^H = Vh^H @ (inv_s[.., :, None] * U^H).
        let uh = u.conj()?.matrix_transpose()?;
        let scaled = uh.mul(&inv_s.unsqueeze(-1)?.astype(uh.dtype())?)?;
        vh.conj()?.matrix_transpose()?.matmul(&scaled)
    }

    /// The rank of each matrix: the number of singular values above `rtol` times the largest
    /// (`rtol` defaulting as in [`Tensor::pinv`]); int64, `[..]`.
    pub fn matrix_rank(&self, rtol: Option<f64>) -> Result<Tensor> {
        let s = self.svdvals()?;
        if s.shape()[s.rank() - 1] == 0 {
            return Tensor::zeros(&s.shape()[..s.rank() - 1], DType::I64);
        }
        above_cutoff(self, &s, rtol)?
            .astype(DType::I64)?
            .sum(Some(&[-1]), false)
    }
}
