//! `t[key]` and `t[key] = value`: NumPy basic indexing parsed in Rust straight into
//! [`IndexSpec`]s (ints, slices with any step, `None`, `Ellipsis`), without Python-level loops
//! or heap allocation for up to 8 indices.

use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PySlice, PyTuple};
use tessera::index::IndexSpec;
use tessera::promote::result_type_scalar;
use tessera::{Scalar, Tensor};

use crate::convert::{to_tensor, weak_scalar, DimList};
use crate::errors::PyRes;
use crate::tensor::PyTensor;

/// Parses a key (one index or a tuple of them) into `specs`.
pub fn parse_key(key: &Bound<'_, PyAny>, specs: &mut DimList<IndexSpec>) -> PyResult<()> {
    if let Ok(tup) = key.cast_exact::<PyTuple>() {
        for item in tup.iter_borrowed() {
            specs.push(parse_index(&item)?);
        }
    } else {
        specs.push(parse_index(key)?);
    }
    Ok(())
}

fn unsupported(item: &Bound<'_, PyAny>) -> PyErr {
    let ty = item
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`) and None are valid indices (got {ty}); \
         tessera has no advanced (array or boolean) indexing"
    ))
}

fn point(item: &Bound<'_, PyAny>) -> PyResult<IndexSpec> {
    item.extract::<isize>().map(IndexSpec::Point).map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(item.py()) {
            PyIndexError::new_err(format!("index {item} is out of bounds"))
        } else {
            e
        }
    })
}

/// One index: an int (or anything with `__index__` but bool), a slice, `None` or `...`.
fn parse_index(item: &Bound<'_, PyAny>) -> PyResult<IndexSpec> {
    if item.is_exact_instance_of::<PyInt>() {
        return point(item);
    }
    if let Ok(slice) = item.cast_exact::<PySlice>() {
        return parse_slice(slice);
    }
    if item.is_none() {
        return Ok(IndexSpec::NewAxis);
    }
    // SAFETY: `Py_Ellipsis` returns a borrowed pointer to the immortal `...` singleton.
    if item.as_ptr() == unsafe { ffi::Py_Ellipsis() } {
        return Ok(IndexSpec::Ellipsis);
    }
    if item.is_instance_of::<PyBool>() {
        return Err(unsupported(item));
    }
    // SAFETY: `item` is a valid object pointer for the call; the check has no side effects.
    if unsafe { ffi::PyIndex_Check(item.as_ptr()) } != 0 {
        // NumPy integer scalars (not np.bool_, which has no __index__ in NumPy 2).
        return point(item);
    }
    Err(unsupported(item))
}

/// A slice as an interval; `None` bounds stay absent, a zero step is Python's ValueError.
fn parse_slice(slice: &Bound<'_, PySlice>) -> PyResult<IndexSpec> {
    let (mut start, mut stop, mut step): (ffi::Py_ssize_t, ffi::Py_ssize_t, ffi::Py_ssize_t) =
        (0, 0, 0);
    // SAFETY: `slice` is a valid slice object; the out-pointers are valid locals.
    // PySlice_Unpack converts bounds with __index__, clamps them to the Py_ssize_t range and
    // maps None to the sentinels tested below; it raises for a zero step or a bad bound type.
    let rc = unsafe { ffi::PySlice_Unpack(slice.as_ptr(), &mut start, &mut stop, &mut step) };
    if rc < 0 {
        return Err(PyErr::fetch(slice.py()));
    }
    let (max, min) = (ffi::Py_ssize_t::MAX, ffi::Py_ssize_t::MIN);
    let start = if step < 0 && start == max {
        None
    } else {
        Some(start)
    };
    let end = if (step > 0 && stop == max) || (step < 0 && stop == min) {
        None
    } else {
        Some(stop)
    };
    Ok(IndexSpec::Interval {
        start,
        end,
        step,
        inclusive: false,
    })
}

/// The view `t[key]`.
pub fn index(t: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let mut specs = DimList::new();
    parse_key(key, &mut specs)?;
    t.index(&specs).py()
}

#[pymethods]
impl PyTensor {
    /// Basic indexing: ints, slices (negative steps too), `None` and `...` give views that
    /// share storage with this tensor (NumPy semantics).
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        index(&self.t, key).map(Into::into)
    }

    /// `t[key] = value` writes through the view into this tensor's storage, broadcasting
    /// `value` (converted with `asarray` and cast to this tensor's dtype).
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let view = index(&self.t, key)?;
        if let Some(s) = weak_scalar(value)? {
            if let Scalar::Int(_) = s {
                if view.dtype().is_integer() {
                    // NumPy 2 raises OverflowError for an int that does not fit.
                    result_type_scalar(view.dtype(), s)
                        .map_err(|e| PyOverflowError::new_err(e.to_string()))?;
                }
            }
            return view.fill_(s).py();
        }
        let src = to_tensor(value, Some(view.dtype()), None)?;
        let py = value.py();
        crate::tensor::heavy(py, view.numel(), || view.assign(&src)).py()
    }
}
