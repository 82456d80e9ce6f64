//! Bindings of `tessera::dtype_info` (`finfo`, `iinfo`, `isdtype`, `can_cast`,
//! `result_type`); `python/tessera/_dtypes.py` wraps them in the standard's signatures.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};
use tessera::dtype_info::{self, DTypeKind, WeakScalar};
use tessera::{DType, Scalar};

use crate::dtype::{parse_dtype, PyDType};
use crate::errors::PyRes;

/// `(bits, eps, max, min, smallest_normal, dtype)` of a float or complex dtype.
#[pyfunction]
fn _finfo(d: &Bound<'_, PyAny>) -> PyResult<(u32, f64, f64, f64, f64, PyDType)> {
    let f = dtype_info::finfo(parse_dtype(d)?).py()?;
    Ok((
        f.bits,
        f.eps,
        f.max,
        f.min,
        f.smallest_normal,
        PyDType { d: f.dtype },
    ))
}

/// `(bits, max, min, dtype)` of an integer dtype.
#[pyfunction]
fn _iinfo(d: &Bound<'_, PyAny>) -> PyResult<(u32, i128, i128, PyDType)> {
    let i = dtype_info::iinfo(parse_dtype(d)?).py()?;
    Ok((i.bits, i.max, i.min, PyDType { d: i.dtype }))
}

/// Whether `d` is of the kind named `kind`.
#[pyfunction]
fn _isdtype(d: &Bound<'_, PyAny>, kind: &str) -> PyResult<bool> {
    Ok(dtype_info::isdtype(
        parse_dtype(d)?,
        DTypeKind::from_name(kind).py()?,
    ))
}

/// Whether `from` casts to `to` by the promotion rules.
#[pyfunction]
fn _can_cast(from: &Bound<'_, PyAny>, to: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(dtype_info::can_cast(parse_dtype(from)?, parse_dtype(to)?))
}

/// The result dtype of `dtypes` and the weak Python scalars `scalars`.
#[pyfunction]
fn _result_type(
    dtypes: Vec<Bound<'_, PyAny>>,
    scalars: Vec<Bound<'_, PyAny>>,
) -> PyResult<PyDType> {
    let ds = dtypes
        .iter()
        .map(parse_dtype)
        .collect::<PyResult<Vec<DType>>>()?;
    let ss = scalars
        .iter()
        .map(|s| {
            Ok(if s.is_instance_of::<PyBool>() {
                WeakScalar::Real(Scalar::Bool(s.extract()?))
            } else if s.is_instance_of::<PyInt>() {
                // Only the kind matters for the dtype (NumPy does not check the value).
                WeakScalar::Real(Scalar::Int(0))
            } else if s.is_instance_of::<PyFloat>() {
                WeakScalar::Real(Scalar::Float(s.extract()?))
            } else if s.is_instance_of::<PyComplex>() {
                WeakScalar::Complex
            } else {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "result_type: expected arrays, dtypes or Python scalars, got {s}"
                )));
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyDType {
        d: dtype_info::result_type_of(&ds, &ss).py()?,
    })
}

/// Adds the functions to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_finfo, m)?)?;
    m.add_function(wrap_pyfunction!(_iinfo, m)?)?;
    m.add_function(wrap_pyfunction!(_isdtype, m)?)?;
    m.add_function(wrap_pyfunction!(_can_cast, m)?)?;
    m.add_function(wrap_pyfunction!(_result_type, m)?)?;
    Ok(())
}
