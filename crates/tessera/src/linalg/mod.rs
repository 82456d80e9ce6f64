//! Matrix factorizations on faer (docs/design.md L4-L7): the kernels of the registry ops
//! `det`, `slogdet`, `inv`, `solve` (`lu.rs`), `cholesky`, `eigh`, `eigvalsh`, `svd`,
//! `svdvals` and `qr` (`decompose.rs`).
//!
//! Every kernel reads the last two dims of its input as a batch of matrices: the input is made
//! contiguous in its compute dtype ([`compute_dtype`]: float32, float64, complex64 or
//! complex128), each matrix is copied into a faer matrix, factored, and its results written
//! into new tensors of the same batch shape. Matrices of a batch run in parallel on rayon's
//! pool when there are several and they are small; a large one uses faer's own parallelism
//! (faer's global setting: rayon's global pool, sequential in a forked child, set by the
//! at-fork handler in `kernels::parallel`). Results that are real by definition
//! (eigenvalues, singular values, `log|det|`) are computed in the compute dtype and returned
//! in its real dtype.

mod decompose;
mod lu;

pub(crate) use decompose::{cholesky, eigh, qr, svd};
pub(crate) use lu::{det, inv, slogdet, solve};

use faer::{Mat, MatRef};
use num_complex::Complex;
use rayon::prelude::*;

use crate::arrayfns::lanes::read;
use crate::complex::{C128, C64};
use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};
use crate::tensor::Tensor;

/// An element type faer factors: its faer counterpart `F` and back.
pub(crate) trait Field: Element {
    /// The faer element (`f32`, `f64`, `c32`, `c64`).
    type F: faer::traits::ComplexField + Copy;
    fn to_faer(self) -> Self::F;
    fn from_faer(v: Self::F) -> Self;
    /// The complex conjugate (the value itself for real types).
    fn conj(self) -> Self;
    /// A real faer value (an eigenvalue, a singular value) as `Self`.
    fn from_real(v: <Self::F as faer::traits::ComplexField>::Real) -> Self;
}

impl Field for f32 {
    fn from_real(v: <Self::F as faer::traits::ComplexField>::Real) -> f32 {
        v
    }
    type F = f32;
    fn to_faer(self) -> f32 {
        self
    }
    fn from_faer(v: f32) -> f32 {
        v
    }
    fn conj(self) -> f32 {
        self
    }
}

impl Field for f64 {
    fn from_real(v: <Self::F as faer::traits::ComplexField>::Real) -> f64 {
        v
    }
    type F = f64;
    fn to_faer(self) -> f64 {
        self
    }
    fn from_faer(v: f64) -> f64 {
        v
    }
    fn conj(self) -> f64 {
        self
    }
}

impl Field for C64 {
    fn from_real(v: <Self::F as faer::traits::ComplexField>::Real) -> C64 {
        C64(Complex::new(v, 0.0))
    }
    type F = Complex<f32>;
    fn to_faer(self) -> Complex<f32> {
        self.0
    }
    fn from_faer(v: Complex<f32>) -> C64 {
        C64(v)
    }
    fn conj(self) -> C64 {
        C64(self.0.conj())
    }
}

impl Field for C128 {
    fn from_real(v: <Self::F as faer::traits::ComplexField>::Real) -> C128 {
        C128(Complex::new(v, 0.0))
    }
    type F = Complex<f64>;
    fn to_faer(self) -> Complex<f64> {
        self.0
    }
    fn from_faer(v: Complex<f64>) -> C128 {
        C128(v)
    }
    fn conj(self) -> C128 {
        C128(self.0.conj())
    }
}

