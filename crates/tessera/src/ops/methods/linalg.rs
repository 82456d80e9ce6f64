//! The parts of the standard's `linalg` extension that need no factorization (docs/design.md
//! L1-L3): `diagonal` (a view), `trace`, `outer`, `cross`, `vector_norm`, `matrix_norm`
//! (Frobenius, the 1 / inf norms, and on the singular values the 2 and nuclear norms) and
//! `matrix_power` (negative powers through `inv`), each built from registry ops, so they run
//! every kernel's dtype and record autograd through their pieces (the factorizations are
//! `factorizations.rs`).

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::layout::normalize_axis;
use crate::promote::float_result;
use crate::tensor::Tensor;

/// Which matrix norm [`Tensor::matrix_norm`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MatrixNorm {
    /// `sqrt(Σ |a_ij|²)` (the default).
    Frobenius,
    /// The largest (`max == true`) or smallest column sum of `|a_ij|` (`ord = ±1`).
    Columns {
        /// Largest (`1`) rather than smallest (`-1`).
        max: bool,
    },
    /// The largest or smallest row sum of `|a_ij|` (`ord = ±inf`).
    Rows {
        /// Largest (`inf`) rather than smallest (`-inf`).
        max: bool,
    },
    /// The largest or smallest singular value (`ord = ±2`).
    Spectral {
        /// Largest (`2`) rather than smallest (`-2`).
        max: bool,
    },
    /// The sum of the singular values (`ord = "nuc"`).
    Nuclear,
}

fn need_matrix(t: &Tensor, what: &str) -> Result<(usize, usize)> {
    let r = t.rank();
    if r < 2 {
        return Err(ErrorKind::InvalidShape(format!(
            "{what} needs a matrix (rank 2 or more), got shape {:?}",
            t.shape()
        ))
        .into());
    }
    Ok((t.shape()[r - 2], t.shape()[r - 1]))
}

/// `t` converted to a floating dtype when it is integer or bool (norms are real-valued).
fn floating(t: &Tensor) -> Result<Tensor> {
    let d = t.dtype();
    if d.is_float() || d.is_complex() {
        Ok(t.clone())
    } else {
        t.astype(float_result(d))
    }
}

impl Tensor {
    /// The `offset`-th diagonal of each matrix in the last two dims (positive: above the main
    /// diagonal): a view of shape `[..., k]`, `k` clamped to 0 past the matrix.
    ///
    /// ```
    /// use tessera::Tensor;
    /// let t = Tensor::from_vec((0..12).collect::<Vec<i64>>(), &[3, 4]).unwrap();
    /// assert_eq!(t.diagonal(0).unwrap().to_vec::<i64>().unwrap(), vec![0, 5, 10]);
    /// assert_eq!(t.diagonal(1).unwrap().to_vec::<i64>().unwrap(), vec![1, 6, 11]);
    /// assert_eq!(t.diagonal(-2).unwrap().to_vec::<i64>().unwrap(), vec![8]);
    /// ```
    pub fn diagonal(&self, offset: isize) -> Result<Tensor> {
        let (m, n) = need_matrix(self, "diagonal")?;
        let r = self.rank();
        let (sm, sn) = (self.strides()[r - 2], self.strides()[r - 1]);
        let skip = offset.unsigned_abs();
        let (len, start) = if offset >= 0 {
            (n.saturating_sub(skip).min(m), skip as isize * sn)
        } else {
            (m.saturating_sub(skip).min(n), skip as isize * sm)
        };
        let start = if len == 0 { 0 } else { start };
        let mut dims = self.shape()[..r - 2].to_vec();
        dims.push(len);
        let mut strides = self.strides()[..r - 2].to_vec();
        strides.push(sm + sn);
        let base = self.layout().offset() as isize + start;
        let base = usize::try_from(base).map_err(|_| {
            ErrorKind::OutOfBounds(format!("diagonal {offset} starts before the storage"))
        })?;
        self.as_strided(&dims, &strides, base)
    }

    /// The sum of the `offset`-th diagonal of each matrix, in `dtype` when given (else the
    /// dtype `sum` gives).
    pub fn trace(&self, offset: isize, dtype: Option<DType>) -> Result<Tensor> {
        let d = self.diagonal(offset)?;
        let d = match dtype {
            Some(t) => d.astype(t)?,
            None => d,
        };
        let s = d.sum(Some(&[-1]), false)?;
        match dtype {
            Some(t) if s.dtype() != t => s.astype(t),
            _ => Ok(s),
        }
    }

