//! A hand-written C slot for `Tensor.__getitem__`, the hottest per-call path (`t[i]`,
//! `t[a:b]`, a view key in a loop).
//!
//! pyo3 wraps every method in a trampoline that counts the thread's attachment in a
//! thread-local (two `__tls_get_addr` calls in a shared library), checks the deferred
//! reference pool, catches panics, and extracts `self` with a type check. On `t[i]` those were
//! about 15 ns of the 110-180 ns a call takes (perf: `AttachGuard::assume`/`drop`,
//! `__tls_get_addr`, the trampoline and the method wrapper). [`install`] replaces the type's
//! `mp_subscript` with [`subscript`], which does only what a basic key needs: it catches
//! panics and calls the same [`crate::indexing::index_basic`] as the pyo3 method. Any other key
//! (advanced indexing, which may release the GIL for a large copy and drop Python references,
//! for which pyo3 wants its attachment count) goes to pyo3's slot, kept in [`PYO3_SUBSCRIPT`].
//! `Tensor.__getitem__` (the method object) stays pyo3's; both spellings behave alike.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::PyTypeInfo;

use crate::handle::PyTensor;

/// pyo3's `mp_subscript` of `Tensor`, which [`subscript`] hands every key that is not basic.
static PYO3_SUBSCRIPT: OnceLock<ffi::binaryfunc> = OnceLock::new();

/// `Tensor`'s `mp_subscript`: `t[key]`.
///
/// # Safety
/// Called by the interpreter only, on an attached thread, with `slf` a `Tensor` (the slot is
/// installed on that final class alone) and `key` a valid object.
unsafe extern "C" fn subscript(
    slf: *mut ffi::PyObject,
    key: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: the interpreter calls slots on an attached thread.
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: both are valid borrowed pointers for the call; `slf` is a `Tensor`, whose
        // class is final (no Python subclass can reach this slot with another layout).
        let (slf, key) = unsafe {
            (
                Bound::<PyAny>::from_borrowed_ptr(py, slf),
                Bound::<PyAny>::from_borrowed_ptr(py, key),
            )
        };
        // SAFETY: as above, `slf` is a `Tensor`.
        let t = unsafe { slf.cast_unchecked::<PyTensor>() };
        crate::indexing::index_basic(t.get().t(), &key)?
            .map(|view| Ok(Bound::new(py, PyTensor::from(view))?.into_ptr()))
            .transpose()
    }));
    let err = match result {
        Ok(Ok(Some(obj))) => return obj,
        Ok(Ok(None)) => match PYO3_SUBSCRIPT.get() {
            // SAFETY: the pointer pyo3 installed for this slot, called as the interpreter
            // would, with the arguments this call received.
            Some(pyo3_slot) => return unsafe { pyo3_slot(slf, key) },
            None => PyRuntimeError::new_err("Tensor.__getitem__: pyo3's slot was not kept"),
        },
        Ok(Err(e)) => e,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic in Tensor.__getitem__".into());
            PanicException::new_err(msg)
        }
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// Installs [`subscript`] as `Tensor`'s `mp_subscript` (module initialisation, once the type
/// exists).
pub fn install(py: Python<'_>) {
    let tp = PyTensor::type_object_raw(py);
    // SAFETY: `tp` is the live heap type pyo3 made for `Tensor`; a heap type's mapping
    // methods are its own `PyHeapTypeObject::as_mapping`, writable, and non-null since pyo3
    // gave it `__getitem__`. The interpreter reads the slot at each call, and
    // `PyType_Modified` drops any cached lookups of the type.
    unsafe {
        let mapping = (*tp).tp_as_mapping;
        if let Some(pyo3_slot) = mapping.as_ref().and_then(|m| m.mp_subscript) {
            let _ = PYO3_SUBSCRIPT.set(pyo3_slot);
            (*mapping).mp_subscript = Some(subscript);
            ffi::PyType_Modified(tp);
        }
    }
}
