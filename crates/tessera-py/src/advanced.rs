//! Keys with integer arrays and boolean masks (`t[[0, 2], 1:]`, `t[t > 0]`): parsed into
//! [`IndexItem`]s for the core's `Tensor::get` / `Tensor::set` (docs/design.md X1-X5),
//! and `take` / `take_along_axis`. Basic keys never come here: `indexing.rs` parses them
//! first and falls back to this parser only when it meets an item it does not know.

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PySlice, PyTuple};
use tessera::index::IndexSpec;
use tessera::IndexItem;
use tessera::{DType, Tensor};

use crate::convert::{numpy, to_tensor, DimList};
use crate::errors::PyRes;
use crate::handle::PyTensor;

fn not_an_index(item: &Bound<'_, PyAny>) -> PyErr {
    let ty = item
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean arrays \
         are valid indices (got {ty})"
    ))
}

fn not_integer(dtype: &str) -> PyErr {
    PyIndexError::new_err(format!(
        "arrays used as indices must be of integer (or boolean) type, got {dtype}"
    ))
}

/// A NumPy array (or something `np.asarray` takes) as an index tensor: bool stays bool, any
/// integer dtype becomes int64, an empty float array (`[]`) is an empty int64 array (NumPy),
/// anything else is an IndexError.
fn array_index(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let arr = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => numpy(obj.py())?
            .call_method1("asarray", (obj,))?
            .cast_into::<PyUntypedArray>()?,
    };
    let descr = arr.dtype();
    let kind = descr.kind();
    match kind {
        b'b' => to_tensor(arr.as_any(), Some(DType::Bool), None),
        b'i' | b'u' => to_tensor(arr.as_any(), Some(DType::I64), None),
        _ if arr.len() == 0 && !obj.is_instance_of::<PyUntypedArray>() => {
            to_tensor(arr.as_any(), Some(DType::I64), None)
        }
        _ => Err(not_integer(&descr.to_string())),
    }
}

/// One item of a key.
fn item(obj: &Bound<'_, PyAny>, items: &mut Vec<IndexItem>) -> PyResult<()> {
    let spec = if obj.is_exact_instance_of::<PyBool>() {
        let b = obj.extract::<bool>()?;
        return push_array(Tensor::scalar(b, DType::Bool).py()?, items);
    } else if obj.is_exact_instance_of::<PyInt>() {
        point(obj)?
    } else if let Ok(slice) = obj.cast_exact::<PySlice>() {
        let mut specs = DimList::new();
        crate::slices::parse_slice(slice, &mut specs)?;
        specs[0]
    } else if obj.is_none() {
        IndexSpec::NewAxis
    } else if obj.is(obj.py().Ellipsis()) {
        IndexSpec::Ellipsis
    } else if let Ok(t) = obj.cast::<PyTensor>() {
        let t = t.get().t().clone();
        if t.dtype() != DType::Bool && !t.dtype().is_integer() {
            return Err(not_integer(t.dtype().name()));
        }
        return push_array(t, items);
    } else if obj.is_instance_of::<PyUntypedArray>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
    {
        return push_array(array_index(obj)?, items);
    } else if obj.hasattr("__index__")? && !obj.hasattr("dtype")? {
        point(obj)?
    } else if obj.hasattr("dtype")? && obj.hasattr("ndim")? {
        // NumPy scalars: np.bool_ is a 0-d mask, integer scalars are points.
        let t = array_index(obj)?;
        if t.dtype() == DType::Bool {
            return push_array(t, items);
        }
        IndexSpec::Point(obj.extract::<isize>()?)
    } else {
        return Err(not_an_index(obj));
    };
    items.push(IndexItem::Spec(spec));
    Ok(())
}

fn push_array(t: Tensor, items: &mut Vec<IndexItem>) -> PyResult<()> {
    items.push(IndexItem::Array(t));
    Ok(())
}

fn point(obj: &Bound<'_, PyAny>) -> PyResult<IndexSpec> {
    obj.extract::<isize>().map(IndexSpec::Point).map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            PyIndexError::new_err(format!("index {obj} is out of bounds"))
        } else {
            e
        }
    })
}

/// The items of `key` (a tuple is a list of items; anything else is one item).
pub fn parse_items(key: &Bound<'_, PyAny>) -> PyResult<Vec<IndexItem>> {
    let mut items = Vec::new();
    if let Ok(tup) = key.cast_exact::<PyTuple>() {
        for obj in tup.iter() {
            item(&obj, &mut items)?;
        }
    } else {
        item(key, &mut items)?;
    }
    Ok(items)
}

fn index_tensor(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(t.get().t().clone());
    }
    to_tensor(obj, None, None)
}

/// Array API `take(x, indices, /, *, axis=None)`: the entries of integer `indices` along
/// `axis` (optional only for 1-D `x`); out of range is an IndexError.
#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis=None))]
pub fn take(
    x: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    axis: Option<isize>,
) -> PyResult<PyTensor> {
    let x = index_tensor(x)?;
    let i = index_tensor(indices)?;
    x.take(&i, axis).py().map(Into::into)
}

/// Array API `take_along_axis(x, indices, /, axis=-1)`: `x` indexed by `indices` (same rank,
/// broadcast in the other dims) along `axis`; out of range is an IndexError.
#[pyfunction]
#[pyo3(signature = (x, indices, /, *, axis=-1))]
pub fn take_along_axis(
    x: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    axis: isize,
) -> PyResult<PyTensor> {
    let x = index_tensor(x)?;
    let i = index_tensor(indices)?;
    x.take_along_axis(&i, axis).py().map(Into::into)
}