/// Runs `$body` with `$T` bound to the [`Field`] type of the compute dtype `$d`.
macro_rules! with_field {
    ($d:expr, $T:ident => $body:expr) => {
        match $d {
            crate::dtype::DType::F32 => {
                type $T = f32;
                $body
            }
            crate::dtype::DType::C64 => {
                type $T = crate::complex::C64;
                $body
            }
            crate::dtype::DType::C128 => {
                type $T = crate::complex::C128;
                $body
            }
            _ => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_field;

/// The dtype a factorization computes in: float32, float64, complex64 and complex128 as they
/// are, float16 / bfloat16 in float32 (results cast back), integers and bool in float64 (as
/// NumPy).
pub(crate) fn compute_dtype(d: DType) -> DType {
    match d {
        DType::F32 | DType::F64 | DType::C64 | DType::C128 => d,
        DType::F16 | DType::BF16 => DType::F32,
        _ => DType::F64,
    }
}

/// The dtype of a function's results for input dtype `d`: the input's floating dtype, or
/// float64 for integers and bool.
pub(crate) fn result_dtype(d: DType) -> DType {
    if d.is_float() || d.is_complex() {
        d
    } else {
        DType::F64
    }
}

/// The real dtype of the same precision (eigenvalues, singular values).
pub(crate) fn real_dtype(d: DType) -> DType {
    match d {
        DType::C64 => DType::F32,
        DType::C128 => DType::F64,
        d => d,
    }
}

/// `(batch dims, m, n)` of a stack of matrices; `square` requires `m == n`.
pub(crate) fn matrix_dims(
    shape: &[usize],
    what: &str,
    square: bool,
) -> Result<(Vec<usize>, usize, usize)> {
    let r = shape.len();
    if r < 2 {
        return Err(ErrorKind::InvalidShape(format!(
            "{what} needs a stack of matrices (rank 2 or more), got shape {shape:?}"
        ))
        .into());
    }
    let (m, n) = (shape[r - 2], shape[r - 1]);
    if square && m != n {
        return Err(ErrorKind::InvalidShape(format!(
            "{what} needs square matrices in the last two dims, got shape {shape:?}"
        ))
        .into());
    }
    Ok((shape[..r - 2].to_vec(), m, n))
}

/// A linear-algebra failure: NumPy's `LinAlgError`.
pub(crate) fn linalg_error(msg: impl Into<String>) -> TesseraError {
    ErrorKind::LinAlg(msg.into()).into()
}

/// `x` made contiguous in its compute dtype.
fn prepared(x: &Tensor) -> Result<Tensor> {
    x.astype(compute_dtype(x.dtype()))?.contiguous()
}

/// The faer copy of one row-major `m x n` matrix.
fn to_mat<T: Field>(src: &[T], m: usize, n: usize) -> Mat<T::F> {
    Mat::from_fn(m, n, |i, j| src[i * n + j].to_faer())
}

/// Writes a faer matrix into a row-major slice (`conj_transpose`: its conjugate transpose).
fn put<T: Field>(a: MatRef<'_, T::F>, out: &mut [T], conj_transpose: bool) {
    if conj_transpose {
        let r = a.nrows();
        for j in 0..a.ncols() {
            for i in 0..r {
                out[j * r + i] = T::from_faer(a[(i, j)]).conj();
            }
        }
    } else {
        let c = a.ncols();
        for i in 0..a.nrows() {
            for j in 0..c {
                out[i * c + j] = T::from_faer(a[(i, j)]);
            }
        }
    }
}

/// Whether a matrix holds only finite values (the iterative eigen and singular value solvers
/// are refused anything else, as LAPACK's do not converge on it).
fn all_finite<T: Field>(src: &[T]) -> bool {
    src.iter().all(|v| {
        let (re, im) = v.to_complex();
        re.is_finite() && im.is_finite()
    })
}

/// Runs `f(index, matrix, m, n, outputs)` on each matrix of the contiguous stack `x`
/// (`[batch.., m, n]`, element type `T`, row-major) with one output slice per entry of `tails` (each output is `[batch.., tail..]` of type
/// `T`); returns the outputs. Matrices run in parallel when there are several small ones.
fn per_matrix<T: Field>(
    x: &Tensor,
    tails: &[Vec<usize>],
    f: impl Fn(usize, &[T], usize, usize, &mut [&mut [T]]) -> Result<()> + Sync,
) -> Result<Vec<Tensor>> {
    let shape = x.shape();
    let r = shape.len();
    let (m, n) = (shape[r - 2], shape[r - 1]);
    let batch = &shape[..r - 2];
    let count: usize = batch.iter().product();
    let outs: Vec<Tensor> = tails
        .iter()
        .map(|t| {
            let mut d = batch.to_vec();
            d.extend_from_slice(t);
            Tensor::for_overwrite(&d, T::DTYPE)
        })
        .collect::<Result<_>>()?;
    let storages = outs
        .iter()
        .map(|o| o.dense_storage())
        .collect::<Result<Vec<_>>>()?;
    let mut guards: Vec<_> = storages.iter().map(|s| s.write_as::<T>()).collect();
    let sizes: Vec<usize> = tails.iter().map(|t| t.iter().product()).collect();
    // One list of output slices per matrix.
    let mut parts: Vec<Vec<&mut [T]>> = (0..count)
        .map(|_| Vec::with_capacity(tails.len()))
        .collect();
    for (g, &size) in guards.iter_mut().zip(&sizes) {
        let buf: &mut [T] = &mut g[..];
        let mut rest = buf;
        for p in parts.iter_mut() {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(size);
            p.push(head);
            rest = tail;
        }
    }
    read::<T, _>(x, |src| {
        let one = |(k, mut p): (usize, Vec<&mut [T]>)| {
            f(k, &src[k * m * n..(k + 1) * m * n], m, n, &mut p)
        };
        if count > 1 && m * n <= 128 * 128 && crate::kernels::parallel::enabled() {
            parts.into_par_iter().enumerate().try_for_each(one)
        } else {
            parts.into_iter().enumerate().try_for_each(one)
        }
    })??;
    drop(guards);
    Ok(outs)
}
