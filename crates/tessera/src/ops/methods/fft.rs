//! The standard's `fft` extension as `Tensor` methods (docs/design.md F1-F4): the one-axis
//! transforms run the registry ops `fft`, `ifft`, `rfft`, `irfft`; the Hermitian ones, the
//! n-dimensional ones and the shifts are built from them (NumPy's definitions), and
//! `fftfreq` / `rfftfreq` are constructors.

use std::slice;

use super::call1;
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::fft::FftNorm;
use crate::layout::normalize_axis;
use crate::ops::defs::FftParams;
use crate::tensor::Tensor;

/// The axes and lengths of an n-dimensional transform (NumPy's `_cook_nd_args`): `axes`
/// default to the last `s.len()` axes (all axes when `s` is None too), `s` to the lengths
/// of `axes` (for `irfftn` the last one to `2 (m - 1)`).
fn nd_args(
    x: &Tensor,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    real_inverse: bool,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let rank = x.rank();
    let axes: Vec<usize> = match (axes, s) {
        (Some(a), _) => a
            .iter()
            .map(|&a| normalize_axis(a, rank))
            .collect::<Result<_>>()?,
        (None, Some(s)) if s.len() > rank => {
            return Err(ErrorKind::InvalidArgument(format!(
                "s has {} entries for a rank-{rank} input",
                s.len()
            ))
            .into())
        }
        (None, Some(s)) => (rank - s.len()..rank).collect(),
        (None, None) => (0..rank).collect(),
    };
    let mut seen = axes.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != axes.len() {
        return Err(ErrorKind::InvalidArgument(format!("repeated axis in {axes:?}")).into());
    }
    let s: Vec<usize> = match s {
        Some(s) if s.len() != axes.len() => {
            return Err(ErrorKind::InvalidArgument(format!(
                "s has {} entries for {} axes",
                s.len(),
                axes.len()
            ))
            .into())
        }
        Some(s) => s.to_vec(),
        None => {
            let mut s: Vec<usize> = axes.iter().map(|&a| x.shape()[a]).collect();
            if let (true, Some(last)) = (real_inverse, s.last_mut()) {
                *last = 2 * last.saturating_sub(1);
            }
            s
        }
    };
    Ok((s, axes))
}

impl Tensor {
    fn transform(&self, op: &str, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        call1(op, &FftParams { n, axis, norm }, slice::from_ref(self))
    }

