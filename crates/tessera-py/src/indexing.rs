//! `t[key]` and `t[key] = value`: NumPy basic indexing parsed in Rust straight into
//! [`IndexSpec`]s (ints, slices with any step, `None`, `Ellipsis`), without Python-level loops
//! or heap allocation for up to 8 indices.

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PySlice, PyTuple};
use tessera::index::IndexSpec;
use tessera::promote::result_type_scalar;
use tessera::IndexItem;
use tessera::{Scalar, Tensor};

use crate::convert::{to_tensor, weak_scalar, DimList};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// Parses a key (one index or a tuple of them) into `specs`.
pub fn parse_key(key: &Bound<'_, PyAny>, specs: &mut DimList<IndexSpec>) -> PyResult<()> {
    if let Ok(tup) = key.cast_exact::<PyTuple>() {
        for item in tup.iter_borrowed() {
            parse_index(&item, specs)?;
        }
        Ok(())
    } else {
        parse_index(key, specs)
    }
}

fn unsupported(item: &Bound<'_, PyAny>) -> PyErr {
    let ty = item
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`) and None are valid indices (got {ty}); \
         arrays of integers or booleans are taken by the advanced-indexing parser"
    ))
}

fn point(item: &Bound<'_, PyAny>) -> PyResult<IndexSpec> {
    point_of(item).map(IndexSpec::Point)
}

/// An integer index (an `isize`: a larger one is out of bounds for any tensor).
#[inline(always)]
fn point_of(item: &Bound<'_, PyAny>) -> PyResult<isize> {
    item.extract::<isize>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(item.py()) {
            PyIndexError::new_err(format!("index {item} is out of bounds"))
        } else {
            e
        }
    })
}

/// True for `...`.
#[inline(always)]
fn is_ellipsis(item: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `Py_Ellipsis` returns a borrowed pointer to the immortal `...` singleton.
    item.as_ptr() == unsafe { ffi::Py_Ellipsis() }
}

/// True when the object has `__index__` (NumPy integer scalars).
pub(crate) fn has_index(item: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `item` is a valid object pointer while the GIL is held; the check only reads
    // its type's slots.
    unsafe { ffi::PyIndex_Check(item.as_ptr()) != 0 }
}

/// One index: an int (or anything with `__index__` but bool), a slice, `None` or `...`.
/// Specs are pushed in place rather than returned: a returned `PyResult<IndexSpec>` costs a
/// store-forwarding stall per index on this hot path.
#[inline(always)]
fn parse_index(item: &Bound<'_, PyAny>, specs: &mut DimList<IndexSpec>) -> PyResult<()> {
    let spec = if item.is_exact_instance_of::<PyInt>() {
        point(item)?
    } else if let Ok(slice) = item.cast_exact::<PySlice>() {
        return crate::slices::parse_slice(slice, specs);
    } else if item.is_none() {
        IndexSpec::NewAxis
    } else if is_ellipsis(item) {
        IndexSpec::Ellipsis
    } else if item.is_instance_of::<PyBool>() {
        return Err(unsupported(item));
    } else if item
        .cast::<PyUntypedArray>()
        .is_ok_and(|a| a.ndim() != 0 || a.dtype().kind() == b'b')
    {
        // NumPy arrays have `__index__` too (it raises TypeError unless 0-d): an array key
        // (or a 0-d bool array, a mask) is advanced indexing, for `advanced.rs`.
        return Err(unsupported(item));
    } else if item.is_instance_of::<PyTensor>() {
        // Tensors have `__index__` too (0-d integer ones), but a tensor key is always advanced
        // indexing (docs/design.md X1), for `advanced.rs`.
        return Err(unsupported(item));
    } else if has_index(item) {
        // NumPy integer scalars (not np.bool_, which has no __index__ in NumPy 2).
        point(item)?
    } else {
        return Err(unsupported(item));
    };
    specs.push(spec);
    Ok(())
}

/// Parses `key`: the fast basic parser first, into `specs` (a buffer on the caller's frame:
/// returning up to 8 inline specs of 48 bytes by value copied them on every `t[i]`); a key it
/// refuses goes to the advanced parser (which raises the IndexError for a key that is
/// neither). `None` for a basic key (ints, slices, `None`, `...`: a view), the items of an
/// advanced one (integer arrays or boolean masks: a copy) otherwise.
pub fn parse(
    key: &Bound<'_, PyAny>,
    specs: &mut DimList<IndexSpec>,
) -> PyResult<Option<Vec<IndexItem>>> {
    match parse_key(key, specs) {
        Ok(()) => Ok(None),
        Err(e) if e.is_instance_of::<PyIndexError>(key.py()) => {
            Ok(Some(crate::advanced::parse_items(key)?))
        }
        Err(e) => Err(e),
    }
}

/// The points of a key made of Python ints only (`i`, or a tuple `(i, j, ...)` of at most
/// 8), for [`Tensor::index_points`]; `None` for any other key.
#[inline(always)]
fn int_points(key: &Bound<'_, PyAny>) -> PyResult<Option<DimList<isize>>> {
    let mut points = DimList::new();
    if key.is_exact_instance_of::<PyInt>() {
        points.push(point_of(key)?);
    } else if let Ok(tup) = key.cast_exact::<PyTuple>() {
        if tup.len() > points.inline_size() {
            return Ok(None);
        }
        for item in tup.iter_borrowed() {
            if !item.is_exact_instance_of::<PyInt>() {
                return Ok(None);
            }
            points.push(point_of(&item)?);
        }
    } else {
        return Ok(None);
    }
    Ok(Some(points))
}

/// `t[key]` for a basic key (ints, slices, `None`, `...`): the view, or `None` with nothing
/// done for a key the basic parser refuses (an advanced key, or an invalid one).
#[inline(always)]
pub fn index_basic(t: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Option<Tensor>> {
    // Ints only (`t[i]`, `t[i, j]`): the view's shape comes from the base's descriptor, with
    // no spec list to build and walk (the whole key parse cost more than the view).
    if let Some(points) = int_points(key)? {
        return t.index_points(&points).py().map(Some);
    }
    let mut specs = DimList::new();
    match parse_key(key, &mut specs) {
        Ok(()) => t.index(&specs).py().map(Some),
        Err(e) if e.is_instance_of::<PyIndexError>(key.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `t[key]`: a view for a basic key, a copy for an advanced one.
pub fn index(t: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match index_basic(t, key)? {
        Some(view) => Ok(view),
        None => t.get(&crate::advanced::parse_items(key)?).py(),
    }
}

/// `value` as a tensor of `dtype` for `t[key] = value` (a Python int that does not fit an
/// integer dtype is NumPy 2's OverflowError).
fn value_tensor(value: &Bound<'_, PyAny>, dtype: tessera::DType) -> PyResult<Tensor> {
    if let Some(s) = weak_scalar(value)? {
        check_int_fits(dtype, s)?;
        return Tensor::scalar(s, dtype).py();
    }
    to_tensor(value, Some(dtype), None)
}

fn check_int_fits(dtype: tessera::DType, s: Scalar) -> PyResult<()> {
    if let Scalar::Int(_) = s {
        if dtype.is_integer() {
            result_type_scalar(dtype, s).map_err(|e| PyOverflowError::new_err(e.to_string()))?;
        }
    }
    Ok(())
}

#[pymethods]
impl PyTensor {
    /// Basic indexing: ints, slices (negative steps too), `None` and `...` give views that
    /// share storage with this tensor (NumPy semantics). Keys with integer arrays (tensors,
    /// NumPy arrays, lists) or boolean masks give copies, laid out as NumPy lays them out.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        index(self.t(), key).map(Into::into)
    }

    /// `t[key] = value` writes into this tensor's storage, broadcasting `value` (converted
    /// with `asarray` and cast to this tensor's dtype). With an advanced key and repeated
    /// indices, the last write wins (NumPy).
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = self.t();
        let mut specs = DimList::new();
        let view = match parse(key, &mut specs)? {
            None => t.index(&specs).py()?,
            Some(items) => {
                let src = value_tensor(value, t.dtype())?;
                let n = src.numel();
                return crate::tensor::heavy(value.py(), n, || t.set(&items, &src)).py();
            }
        };
        if let Some(s) = weak_scalar(value)? {
            check_int_fits(view.dtype(), s)?;
            return view.fill_(s).py();
        }
        let src = to_tensor(value, Some(view.dtype()), None)?;
        let py = value.py();
        crate::tensor::heavy(py, view.numel(), || view.assign(&src)).py()
    }
}
