//! `tessera.dtype` objects and the conversion of Python/NumPy dtype spellings to [`DType`].

use numpy::{PyArrayDescr, PyArrayDescrMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use tessera::DType;

/// A Tessera element type (`tessera.float32`, ...). Compares equal to its name, to the
/// equivalent NumPy dtype and to anything `numpy.dtype` accepts for it.
#[pyclass(name = "dtype", module = "tessera", frozen)]
#[derive(Clone, Copy)]
pub struct PyDType {
    /// The core dtype.
    pub d: DType,
}

#[pymethods]
impl PyDType {
    /// Creates a dtype from a name, a NumPy dtype or a Python type (`float`, `int`, `bool`).
    #[new]
    fn py_new(spec: &Bound<'_, PyAny>) -> PyResult<PyDType> {
        Ok(PyDType {
            d: parse_dtype(spec)?,
        })
    }

    /// NumPy's name (`bfloat16` for bf16).
    #[getter]
    fn name(&self) -> &'static str {
        self.d.name()
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.d.itemsize()
    }

    /// The array-interface type string (`<f4`, `|b1`, ...); bfloat16 has none (TypeError).
    #[getter]
    fn str(&self) -> PyResult<&'static str> {
        typestr(self.d)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        parse_dtype(other).is_ok_and(|d| d == self.d)
    }

    fn __hash__(&self) -> u64 {
        self.d as u64
    }

    fn __repr__(&self) -> String {
        format!("tessera.{}", self.d.name())
    }

    fn __str__(&self) -> &'static str {
        self.d.name()
    }
}

/// The array-interface type string of `d` (native byte order).
pub fn typestr(d: DType) -> PyResult<&'static str> {
    let little = cfg!(target_endian = "little");
    Ok(match d {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I8 => "|i1",
        DType::U16 if little => "<u2",
        DType::I16 if little => "<i2",
        DType::U32 if little => "<u4",
        DType::U64 if little => "<u8",
        DType::I32 if little => "<i4",
        DType::I64 if little => "<i8",
        DType::F16 if little => "<f2",
        DType::F32 if little => "<f4",
        DType::F64 if little => "<f8",
        DType::C64 if little => "<c8",
        DType::C128 if little => "<c16",
        DType::U16 => ">u2",
        DType::I16 => ">i2",
        DType::U32 => ">u4",
        DType::U64 => ">u8",
        DType::I32 => ">i4",
        DType::I64 => ">i8",
        DType::F16 => ">f2",
        DType::F32 => ">f4",
        DType::F64 => ">f8",
        DType::C64 => ">c8",
        DType::C128 => ">c16",
        DType::BF16 => {
            return Err(PyTypeError::new_err(
                "bfloat16 has no NumPy dtype; convert with t.astype(tessera.float32) first",
            ))
        }
    })
}

/// The core dtype of a NumPy dtype descriptor, or a TypeError naming the unsupported dtype.
pub fn from_descr(descr: &Bound<'_, PyArrayDescr>) -> PyResult<DType> {
    let d = match (descr.kind(), descr.itemsize()) {
        (b'b', 1) => DType::Bool,
        (b'u', 1) => DType::U8,
        (b'i', 1) => DType::I8,
        (b'u', 2) => DType::U16,
        (b'i', 2) => DType::I16,
        (b'u', 4) => DType::U32,
        (b'u', 8) => DType::U64,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'f', 2) => DType::F16,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        (b'c', 8) => DType::C64,
        (b'c', 16) => DType::C128,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "tessera has no dtype for NumPy dtype {}; supported: bool, uint8, int8, \
                 uint16, int16, uint32, int32, uint64, int64, float16, float32, float64, \
                 complex64, complex128 (and bfloat16)",
                descr.str()?
            )))
        }
    };
    Ok(d)
}

/// Any dtype spelling: a `tessera.dtype`, a name (`"float32"`, `"f32"`, `"bf16"`), a NumPy
/// dtype or scalar type, or a Python type.
pub fn parse_dtype(spec: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = spec.cast::<PyDType>() {
        return Ok(d.get().d);
    }
    if let Ok(s) = spec.cast::<PyString>() {
        if let Some(d) = DType::from_name(s.to_str()?) {
            return Ok(d);
        }
    }
    let descr = spec
        .py()
        .import("numpy")?
        .getattr("dtype")?
        .call1((spec,))
        .map_err(|_| PyTypeError::new_err(format!("data type {spec} not understood")))?;
    from_descr(descr.cast::<PyArrayDescr>()?)
}

/// `parse_dtype` for an optional argument.
pub fn parse_opt_dtype(spec: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match spec {
        Some(s) if !s.is_none() => parse_dtype(s).map(Some),
        _ => Ok(None),
    }
}
