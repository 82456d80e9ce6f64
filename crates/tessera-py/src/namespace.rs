//! The Array API glue on the `Tensor` class and the namespace (docs/design.md N1-N4):
//! `__array_namespace__`, `device` / `to_device` (the `Device` of `device.rs`), `mT`, and the
//! bindings of the Rust products (`vecdot`, `tensordot`) and of `broadcast_shapes`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tessera::Tensor;

use crate::convert::{int_seq, shape_arg, to_tensor};
use crate::device::{check_device, PyDevice};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

/// The revisions of the standard that `__array_namespace__(api_version=...)` accepts; the
/// namespace implements the last one.
const API_VERSIONS: [&str; 4] = ["2021.12", "2022.12", "2023.12", "2024.12"];

#[pymethods]
impl PyTensor {
    /// The namespace of the Array API standard that this array belongs to: the `tessera`
    /// module. `api_version` may name any revision up to "2024.12" (ValueError otherwise).
    #[pyo3(signature = (*, api_version = None))]
    fn __array_namespace__<'py>(
        &self,
        py: Python<'py>,
        api_version: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyModule>> {
        if let Some(v) = api_version.filter(|v| !v.is_none()) {
            let v: String = v
                .extract()
                .map_err(|_| PyTypeError::new_err("api_version must be a string or None"))?;
            if !API_VERSIONS.contains(&v.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "api_version {v:?} is not supported (tessera implements \"2024.12\")"
                )));
            }
        }
        py.import("tessera")
    }

    /// The device holding the array: always `Device('cpu')`.
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice
    }

    /// The array on `device`: itself for the CPU (no copy), ValueError for any other.
    #[pyo3(signature = (device, /, *, stream = None))]
    fn to_device(
        slf: PyRef<'_, Self>,
        device: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Self>> {
        if stream.is_some_and(|s| !s.is_none()) {
            return Err(PyValueError::new_err("the CPU device has no streams"));
        }
        check_device(Some(device))?;
        Ok(slf.into())
    }

    /// The transpose of each matrix (last two dims): a view (the standard's `x.mT`).
    #[getter(mT)]
    fn m_t(&self) -> PyResult<PyTensor> {
        self.t().matrix_transpose().py().map(Into::into)
    }
}

/// `check_device` for the Python modules (`device=` keywords of functions written there).
#[pyfunction]
#[pyo3(signature = (device, /))]
fn _check_device(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    check_device(device)
}

/// The shape that `shapes` broadcast to (a tuple); ValueError when they do not broadcast.
#[pyfunction]
#[pyo3(signature = (*shapes))]
fn broadcast_shapes<'py>(
    py: Python<'py>,
    shapes: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes.iter() {
        out = tessera::layout::broadcast_shapes(&out, &shape_arg(&s)?).py()?;
    }
    PyTuple::new(py, out)
}

fn tensor(x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    to_tensor(x, None, None)
}

/// `vecdot(x1, x2, axis)`: the Rust `Tensor::vecdot` (conjugating `x1` for complex dtypes).
#[pyfunction]
fn _vecdot(
    py: Python<'_>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    axis: isize,
) -> PyResult<PyTensor> {
    let (a, b) = (tensor(x1)?, tensor(x2)?);
    heavy(py, a.numel().max(b.numel()), || a.vecdot(&b, axis))
        .py()
        .map(Into::into)
}

/// `tensordot(x1, x2, axes_1, axes_2)`: the Rust `Tensor::tensordot`.
#[pyfunction]
fn _tensordot(
    py: Python<'_>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    axes_1: &Bound<'_, PyAny>,
    axes_2: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let (a, b) = (tensor(x1)?, tensor(x2)?);
    let (p, q) = (int_seq(axes_1)?, int_seq(axes_2)?);
    heavy(py, a.numel().max(b.numel()), || a.tensordot(&b, &p, &q))
        .py()
        .map(Into::into)
}

/// Adds the classes and functions of this module to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDevice>()?;
    m.add_function(wrap_pyfunction!(broadcast_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(_check_device, m)?)?;
    m.add_function(wrap_pyfunction!(_vecdot, m)?)?;
    m.add_function(wrap_pyfunction!(_tensordot, m)?)?;
    Ok(())
}