    /// The outer product of two 1-d tensors: `[m, n]`, `self[i] * other[j]`.
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        if self.rank() != 1 || other.rank() != 1 {
            return Err(ErrorKind::InvalidShape(format!(
                "outer needs two 1-d tensors, got shapes {:?} and {:?}",
                self.shape(),
                other.shape()
            ))
            .into());
        }
        self.unsqueeze(1)?.mul(&other.unsqueeze(0)?)
    }

    /// The cross product of 3-element vectors along `axis` (the other dims broadcast):
    /// `[a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0]`.
    pub fn cross(&self, other: &Tensor, axis: isize) -> Result<Tensor> {
        let rank = self.rank().max(other.rank());
        let a = normalize_axis(axis, rank)? as isize - rank as isize;
        let (ia, ib) = (
            normalize_axis(a, self.rank())?,
            normalize_axis(a, other.rank())?,
        );
        if self.shape()[ia] != 3 || other.shape()[ib] != 3 {
            return Err(ErrorKind::InvalidShape(format!(
                "cross needs size 3 along axis {axis}, got shapes {:?} and {:?}",
                self.shape(),
                other.shape()
            ))
            .into());
        }
        let x = |k: usize| self.narrow(a, k, 1);
        let y = |k: usize| other.narrow(a, k, 1);
        let part =
            |i: usize, j: usize| -> Result<Tensor> { x(i)?.mul(&y(j)?)?.sub(&x(j)?.mul(&y(i)?)?) };
        let parts = [part(1, 2)?, part(2, 0)?, part(0, 1)?];
        let joined = Tensor::concat(&parts, Some(a))?;
        Ok(joined)
    }

    /// The vector norm over `axes` (all elements when None): `ord` is a `p` (`sum(|x|^p)^(1/p)`),
    /// `inf` / `-inf` (largest / smallest `|x|`) or `0` (the count of non-zero elements).
    /// Integer and bool inputs compute in float64; complex ones give their real dtype.
    pub fn vector_norm(&self, axes: Option<&[isize]>, keepdims: bool, ord: f64) -> Result<Tensor> {
        let a = floating(self)?.abs()?;
        let a = if a.dtype().is_complex() { a.real()? } else { a };
        if ord == f64::INFINITY {
            return a.max(axes, keepdims);
        }
        if ord == f64::NEG_INFINITY {
            return a.min(axes, keepdims);
        }
        if ord == 0.0 {
            return a.count_nonzero(axes, keepdims)?.astype(a.dtype());
        }
        if ord == 1.0 {
            return a.sum(axes, keepdims);
        }
        if ord == 2.0 {
            return a.square()?.sum(axes, keepdims)?.sqrt();
        }
        if ord.is_nan() {
            return Err(ErrorKind::InvalidArgument("vector_norm: ord is NaN".into()).into());
        }
        a.pow_scalar(ord)?
            .sum(axes, keepdims)?
            .pow_scalar(1.0 / ord)
    }

    /// The matrix norm of each matrix in the last two dims ([`MatrixNorm`]); `keepdims` keeps
    /// them as size-1 dims.
    pub fn matrix_norm(&self, keepdims: bool, ord: MatrixNorm) -> Result<Tensor> {
        need_matrix(self, "matrix_norm")?;
        // |a_ij| as real values.
        let abs = || -> Result<Tensor> {
            let a = floating(self)?.abs()?;
            if a.dtype().is_complex() {
                a.real()
            } else {
                Ok(a)
            }
        };
        let extreme = |t: Tensor, axis: isize, max: bool| {
            if max {
                t.max(Some(&[axis]), true)
            } else {
                t.min(Some(&[axis]), true)
            }
        };
        let out = match ord {
            MatrixNorm::Frobenius => abs()?.square()?.sum(Some(&[-2, -1]), true)?.sqrt()?,
            MatrixNorm::Columns { max } => extreme(abs()?.sum(Some(&[-2]), true)?, -1, max)?,
            MatrixNorm::Rows { max } => extreme(abs()?.sum(Some(&[-1]), true)?, -2, max)?,
            MatrixNorm::Spectral { max } => extreme(self.svdvals()?, -1, max)?.unsqueeze(-1)?,
            MatrixNorm::Nuclear => self.svdvals()?.sum(Some(&[-1]), true)?.unsqueeze(-1)?,
        };
        if keepdims {
            Ok(out)
        } else {
            out.squeeze(Some(&[-2, -1]))
        }
    }

    /// Each square matrix raised to the power `n` by repeated squaring (`n = 0`: the identity;
    /// `n < 0`: the inverse raised to `-n`, a `LinAlg` error for a singular matrix).
    pub fn matrix_power(&self, n: i64) -> Result<Tensor> {
        let (m, k) = need_matrix(self, "matrix_power")?;
        if m != k {
            return Err(ErrorKind::InvalidShape(format!(
                "matrix_power needs square matrices, got shape {:?}",
                self.shape()
            ))
            .into());
        }
        if n == 0 {
            let eye = Tensor::eye(m, m, 0, self.dtype())?;
            return eye.broadcast_to(self.shape())?.copy();
        }
        let base = if n < 0 { self.inv()? } else { self.clone() };
        let (mut result, mut base, mut e) = (None::<Tensor>, base, n.unsigned_abs());
        while e > 0 {
            if e & 1 == 1 {
                result = Some(match result {
                    None => base.clone(),
                    Some(r) => r.matmul(&base)?,
                });
            }
            e >>= 1;
            if e > 0 {
                base = base.matmul(&base)?;
            }
        }
        match result {
            Some(r) if n == 1 => r.copy(),
            Some(r) if n == -1 => Ok(r),
            Some(r) => Ok(r),
            None => Err(ErrorKind::InvalidArgument("matrix_power: no product".into()).into()),
        }
    }
}