    /// The discrete Fourier transform along `axis` with `n` points (the input cut or
    /// zero-padded; None: the axis length), scaled for `norm`. Complex output: complex64 for
    /// single-precision input, complex128 otherwise.
    ///
    /// ```
    /// use tessera::{FftNorm, Tensor, C128};
    /// let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap();
    /// let y = x.fft(None, -1, FftNorm::Backward).unwrap().to_vec::<C128>().unwrap();
    /// assert_eq!(y, vec![C128::new(10.0, 0.0), C128::new(-2.0, 2.0), C128::new(-2.0, 0.0), C128::new(-2.0, -2.0)]);
    /// ```
    pub fn fft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.transform("fft", n, axis, norm)
    }

    /// The inverse of [`Tensor::fft`].
    pub fn ifft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.transform("ifft", n, axis, norm)
    }

    /// The transform of real input: the `n / 2 + 1` non-negative frequencies along `axis`.
    pub fn rfft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.transform("rfft", n, axis, norm)
    }

    /// The inverse of [`Tensor::rfft`]: `n` real values (None: `2 (m - 1)` for `m`
    /// frequencies).
    pub fn irfft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.transform("irfft", n, axis, norm)
    }

    /// The transform of a signal with Hermitian symmetry (its `n / 2 + 1` first values given):
    /// real output, `irfft(conj(x))` with the scaling directions swapped (NumPy's `hfft`).
    pub fn hfft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.conj()?.irfft(n, axis, norm.swapped())
    }

    /// The inverse of [`Tensor::hfft`]: `conj(rfft(x))` with the scaling directions swapped.
    pub fn ihfft(&self, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Tensor> {
        self.rfft(n, axis, norm.swapped())?.conj()
    }

    /// The n-dimensional transform over `axes` (default: all, or the last `s.len()`) with
    /// lengths `s` (default: the input's), forward or `inverse`.
    pub fn fftn(
        &self,
        s: Option<&[usize]>,
        axes: Option<&[isize]>,
        norm: FftNorm,
        inverse: bool,
    ) -> Result<Tensor> {
        let (s, axes) = nd_args(self, s, axes, false)?;
        let mut y = self.clone();
        for (&n, &a) in s.iter().zip(&axes).rev() {
            y = if inverse {
                y.ifft(Some(n), a as isize, norm)?
            } else {
                y.fft(Some(n), a as isize, norm)?
            };
        }
        if axes.is_empty() {
            // No axis transformed: the input as a complex array, as NumPy returns it.
            let c = if matches!(
                self.dtype(),
                DType::F32 | DType::F16 | DType::BF16 | DType::C64
            ) {
                DType::C64
            } else {
                DType::C128
            };
            return y.astype(c);
        }
        Ok(y)
    }

    /// The n-dimensional transform of real input: `rfft` over the last of `axes`, then `fft`
    /// over the others.
    pub fn rfftn(
        &self,
        s: Option<&[usize]>,
        axes: Option<&[isize]>,
        norm: FftNorm,
    ) -> Result<Tensor> {
        let (s, axes) = nd_args(self, s, axes, false)?;
        let (Some(&last_n), Some(&last_axis)) = (s.last(), axes.last()) else {
            return Err(ErrorKind::InvalidArgument("rfftn needs at least one axis".into()).into());
        };
        let mut y = self.rfft(Some(last_n), last_axis as isize, norm)?;
        for (&n, &a) in s.iter().zip(&axes).rev().skip(1) {
            y = y.fft(Some(n), a as isize, norm)?;
        }
        Ok(y)
    }

    /// The inverse of [`Tensor::rfftn`]: `ifft` over all of `axes` but the last, then
    /// `irfft` over the last (its length `s[-1]`, default `2 (m - 1)`).
    pub fn irfftn(
        &self,
        s: Option<&[usize]>,
        axes: Option<&[isize]>,
        norm: FftNorm,
    ) -> Result<Tensor> {
        let (s, axes) = nd_args(self, s, axes, true)?;
        let (Some(&last_n), Some(&last_axis)) = (s.last(), axes.last()) else {
            return Err(ErrorKind::InvalidArgument("irfftn needs at least one axis".into()).into());
        };
        let mut y = self.clone();
        for (&n, &a) in s.iter().zip(&axes).take(axes.len() - 1) {
            y = y.ifft(Some(n), a as isize, norm)?;
        }
        y.irfft(Some(last_n), last_axis as isize, norm)
    }

    /// The zero frequency moved to the centre of `axes` (all when None): a roll by `n / 2`
    /// along each (NumPy's `fftshift`); `inverse` undoes it (`ifftshift`, a roll by
    /// `-(n / 2)`).
    pub fn fftshift(&self, axes: Option<&[isize]>, inverse: bool) -> Result<Tensor> {
        let axes: Vec<isize> = match axes {
            Some(a) => a.to_vec(),
            None => (0..self.rank() as isize).collect(),
        };
        let shift: Vec<isize> = axes
            .iter()
            .map(|&a| {
                let n = self.shape()[normalize_axis(a, self.rank())?] as isize;
                Ok(if inverse { -(n / 2) } else { n / 2 })
            })
            .collect::<Result<_>>()?;
        if axes.is_empty() {
            return self.copy();
        }
        self.roll(&shift, Some(&axes))
    }

    /// The sample frequencies of a transform of `n` points with spacing `d`:
    /// `[0, 1, ..., ⌈n/2⌉ - 1, -⌊n/2⌋, ..., -1] / (d n)` (NumPy's `fftfreq`), in `dtype`
    /// (a real floating dtype).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let f = Tensor::fftfreq(5, 0.5, DType::F64).unwrap();
    /// assert_eq!(f.to_vec::<f64>().unwrap(), vec![0.0, 0.4, 0.8, -0.8, -0.4]);
    /// ```
    pub fn fftfreq(n: usize, d: f64, dtype: DType) -> Result<Tensor> {
        freqs(n, d, dtype, false)
    }

    /// The non-negative sample frequencies of `rfft` of `n` points: `[0, 1, ..., ⌊n/2⌋] / (d n)`.
    pub fn rfftfreq(n: usize, d: f64, dtype: DType) -> Result<Tensor> {
        freqs(n, d, dtype, true)
    }
}

fn freqs(n: usize, d: f64, dtype: DType, half: bool) -> Result<Tensor> {
    if n == 0 {
        return Err(ErrorKind::InvalidArgument("n must be positive".into()).into());
    }
    if !dtype.is_float() {
        return Err(ErrorKind::InvalidArgument(format!(
            "frequencies are real floating-point values, not {dtype}"
        ))
        .into());
    }
    let scale = 1.0 / (d * n as f64);
    let values: Vec<f64> = if half {
        (0..=n / 2).map(|k| k as f64 * scale).collect()
    } else {
        let positive = n.div_ceil(2);
        (0..n)
            .map(|k| {
                let k = if k < positive {
                    k as f64
                } else {
                    k as f64 - n as f64
                };
                k * scale
            })
            .collect()
    };
    let len = values.len();
    Tensor::from_vec(values, &[len])?.astype(dtype)
}
