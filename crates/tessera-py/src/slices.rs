//! Python slices as index specs, for the basic key parser ([`crate::indexing`]) and the
//! advanced one ([`crate::advanced`]): the hot path reads plain-int slices directly.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PySlice;
use tessera::index::IndexSpec;

use crate::convert::DimList;

/// A slice bound or step that is `None` or an exact Python int fitting `isize`: `Some(v)`
/// with `v = None` for `None`; `None` when the slow path must decide.
///
/// # Safety
/// `obj` must be a valid object pointer while the GIL is held.
#[inline(always)]
unsafe fn fast_bound(obj: *mut ffi::PyObject) -> Option<Option<isize>> {
    if obj == ffi::Py_None() {
        return Some(None);
    }
    if ffi::PyLong_CheckExact(obj) != 0 {
        let mut overflow = 0;
        let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
        if overflow == 0 && (v != -1 || ffi::PyErr_Occurred().is_null()) {
            return isize::try_from(v).ok().map(Some);
        }
        ffi::PyErr_Clear();
    }
    None
}

/// A slice as an interval; `None` bounds stay absent, a zero step is Python's ValueError.
/// Slices of plain ints and `None` are read directly; anything else (NumPy ints, huge ints)
/// goes through `PySlice_Unpack`, which applies `__index__` and clamps like Python.
#[inline(always)]
pub(crate) fn parse_slice(
    slice: &Bound<'_, PySlice>,
    specs: &mut DimList<IndexSpec>,
) -> PyResult<()> {
    let raw = slice.as_ptr().cast::<ffi::PySliceObject>();
    // SAFETY: `slice` is an exact `slice` object (checked by the caller's `cast_exact`), so
    // the pointer is a valid `PySliceObject` whose fields are valid object pointers.
    let fast = unsafe {
        (
            fast_bound((*raw).start),
            fast_bound((*raw).stop),
            fast_bound((*raw).step),
        )
    };
    if let (Some(start), Some(end), Some(step)) = fast {
        let step = step.unwrap_or(1);
        if step != 0 {
            specs.push(IndexSpec::Interval {
                start,
                end,
                step,
                inclusive: false,
            });
            return Ok(());
        }
    }
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
    specs.push(IndexSpec::Interval {
        start,
        end,
        step,
        inclusive: false,
    });
    Ok(())
}
