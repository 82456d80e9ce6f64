//! Conversions between Python objects and tensors: `asarray`, NumPy export through
//! `__array_interface__`, Python scalars, shapes and axis lists.

use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyTuple};
use tessera::{with_dtype, DType, Scalar, Tensor};

use numpy::PyArrayDescrMethods;

use crate::dtype::{from_descr, typestr};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// A small list of dims, axes or counts (no heap allocation up to 8): the core's.
pub use tessera::layout::DimList;

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The `numpy` module (imported once).
pub fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    NUMPY
        .get_or_try_init(py, || py.import("numpy").map(Bound::unbind))
        .map(|m| m.bind(py))
}

/// A Python `bool`, `int` (that fits int64) or `float` (exact types: NumPy scalars are not
/// weak, NEP 50).
pub fn weak_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if obj.is_exact_instance_of::<PyBool>() {
        Ok(Some(Scalar::Bool(obj.extract::<bool>()?)))
    } else if obj.is_exact_instance_of::<PyInt>() {
        // An int beyond int64 (up to 2**64 - 1) is not weak: callers convert it as an array,
        // which keeps it exact as uint64 (NumPy does the same).
        Ok(obj.extract::<i64>().ok().map(Scalar::Int))
    } else if obj.is_exact_instance_of::<PyFloat>() {
        Ok(Some(Scalar::Float(obj.extract::<f64>()?)))
    } else {
        Ok(None)
    }
}

/// Copies a NumPy array into a new contiguous tensor of the same dtype (via a contiguous,
/// native-byte-order NumPy copy first when the array is not one already).
pub fn from_ndarray(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Tensor> {
    let py = arr.py();
    let descr = arr.dtype();
    let dt = from_descr(&descr)?;
    let native = descr.is_native_byteorder().unwrap_or(true);
    if !(arr.is_c_contiguous() && arr.is_aligned() && native) {
        let np = numpy(py)?;
        let fixed = np.call_method1("ascontiguousarray", (arr, dt.name()))?;
        return from_ndarray(fixed.cast::<PyUntypedArray>()?);
    }
    // Every element is overwritten below: no zero-fill.
    let t = Tensor::empty(arr.shape(), dt).py()?;
    let n = t.numel();
    if n == 0 {
        return Ok(t);
    }
    // SAFETY (both reads below): `arr` is a C-contiguous, aligned, native-order array of `n`
    // elements of dtype `dt` (checked above), alive for this call; its data pointer is
    // therefore valid for `n` reads of `T` (and of `u8`, whose size and alignment are
    // `bool`'s).
    let data = unsafe { (*arr.as_array_ptr()).fields.data };
    if dt == DType::Bool {
        // A NumPy bool is any byte (`np.frombuffer(b"\x02", np.bool_)`, `.view(np.bool_)`),
        // and only 0 and 1 are Rust `bool`s: read bytes and normalise, as NumPy's own casts
        // do (nonzero is True).
        let src = unsafe { std::slice::from_raw_parts(data.cast::<u8>().cast_const(), n) };
        {
            let storage = t.storage().py()?;
            let mut dst = storage.write::<bool>().py()?;
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = s != 0;
            }
        }
        return Ok(t);
    }
    with_dtype!(dt, T => {
        let src = unsafe { std::slice::from_raw_parts(data.cast::<T>().cast_const(), n) };
        t.storage().py()?.write::<T>().py()?.copy_from_slice(src);
    });
    Ok(t)
}

/// `tessera.asarray` without the Python wrapper: a tensor from a Tensor, NumPy array,
/// buffer, nested sequence or scalar, converted to `dtype` when given.
pub fn to_tensor(
    obj: &Bound<'_, PyAny>,
    dtype: Option<DType>,
    copy: Option<bool>,
) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = t.get().t();
        return match dtype {
            Some(d) if d != t.dtype() && copy == Some(false) => Err(PyValueError::new_err(
                "copy=False: converting to another dtype needs a copy",
            )),
            Some(d) if d != t.dtype() => t.astype(d).py(),
            _ if copy == Some(true) => t.copy().py(),
            _ => Ok(t.clone()),
        };
    }
    if copy == Some(false) {
        return Err(PyValueError::new_err(
            "copy=False is not supported for foreign data: asarray copies it (use \
             tessera.from_dlpack for a zero-copy import, np.asarray(tensor) for a NumPy view)",
        ));
    }
    let py = obj.py();
    let arr = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => {
            let np = numpy(py)?;
            // uint64 values past int64 would go through float64 in NumPy's own guess.
            let a = match dtype {
                Some(DType::U64) => np.call_method1("asarray", (obj, "uint64"))?,
                _ => np.call_method1("asarray", (obj,))?,
            };
            a.cast_into::<PyUntypedArray>()?
        }
    };
    let t = match from_descr(&arr.dtype()) {
        Ok(_) => from_ndarray(&arr)?,
        // A NumPy dtype Tessera lacks (int16, ...): let NumPy convert when a target is given.
        Err(e) => match dtype {
            Some(d) if d != DType::BF16 => {
                let conv = arr.call_method1("astype", (d.name(),))?;
                from_ndarray(conv.cast::<PyUntypedArray>()?)?
            }
            Some(_) => {
                let conv = arr.call_method1("astype", ("float64",))?;
                from_ndarray(conv.cast::<PyUntypedArray>()?)?
            }
            None => return Err(e),
        },
    };
    match dtype {
        Some(d) if d != t.dtype() => t.astype(d).py(),
        _ => Ok(t),
    }
}

