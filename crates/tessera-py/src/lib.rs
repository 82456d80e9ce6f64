//! The `tessera._native` Python extension: the [`tessera`] core behind a NumPy-like API.
//!
//! Modules: [`handle`] (the `Tensor` class's data), [`tensor`] (its methods), [`indexing`]
//! (`t[...]`), [`arith`] (operators), [`convert`] (`asarray`, NumPy export, argument parsing),
//! [`dtype`], [`dlpack`] (`__dlpack__`, `from_dlpack`), [`ops`] (ops by name, fallback warnings), [`ring`] (`RingBuffer`), [`sparse`],
//! [`io`] (files, pickling), [`namespace`] (Array API glue: `Device`, `__array_namespace__`), [`grad`] (autograd and optimisers), [`errors`] (exception mapping). Imports go one way: `errors`,
//! `dtype`, `device` and `handle` at the bottom, then `convert`, then `tensor`, then the rest. The
//! pure-Python package `tessera` re-exports these and generates `tessera.ops`.

pub mod advanced;
pub mod arith;
pub mod arrayfns;
pub mod convert;
pub mod device;
pub mod dist;
pub mod dlpack;
pub mod dtype;
pub mod dtype_info;
pub mod elementwise;
pub mod errors;
pub mod fft;
pub mod grad;
pub mod handle;
pub mod indexing;
pub mod io;
pub mod linalg;
pub mod namespace;
mod namespace_elementwise;
mod namespace_views;
pub mod ops;
pub mod ring;
pub mod slices;
mod slots;
pub mod sparse;
pub mod tensor;

use pyo3::prelude::*;
use tessera::{DType, Scalar, Tensor};

use crate::convert::{shape_arg, to_tensor, weak_scalar};
use crate::device::check_device;
use crate::dtype::{parse_opt_dtype, PyDType};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// A tensor from a Tensor, NumPy array, buffer, nested sequence or scalar: a copy of foreign
/// data, except with `copy=False`, which adopts a DLPack producer's memory (NumPy arrays,
/// PyTorch tensors...) or raises (ValueError; BufferError when the memory cannot be shared).
/// Without `dtype` the dtype is NumPy's for the object.
#[pyfunction]
#[pyo3(signature = (obj, /, *, dtype = None, device = None, copy = None))]
fn asarray(
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let dtype = parse_opt_dtype(dtype)?;
    if copy == Some(false)
        && !obj.is_instance_of::<PyTensor>()
        && obj.hasattr(pyo3::intern!(obj.py(), "__dlpack__"))?
    {
        // Never a copy: adopt the producer's memory through DLPack (BufferError when it cannot
        // be shared), and refuse a dtype change, which would need one.
        let t = dlpack::from_dlpack(obj, None, Some(false))?;
        if dtype.is_some_and(|d| d != t.t().dtype()) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "copy=False: converting to another dtype needs a copy",
            ));
        }
        return Ok(t);
    }
    to_tensor(obj, dtype, copy).map(Into::into)
}

/// Zeros of `shape` (dtype default float64).
#[pyfunction]
#[pyo3(signature = (shape, *, dtype = None, device = None))]
fn zeros(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let d = parse_opt_dtype(dtype)?.unwrap_or(DType::F64);
    Tensor::zeros(&shape_arg(shape)?, d).py().map(Into::into)
}

/// Ones of `shape` (dtype default float64).
#[pyfunction]
#[pyo3(signature = (shape, *, dtype = None, device = None))]
fn ones(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let d = parse_opt_dtype(dtype)?.unwrap_or(DType::F64);
    Tensor::ones(&shape_arg(shape)?, d).py().map(Into::into)
}

/// An uninitialised tensor (Tessera zero-fills it; dtype default float64).
#[pyfunction]
#[pyo3(signature = (shape, *, dtype = None, device = None))]
fn empty(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let d = parse_opt_dtype(dtype)?.unwrap_or(DType::F64);
    Tensor::empty(&shape_arg(shape)?, d).py().map(Into::into)
}

/// A Python scalar (or 0-d array-like) and its natural dtype (bool, int64, float64).
fn scalar_arg(v: &Bound<'_, PyAny>) -> PyResult<(Scalar, DType)> {
    if let Some(s) = weak_scalar(v)? {
        let d = match s {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
        };
        return Ok((s, d));
    }
    let t = to_tensor(v, None, None)?;
    let d = t.dtype();
    let s = tessera::with_dtype!(d, T => tessera::Element::to_scalar(t.item::<T>().py()?));
    Ok((s, d))
}

