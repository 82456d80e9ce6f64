//! The namespace's view functions bound natively: `permute_dims`, `transpose`, `reshape`,
//! `expand_dims`, `squeeze`, `flip` and `broadcast_to`. Each takes what `asarray` takes and
//! calls the same core view as the `Tensor` method of that name; a tensor argument is
//! borrowed, not converted. As Python `def`s over the methods they paid a Python frame per
//! call, about 40 ns on a view that costs 50-100 (docs/performance.md, "Native namespace
//! views").

use pyo3::prelude::*;
use tessera::Tensor;

use crate::convert::{axes_arg, int_seq, shape_arg, to_tensor};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::reshape_to;

/// `f` applied to `x` as a tensor: borrowed when `x` is one, else converted as `asarray`
/// converts it.
fn on_tensor<R>(x: &Bound<'_, PyAny>, f: impl FnOnce(&Tensor) -> PyResult<R>) -> PyResult<R> {
    match x.cast::<PyTensor>() {
        Ok(t) => f(t.get().t()),
        Err(_) => f(&to_tensor(x, None, None)?),
    }
}

/// Array-API `permute_dims(x, /, axes)`: a view with dims reordered by `axes`.
#[pyfunction]
#[pyo3(signature = (x, /, axes))]
fn permute_dims(x: &Bound<'_, PyAny>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let axes = int_seq(axes)?;
    on_tensor(x, |t| t.permute(&axes).py().map(Into::into))
}

/// NumPy `transpose(x, axes=None)`: reverses the dims, or permutes them by `axes`: a view.
#[pyfunction]
#[pyo3(signature = (x, axes = None))]
fn transpose(x: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let axes = axes_arg(axes)?;
    on_tensor(x, |t| {
        match axes {
            None => t.t(),
            Some(axes) => t.permute(&axes),
        }
        .py()
        .map(Into::into)
    })
}

/// NumPy `reshape(x, /, shape, *, copy=None)`: a view when possible, else a copy;
/// `copy=False` raises ValueError when a copy would be needed, `copy=True` always copies.
#[pyfunction]
#[pyo3(signature = (x, /, shape, *, copy = None))]
fn reshape(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    copy: Option<bool>,
) -> PyResult<PyTensor> {
    let shape = int_seq(shape)?;
    on_tensor(x, |t| reshape_to(py, t, &shape, copy))
}

/// NumPy `expand_dims(x, /, axis=0)`: a view with a size-1 dim inserted at `axis`.
#[pyfunction]
#[pyo3(signature = (x, /, axis = 0))]
fn expand_dims(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyTensor> {
    on_tensor(x, |t| t.unsqueeze(axis).py().map(Into::into))
}

/// `squeeze(x, /, axis=None)`: a view without the given size-1 dims (an int or tuple;
/// ValueError when one of them is not of size 1), or without every size-1 dim when `axis`
/// is None (NumPy's default; the standard requires `axis`).
#[pyfunction]
#[pyo3(signature = (x, /, axis = None))]
fn squeeze(x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let axes = axes_arg(axis)?;
    on_tensor(x, |t| t.squeeze(axes.as_deref()).py().map(Into::into))
}

/// NumPy `flip(x, /, *, axis=None)`: a view with the given axes (all when None) reversed.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None))]
fn flip(x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let axes = axes_arg(axis)?;
    on_tensor(x, |t| t.flip(axes.as_deref()).py().map(Into::into))
}

/// NumPy `broadcast_to(x, /, shape)`: a zero-copy stride-0 view of `x` with `shape`.
#[pyfunction]
#[pyo3(signature = (x, /, shape))]
fn broadcast_to(x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let shape = shape_arg(shape)?;
    on_tensor(x, |t| t.broadcast_to(&shape).py().map(Into::into))
}

/// Adds the functions to the `_native` module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(permute_dims, m)?)?;
    m.add_function(wrap_pyfunction!(transpose, m)?)?;
    m.add_function(wrap_pyfunction!(reshape, m)?)?;
    m.add_function(wrap_pyfunction!(expand_dims, m)?)?;
    m.add_function(wrap_pyfunction!(squeeze, m)?)?;
    m.add_function(wrap_pyfunction!(flip, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast_to, m)?)?;
    Ok(())
}
