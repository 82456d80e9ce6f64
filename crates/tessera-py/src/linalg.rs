//! Bindings of the Rust `linalg` methods (docs/design.md L1-L7) for `tessera.linalg`; the
//! Python module checks the standard's signatures, builds the named tuples and calls these.
//! The factorizations run with the GIL released (their work grows as n³).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use tessera::{MatrixNorm, Tensor};

use crate::convert::to_tensor;
use crate::dtype::parse_opt_dtype;
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

fn tensor(x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    to_tensor(x, None, None)
}

fn released<R: Send>(py: Python<'_>, f: impl FnOnce() -> tessera::Result<R> + Send) -> PyResult<R> {
    py.detach(f).py()
}

/// A one-input, one-output function: det, inv, eigvalsh or svdvals.
#[pyfunction]
fn _linalg1(py: Python<'_>, kind: &str, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let f: fn(&Tensor) -> tessera::Result<Tensor> = match kind {
        "det" => Tensor::det,
        "inv" => Tensor::inv,
        "eigvalsh" => Tensor::eigvalsh,
        "svdvals" => Tensor::svdvals,
        other => return Err(PyValueError::new_err(format!("unknown function {other}"))),
    };
    let t = tensor(x)?;
    released(py, || f(&t)).map(Into::into)
}

/// The functions with several outputs: slogdet, eigh, svd (`flag`: full_matrices) and qr
/// (`flag`: complete).
#[pyfunction]
fn _linalg_n(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    flag: bool,
) -> PyResult<Vec<PyTensor>> {
    let t = tensor(x)?;
    let outs: Vec<Tensor> = match kind {
        "slogdet" => released(py, || t.slogdet().map(|(a, b)| vec![a, b]))?,
        "eigh" => released(py, || t.eigh().map(|(a, b)| vec![a, b]))?,
        "svd" => released(py, || t.svd(flag).map(|(a, b, c)| vec![a, b, c]))?,
        "qr" => released(py, || t.qr(flag).map(|(a, b)| vec![a, b]))?,
        other => return Err(PyValueError::new_err(format!("unknown function {other}"))),
    };
    Ok(outs.into_iter().map(Into::into).collect())
}

/// `cholesky(x, upper)`.
#[pyfunction]
fn _cholesky(py: Python<'_>, x: &Bound<'_, PyAny>, upper: bool) -> PyResult<PyTensor> {
    let t = tensor(x)?;
    released(py, || t.cholesky(upper)).map(Into::into)
}

/// `solve(a, b)`.
#[pyfunction]
fn _solve(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let (a, b) = (tensor(a)?, tensor(b)?);
    released(py, || a.solve(&b)).map(Into::into)
}

/// `pinv(x, rtol)` or, with `rank`, `matrix_rank(x, rtol)`.
#[pyfunction]
fn _pinv_rank(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    rtol: Option<f64>,
    rank: bool,
) -> PyResult<PyTensor> {
    let t = tensor(x)?;
    if rank {
        released(py, || t.matrix_rank(rtol)).map(Into::into)
    } else {
        released(py, || t.pinv(rtol)).map(Into::into)
    }
}

/// `matrix_power(x, n)`.
#[pyfunction]
fn _matrix_power(py: Python<'_>, x: &Bound<'_, PyAny>, n: i64) -> PyResult<PyTensor> {
    let t = tensor(x)?;
    released(py, || t.matrix_power(n)).map(Into::into)
}

/// `matrix_norm(x, keepdims, ord)` with `ord` one of "fro", "nuc", ±1, ±2, ±inf.
#[pyfunction]
fn _matrix_norm(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    keepdims: bool,
    ord: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let ord = if let Ok(s) = ord.extract::<String>() {
        match s.as_str() {
            "fro" => MatrixNorm::Frobenius,
            "nuc" => MatrixNorm::Nuclear,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "invalid matrix norm ord {s:?}"
                )))
            }
        }
    } else if ord.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "matrix_norm: ord must be a number or a string",
        ));
    } else {
        let v: f64 = ord
            .extract()
            .map_err(|_| PyTypeError::new_err("matrix_norm: ord must be a number or a string"))?;
        match v {
            1.0 => MatrixNorm::Columns { max: true },
            -1.0 => MatrixNorm::Columns { max: false },
            2.0 => MatrixNorm::Spectral { max: true },
            -2.0 => MatrixNorm::Spectral { max: false },
            f64::INFINITY => MatrixNorm::Rows { max: true },
            f64::NEG_INFINITY => MatrixNorm::Rows { max: false },
            _ => {
                return Err(PyValueError::new_err(format!(
                    "invalid matrix norm ord {v}"
                )))
            }
        }
    };
    let t = tensor(x)?;
    released(py, || t.matrix_norm(keepdims, ord)).map(Into::into)
}

/// `vector_norm(x, axes, keepdims, ord)`.
#[pyfunction]
fn _vector_norm(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axes: Option<Vec<isize>>,
    keepdims: bool,
    ord: f64,
) -> PyResult<PyTensor> {
    let t = tensor(x)?;
    heavy(py, t.numel(), || {
        t.vector_norm(axes.as_deref(), keepdims, ord)
    })
    .py()
    .map(Into::into)
}

/// `diagonal(x, offset)`: a view.
#[pyfunction]
fn _diagonal(x: &Bound<'_, PyAny>, offset: isize) -> PyResult<PyTensor> {
    tensor(x)?.diagonal(offset).py().map(Into::into)
}

/// `trace(x, offset, dtype)`.
#[pyfunction]
fn _trace(
    x: &Bound<'_, PyAny>,
    offset: isize,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let dtype = parse_opt_dtype(dtype)?;
    tensor(x)?.trace(offset, dtype).py().map(Into::into)
}

/// `outer(x1, x2)` or, with `axis`, `cross(x1, x2, axis)`.
#[pyfunction]
fn _outer_cross(
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    axis: Option<isize>,
) -> PyResult<PyTensor> {
    let (a, b) = (tensor(x1)?, tensor(x2)?);
    match axis {
        Some(axis) => a.cross(&b, axis),
        None => a.outer(&b),
    }
    .py()
    .map(Into::into)
}

/// Adds the bindings to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_linalg1, m)?)?;
    m.add_function(wrap_pyfunction!(_linalg_n, m)?)?;
    m.add_function(wrap_pyfunction!(_cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(_solve, m)?)?;
    m.add_function(wrap_pyfunction!(_pinv_rank, m)?)?;
    m.add_function(wrap_pyfunction!(_matrix_power, m)?)?;
    m.add_function(wrap_pyfunction!(_matrix_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_vector_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_diagonal, m)?)?;
    m.add_function(wrap_pyfunction!(_trace, m)?)?;
    m.add_function(wrap_pyfunction!(_outer_cross, m)?)?;
    Ok(())
}