/// `shape` filled with `fill_value` (dtype default: the value's, like NumPy).
#[pyfunction]
#[pyo3(signature = (shape, fill_value, *, dtype = None, device = None))]
fn full(
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let (s, natural) = scalar_arg(fill_value)?;
    let d = parse_opt_dtype(dtype)?.unwrap_or(natural);
    let weak = weak_scalar(fill_value)?.is_some();
    if natural.is_complex() || d.is_complex() || (!weak && natural == DType::U64) {
        // A `Scalar` has no imaginary part, nor the range of uint64 past int64: broadcast the
        // converted value instead.
        let dims: Vec<isize> = shape_arg(shape)?.iter().map(|&n| n as isize).collect();
        let v = to_tensor(fill_value, Some(d), None)?;
        return v.expand(&dims).py()?.copy().py().map(Into::into);
    }
    Tensor::full(&shape_arg(shape)?, s, d).py().map(Into::into)
}

/// NumPy `arange([start,] stop[, step], dtype=None)`: int64 when all are ints, else float64.
#[pyfunction]
#[pyo3(signature = (start, /, stop = None, step = None, *, dtype = None, device = None))]
fn arange(
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    check_device(device)?;
    let (a, da) = scalar_arg(start)?;
    let (a, da, b, db) = match stop.filter(|s| !s.is_none()) {
        Some(stop) => {
            let (b, db) = scalar_arg(stop)?;
            (a, da, b, db)
        }
        None => (Scalar::Int(0), DType::I64, a, da),
    };
    let (c, dc) = match step.filter(|s| !s.is_none()) {
        Some(step) => scalar_arg(step)?,
        None => (Scalar::Int(1), DType::I64),
    };
    let natural = if [da, db, dc].iter().all(|d| !d.is_float()) {
        DType::I64
    } else {
        DType::F64
    };
    let d = parse_opt_dtype(dtype)?.unwrap_or(natural);
    Tensor::arange(a, b, c, d).py().map(Into::into)
}

/// `set_num_threads(n)`: the number of threads kernels use (as `torch.set_num_threads`;
/// docs/design.md P3). Before the first parallel operation it sizes the pool; afterwards `1`
/// makes every kernel serial and a larger count only changes how work is cut. `n < 1` is a
/// `ValueError`.
#[pyfunction]
fn set_num_threads(n: i64) -> PyResult<()> {
    let n = usize::try_from(n).unwrap_or(0);
    tessera::kernels::parallel::set_num_threads(n).py()
}

/// `get_num_threads()`: the number of threads kernels split work across.
#[pyfunction]
fn get_num_threads() -> usize {
    tessera::kernels::parallel::num_threads()
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTensor>()?;
    slots::install(m.py())?;
    m.add("_tensor_value_offset", slots::value_offset())?;
    dist::register(m)?;
    m.add_class::<PyDType>()?;
    m.add_class::<ring::PyRingBuffer>()?;
    for d in DType::ALL {
        m.add(d.name(), PyDType { d })?;
    }
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(ops::invoke, m)?)?;
    m.add_function(wrap_pyfunction!(elementwise::clip, m)?)?;
    namespace_elementwise::register(m)?;
    m.add_function(wrap_pyfunction!(ops::list_ops, m)?)?;
    m.add_function(wrap_pyfunction!(ops::create_view, m)?)?;
    m.add_function(wrap_pyfunction!(ops::encode_index, m)?)?;
    m.add_function(wrap_pyfunction!(ops::fallback_count, m)?)?;
    m.add_function(wrap_pyfunction!(advanced::take, m)?)?;
    m.add_function(wrap_pyfunction!(advanced::take_along_axis, m)?)?;
    sparse::register(m)?;
    dtype_info::register(m)?;
    io::register(m)?;
    grad::register(m)?;
    dlpack::register(m)?;
    slots::install_from_dlpack(m)?;
    arrayfns::register(m)?;
    namespace::register(m)?;
    namespace_views::register(m)?;
    fft::register(m)?;
    linalg::register(m)?;
    ops::install_fallback_hook();
    Ok(())
}