/// The `__array_interface__` dict (version 3) describing `t` in place: zero-copy export.
///
/// A `bool` tensor is exported read-only (docs/design.md H7): NumPy lets any byte be written
/// into bool memory (`.view(np.uint8)`), and the core reads bool storage as Rust `bool`, for
/// which only 0 and 1 are valid. Write bools with `t[...] = ...`.
pub fn array_interface<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let item = t.dtype().itemsize() as isize;
    d.set_item("version", 3)?;
    d.set_item("typestr", typestr(t.dtype())?)?;
    d.set_item("shape", PyTuple::new(py, t.shape())?)?;
    let strides: DimList<isize> = t.strides().iter().map(|s| s * item).collect();
    d.set_item("strides", PyTuple::new(py, strides)?)?;
    // Bool: NumPy must not write bytes other than 0 and 1 (docs/design.md H7). A tensor that
    // requires a gradient: writes from NumPy would bypass the version counter (G4).
    let read_only = t.dtype() == DType::Bool || t.requires_grad();
    d.set_item("data", (t.data_ptr() as usize, read_only))?;
    Ok(d)
}

/// A list of ints given as varargs (`f(2, 3)`) or one sequence (`f((2, 3))`, `f([2, 3])`).
pub fn int_args(args: &Bound<'_, PyTuple>) -> PyResult<DimList<isize>> {
    if args.len() == 1 {
        let a = args.get_item(0)?;
        if a.cast::<PyTuple>().is_ok() || a.cast::<PyList>().is_ok() {
            return int_seq(&a);
        }
    }
    args.iter().map(|a| index_int(&a)).collect()
}

/// An int (`__index__`), or a TypeError.
pub fn index_int(obj: &Bound<'_, PyAny>) -> PyResult<isize> {
    if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "expected an integer, got float {obj}"
        )));
    }
    obj.extract::<isize>()
}

/// A sequence of ints, or one int as a one-element list (an int that does not fit `isize`
/// is Python's OverflowError, not "not a sequence"). A tuple or list is read directly: trying
/// it as an int first made Python format a TypeError and drop it, a third of a 4-d
/// `permute_dims` call.
pub fn int_seq(obj: &Bound<'_, PyAny>) -> PyResult<DimList<isize>> {
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|x| index_int(&x)).collect();
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|x| index_int(&x)).collect();
    }
    match index_int(obj) {
        Ok(i) => return Ok(smallvec::smallvec![i]),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => return Err(e),
        Err(_) => {}
    }
    let mut out = DimList::new();
    for x in obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!("expected an int or a sequence of ints, got {obj}"))
    })? {
        out.push(index_int(&x?)?);
    }
    Ok(out)
}

/// A shape: an int or a sequence of non-negative ints (NumPy's ValueError for negatives and
/// for dims past the `isize` range).
pub fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<DimList<usize>> {
    let dims = int_seq(obj).map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!("Maximum allowed dimension exceeded (shape {obj})"))
        } else {
            e
        }
    })?;
    non_negative(&dims, "negative dimensions are not allowed")
}

/// The list as `usize`, or a ValueError with `msg` when any value is negative.
pub fn non_negative(xs: &[isize], msg: &str) -> PyResult<DimList<usize>> {
    xs.iter()
        .map(|&x| usize::try_from(x).map_err(|_| PyValueError::new_err(format!("{msg} ({x})"))))
        .collect()
}

/// An axis argument: `None` (all axes), an int or a tuple of ints.
pub fn axes_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DimList<isize>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => int_seq(o).map(Some),
    }
}

/// A Python scalar (`bool`, `int` or `float`) from a one-element tensor.
pub fn item(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    if t.numel() != 1 {
        return Err(PyValueError::new_err(format!(
            "can only convert a tensor of size 1 to a Python scalar (size is {})",
            t.numel()
        )));
    }
    if t.dtype().is_complex() {
        let (re, im) = with_dtype!(t.dtype(), T => {
            tessera::Element::to_complex(t.to_vec::<T>().py()?[0])
        });
        return Ok(pyo3::types::PyComplex::from_doubles(py, re, im)
            .into_any()
            .unbind());
    }
    if t.dtype() == DType::U64 {
        // Above `i64::MAX` a `Scalar` would round it: the exact Python int instead.
        let v = t.to_vec::<u64>().py()?[0];
        return Ok(v.into_pyobject(py)?.into_any().unbind());
    }
    let s = with_dtype!(t.dtype(), T => tessera::Element::to_scalar(t.to_vec::<T>().py()?[0]));
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Scalar::Float(x) => x.into_pyobject(py)?.into_any().unbind(),
    })
}
