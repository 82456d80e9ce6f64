//! Bindings of the Array API functions that are typed `Tensor` methods composed of registry
//! ops (`prod`, `var`, `std`, `all`, `any`, `count_nonzero`, `sort`, `argsort`, `where`, `astype`,
//! `moveaxis`, `unstack`,
//! `broadcast_arrays`, `roll`, `diff`, `tril`, `triu`, `meshgrid`) and constructors (`eye`,
//! `linspace`). Argument checking and the standard's signatures are in
//! `python/tessera/_arrayfns.py`; these take already-normalised arguments.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use tessera::Tensor;

use crate::convert::to_tensor;
use crate::dtype::{parse_dtype, parse_opt_dtype};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

fn arg(x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    to_tensor(x, None, None)
}

fn out(t: tessera::Result<Tensor>) -> PyResult<PyTensor> {
    t.py().map(Into::into)
}

fn outs(ts: tessera::Result<Vec<Tensor>>) -> PyResult<Vec<PyTensor>> {
    Ok(ts.py()?.into_iter().map(Into::into).collect())
}

fn args(xs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Tensor>> {
    xs.iter().map(arg).collect()
}

/// `prod(x, axis, keepdims, dtype)`.
#[pyfunction]
#[pyo3(signature = (x, axis, keepdims, dtype))]
fn _prod(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    keepdims: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    out(arg(x)?.prod(axis.as_deref(), keepdims, parse_opt_dtype(dtype)?))
}

/// `var(x, axis, correction, keepdims)`.
#[pyfunction]
fn _var(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyTensor> {
    out(arg(x)?.var(axis.as_deref(), correction, keepdims))
}

/// `std(x, axis, correction, keepdims)`.
#[pyfunction]
fn _std(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyTensor> {
    out(arg(x)?.std(axis.as_deref(), correction, keepdims))
}

/// `argmax` (`max`) or `argmin` of `x` along `axis` (flattened when `None`): the typed
/// method, without the registry's string parameters.
#[pyfunction]
fn _arg_extreme(
    max: bool,
    x: &Bound<'_, PyAny>,
    axis: Option<isize>,
    keepdims: bool,
) -> PyResult<PyTensor> {
    let x = arg(x)?;
    out(if max {
        x.argmax(axis, keepdims)
    } else {
        x.argmin(axis, keepdims)
    })
}

/// `sort(x, axis, descending, stable)`, or the stable `argsort` when `arg`: the typed method,
/// without the registry's string parameters.
#[pyfunction]
fn _sort(
    x: &Bound<'_, PyAny>,
    axis: isize,
    descending: bool,
    stable: bool,
    arg_: bool,
) -> PyResult<PyTensor> {
    let x = arg(x)?;
    out(if arg_ {
        x.argsort(axis, descending)
    } else {
        x.sort(axis, descending, stable)
    })
}

/// `where(condition, x1, x2)` of three tensors (the Python side turns scalars into tensors).
#[pyfunction]
fn _where(
    condition: &Bound<'_, PyTensor>,
    x1: &Bound<'_, PyTensor>,
    x2: &Bound<'_, PyTensor>,
) -> PyResult<PyTensor> {
    out(Tensor::where_(
        condition.get().t(),
        x1.get().t(),
        x2.get().t(),
    ))
}

/// The Array API's `astype(x, dtype, copy=..., device=...)`: `x` itself when `copy` is false
/// and the dtype already matches; complex to real is a `TypeError` (the standard leaves it
/// unspecified, NumPy warns and drops the imaginary part).
#[pyfunction]
fn _astype(
    x: &Bound<'_, PyTensor>,
    dtype: &Bound<'_, PyAny>,
    copy: bool,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    crate::device::check_device(device)?;
    let py = x.py();
    let (t, d) = (x.get().t(), parse_dtype(dtype)?);
    if t.dtype().is_complex() && !d.is_complex() {
        return Err(PyTypeError::new_err(format!(
            "astype: casting {} to {} drops the imaginary part",
            t.dtype().name(),
            d.name()
        )));
    }
    if !copy && t.dtype() == d {
        return Ok(x.clone().into_any().unbind());
    }
    let out: PyTensor = heavy(py, t.numel(), || t.astype(d)).py()?.into();
    Ok(Py::new(py, out)?.into_any())
}

/// `all`, `any` or `count_nonzero` (`which`) of `x` over `axis`.
#[pyfunction]
fn _truth(
    which: &str,
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<PyTensor> {
    let x = arg(x)?;
    let ax = axis.as_deref();
    out(match which {
        "all" => x.all(ax, keepdims),
        "any" => x.any(ax, keepdims),
        _ => x.count_nonzero(ax, keepdims),
    })
}

/// `moveaxis(x, source, destination)`.
#[pyfunction]
fn _moveaxis(
    x: &Bound<'_, PyAny>,
    source: Vec<isize>,
    destination: Vec<isize>,
) -> PyResult<PyTensor> {
    out(arg(x)?.moveaxis(&source, &destination))
}

/// `unstack(x, axis)`.
#[pyfunction]
fn _unstack(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<Vec<PyTensor>> {
    outs(arg(x)?.unstack(axis))
}

/// `broadcast_arrays(*xs)`.
#[pyfunction]
fn _broadcast_arrays(xs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<PyTensor>> {
    outs(Tensor::broadcast_arrays(&args(xs)?))
}

/// `roll(x, shift, axis)`.
#[pyfunction]
fn _roll(x: &Bound<'_, PyAny>, shift: Vec<isize>, axis: Option<Vec<isize>>) -> PyResult<PyTensor> {
    out(arg(x)?.roll(&shift, axis.as_deref()))
}

/// `diff(x, axis, n, prepend, append)`.
#[pyfunction]
#[pyo3(signature = (x, axis, n, prepend, append))]
fn _diff(
    x: &Bound<'_, PyAny>,
    axis: isize,
    n: usize,
    prepend: Option<&Bound<'_, PyAny>>,
    append: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let p = prepend.map(arg).transpose()?;
    let a = append.map(arg).transpose()?;
    out(arg(x)?.diff(axis, n, p.as_ref(), a.as_ref()))
}

/// `tril(x, k)` (`lower`) or `triu(x, k)`.
#[pyfunction]
fn _triangle(x: &Bound<'_, PyAny>, k: i64, lower: bool) -> PyResult<PyTensor> {
    let x = arg(x)?;
    out(if lower { x.tril(k) } else { x.triu(k) })
}

/// `meshgrid(*xs, indexing)`.
#[pyfunction]
fn _meshgrid(xs: Vec<Bound<'_, PyAny>>, indexing: &str) -> PyResult<Vec<PyTensor>> {
    outs(Tensor::meshgrid(&args(xs)?, indexing))
}

/// `eye(rows, cols, k, dtype)`.
#[pyfunction]
#[pyo3(signature = (rows, cols, k, dtype))]
fn _eye(rows: usize, cols: usize, k: i64, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let d = parse_opt_dtype(dtype)?.unwrap_or(tessera::DType::F64);
    out(Tensor::eye(rows, cols, k, d))
}

/// `linspace(start, stop, num, endpoint, dtype)`.
#[pyfunction]
#[pyo3(signature = (start, stop, num, endpoint, dtype))]
fn _linspace(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let d = parse_opt_dtype(dtype)?.unwrap_or(tessera::DType::F64);
    out(Tensor::linspace(start, stop, num, endpoint, d))
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_prod, m)?)?;
    m.add_function(wrap_pyfunction!(_var, m)?)?;
    m.add_function(wrap_pyfunction!(_std, m)?)?;
    m.add_function(wrap_pyfunction!(_truth, m)?)?;
    m.add_function(wrap_pyfunction!(_arg_extreme, m)?)?;
    m.add_function(wrap_pyfunction!(_sort, m)?)?;
    m.add_function(wrap_pyfunction!(_where, m)?)?;
    m.add_function(wrap_pyfunction!(_astype, m)?)?;
    m.add_function(wrap_pyfunction!(_moveaxis, m)?)?;
    m.add_function(wrap_pyfunction!(_unstack, m)?)?;
    m.add_function(wrap_pyfunction!(_broadcast_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(_roll, m)?)?;
    m.add_function(wrap_pyfunction!(_diff, m)?)?;
    m.add_function(wrap_pyfunction!(_triangle, m)?)?;
    m.add_function(wrap_pyfunction!(_meshgrid, m)?)?;
    m.add_function(wrap_pyfunction!(_eye, m)?)?;
    m.add_function(wrap_pyfunction!(_linspace, m)?)?;
    Ok(())
}
