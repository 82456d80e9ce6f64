//! Bindings of the Rust `fft` methods (docs/design.md F1-F4) for `tessera.fft`; the Python
//! module checks the standard's signatures and calls these.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tessera::{DType, FftNorm, Tensor};

use crate::convert::to_tensor;
use crate::dtype::parse_opt_dtype;
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

fn norm_arg(norm: &str) -> PyResult<FftNorm> {
    match norm {
        "backward" => Ok(FftNorm::Backward),
        "ortho" => Ok(FftNorm::Ortho),
        "forward" => Ok(FftNorm::Forward),
        other => Err(PyValueError::new_err(format!(
            "norm must be \"backward\", \"ortho\" or \"forward\", got {other:?}"
        ))),
    }
}

fn run(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    f: impl FnOnce(&Tensor) -> tessera::Result<Tensor> + Send,
) -> PyResult<PyTensor> {
    let t = to_tensor(x, None, None)?;
    heavy(py, t.numel(), || f(&t)).py().map(Into::into)
}

/// A one-axis transform: `kind` is fft, ifft, rfft, irfft, hfft or ihfft.
#[pyfunction]
fn _transform(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    n: Option<usize>,
    axis: isize,
    norm: &str,
) -> PyResult<PyTensor> {
    let norm = norm_arg(norm)?;
    let f: fn(&Tensor, Option<usize>, isize, FftNorm) -> tessera::Result<Tensor> = match kind {
        "fft" => Tensor::fft,
        "ifft" => Tensor::ifft,
        "rfft" => Tensor::rfft,
        "irfft" => Tensor::irfft,
        "hfft" => Tensor::hfft,
        "ihfft" => Tensor::ihfft,
        other => return Err(PyValueError::new_err(format!("unknown transform {other}"))),
    };
    run(py, x, |t| f(t, n, axis, norm))
}

/// An n-dimensional transform: `kind` is fftn, ifftn, rfftn or irfftn.
#[pyfunction]
fn _transform_nd(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    s: Option<Vec<usize>>,
    axes: Option<Vec<isize>>,
    norm: &str,
) -> PyResult<PyTensor> {
    let norm = norm_arg(norm)?;
    let (s, axes) = (s.as_deref(), axes.as_deref());
    match kind {
        "fftn" => run(py, x, |t| t.fftn(s, axes, norm, false)),
        "ifftn" => run(py, x, |t| t.fftn(s, axes, norm, true)),
        "rfftn" => run(py, x, |t| t.rfftn(s, axes, norm)),
        "irfftn" => run(py, x, |t| t.irfftn(s, axes, norm)),
        other => Err(PyValueError::new_err(format!("unknown transform {other}"))),
    }
}

/// `fftshift` (or `ifftshift` when `inverse`) over `axes` (all when None).
#[pyfunction]
fn _fftshift(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axes: Option<Vec<isize>>,
    inverse: bool,
) -> PyResult<PyTensor> {
    run(py, x, |t| t.fftshift(axes.as_deref(), inverse))
}

/// `fftfreq` (or `rfftfreq` when `half`) of `n` points with spacing `d`.
#[pyfunction]
fn _fftfreq(n: usize, d: f64, dtype: Option<&Bound<'_, PyAny>>, half: bool) -> PyResult<PyTensor> {
    let dtype = parse_opt_dtype(dtype)?.unwrap_or(DType::F64);
    let r = if half {
        Tensor::rfftfreq(n, d, dtype)
    } else {
        Tensor::fftfreq(n, d, dtype)
    };
    r.py().map(Into::into)
}

/// Adds the bindings to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_transform, m)?)?;
    m.add_function(wrap_pyfunction!(_transform_nd, m)?)?;
    m.add_function(wrap_pyfunction!(_fftshift, m)?)?;
    m.add_function(wrap_pyfunction!(_fftfreq, m)?)?;
    Ok(())
}
