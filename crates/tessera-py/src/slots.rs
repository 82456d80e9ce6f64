//! Hand-written C entry points for the hottest per-call paths: `Tensor.__getitem__` (`t[i]`,
//! `t[a:b]`, a view key in a loop), `tessera.from_dlpack` with one argument, and the
//! deallocation of every `Tensor` object (which [`install`] takes out of the cycle collector).
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
//!
//! [`install_from_dlpack`] replaces the module's `from_dlpack` with [`from_dlpack`], a
//! `METH_FASTCALL | METH_KEYWORDS` function that runs [`crate::dlpack::import`] for a call
//! with one positional argument and no keywords, and hands any other call to pyo3's
//! function, kept in [`PYO3_FROM_DLPACK`].
//!
//! Both make their result with [`new_object`], which writes the tensor straight into a
//! freshly allocated object rather than through pyo3's constructor (a copy that stalled).

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::PyTypeInfo;

use tessera::Tensor;

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
            .map(|view| new_object(py, view))
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
        Err(payload) => panic_error(payload.as_ref(), "Tensor.__getitem__"),
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// Where a `Tensor` object's `PyTensor` value starts, in bytes from the object's address,
/// when [`install`] found the value to be all of pyo3's per-instance contents (see
/// [`new_object`]); unset otherwise, and [`new_object`] then calls pyo3's constructor.
static VALUE_OFFSET: OnceLock<usize> = OnceLock::new();

/// A new `Tensor` object holding `t` (a new reference): what `Bound::new` makes, built in
/// place. pyo3's constructor takes the value by pointer and copies it into the object; the
/// copy's wide loads of a value just written in narrow stores waited for those stores to
/// reach the cache (perf: a third of `from_dlpack`'s own time was in pyo3's constructor).
/// Here the type's `tp_alloc` makes the object (what `object.__new__`, the base `tp_new`
/// pyo3 calls, does; `tessera.Tensor` is final, so the type is exact) and the value is
/// written straight into it.
#[inline(always)]
fn new_object(py: Python<'_>, t: Tensor) -> PyResult<*mut ffi::PyObject> {
    let Some(&offset) = VALUE_OFFSET.get() else {
        return Ok(Bound::new(py, PyTensor::from(t))?.into_ptr());
    };
    let tp = PyTensor::type_object_raw(py);
    // SAFETY: `tp` is the live `Tensor` type; its `tp_alloc` (inherited from `object` when
    // not set) returns a zeroed object of the type's basic size with its header and type
    // reference set, or null with an exception set.
    let obj = unsafe { ((*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc))(tp, 0) };
    if obj.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `obj` is a fresh object of `Tensor`'s exact type, so it has the layout
    // `install` measured: the `PyTensor` value at `offset` is all that pyo3 would write (the
    // rest of pyo3's contents has no size), aligned (pyo3 placed it there), and unwritten.
    unsafe {
        obj.cast::<u8>()
            .add(offset)
            .cast::<PyTensor>()
            .write(PyTensor::from(t))
    };
    Ok(obj)
}

/// The offset [`new_object`] writes at, if [`install`] kept one (exposed to Python as
/// `tessera._native._tensor_value_offset`, so that a test notices a pyo3 upgrade that turns
/// the in-place construction off).
pub fn value_offset() -> Option<usize> {
    VALUE_OFFSET.get().copied()
}

/// Measures where pyo3 puts a `Tensor` object's value, and keeps the offset for
/// [`new_object`] if the value is all of pyo3's per-instance contents: the value starts right
/// after the object header and the object's size is the header plus the value (so nothing
/// else has a size: not the borrow checker, thread checker, dict or weak-reference slots of
/// a frozen, sendable class without `dict` or `weakref`), and the type allocates exactly
/// that. A pyo3 release that laid the object out
/// otherwise leaves the offset unset, and objects are made by pyo3's constructor.
fn measure_value_offset(py: Python<'_>) -> PyResult<()> {
    use pyo3::impl_::pyclass::PyClassImpl;
    let probe = Tensor::zeros(&[], tessera::DType::F32).map_err(crate::errors::to_py)?;
    let probe = Bound::new(py, PyTensor::from(probe))?;
    let offset = (probe.get() as *const PyTensor as usize).wrapping_sub(probe.as_ptr() as usize);
    let object_size = std::mem::size_of::<<PyTensor as PyClassImpl>::Layout>();
    let tp = PyTensor::type_object_raw(py);
    // SAFETY: `tp` is the live `Tensor` type; reading its basic size.
    let basic_size = unsafe { (*tp).tp_basicsize } as usize;
    if offset == std::mem::size_of::<ffi::PyObject>()
        && offset + std::mem::size_of::<PyTensor>() == object_size
        && basic_size == object_size
    {
        let _ = VALUE_OFFSET.set(offset);
    }
    Ok(())
}

/// The Python exception for a panic caught in the entry point `what`.
fn panic_error(payload: &(dyn std::any::Any + Send), what: &str) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| format!("panic in {what}"));
    PanicException::new_err(msg)
}

/// pyo3's `tessera.from_dlpack` function object, which [`from_dlpack`] hands every call but
/// `from_dlpack(x)`.
static PYO3_FROM_DLPACK: OnceLock<Py<PyAny>> = OnceLock::new();

/// `tessera.from_dlpack(x, /, *, device=None, copy=None)` as a C function
/// (`METH_FASTCALL | METH_KEYWORDS`): the one-argument call, which consumers make in a loop,
/// without pyo3's trampoline and argument parser.
///
/// # Safety
/// Called by the interpreter only, on an attached thread, with `args` holding
/// `PyVectorcall_NARGS(nargsf)` positional arguments followed by one per name in `kwnames`.
unsafe extern "C" fn from_dlpack(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: the interpreter calls C functions on an attached thread.
    let py = unsafe { Python::assume_attached() };
    // SAFETY: `nargsf` is the count the interpreter passed, maybe with its offset flag.
    let nargs = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) };
    if nargs != 1 || !kwnames.is_null() {
        return match PYO3_FROM_DLPACK.get() {
            // SAFETY: the arguments this call received, passed on as received to pyo3's
            // function (a vectorcall object).
            Some(f) => unsafe {
                ffi::PyObject_Vectorcall(f.as_ptr(), args, nargsf as usize, kwnames)
            },
            None => {
                PyRuntimeError::new_err("tessera.from_dlpack: pyo3's function was not kept")
                    .restore(py);
                std::ptr::null_mut()
            }
        };
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: one positional argument (checked above), a valid borrowed pointer.
        let x = unsafe { Bound::<PyAny>::from_borrowed_ptr(py, *args) };
        new_object(py, crate::dlpack::import(&x, None)?)
    }));
    let err = match result {
        Ok(Ok(obj)) => return obj,
        Ok(Err(e)) => e,
        Err(payload) => panic_error(payload.as_ref(), "tessera.from_dlpack"),
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// Replaces the module's `from_dlpack` (pyo3's, registered by `dlpack::register`) with the C
/// function [`from_dlpack`], under the same name, signature and documentation.
pub fn install_from_dlpack(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let pyo3_fn = m.getattr("from_dlpack")?;
    let doc: String = pyo3_fn.getattr("__doc__")?.extract()?;
    let signature: String = pyo3_fn.getattr("__text_signature__")?.extract()?;
    let doc = CString::new(format!("from_dlpack{signature}\n--\n\n{doc}"))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    // The definition must outlive the function object, which the module keeps for the life
    // of the process (a module is initialised once): both are leaked on purpose, once.
    let def = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"from_dlpack".as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: from_dlpack,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc.into_raw(),
    }));
    let name = m.getattr("__name__")?;
    // SAFETY: `def` is a valid method definition that is never freed; `m` and `name` are
    // live objects (the function's `self` and `__module__`). The result is a new reference,
    // or null with an exception set.
    let f = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyCFunction_NewEx(def, m.as_ptr(), name.as_ptr()))?
    };
    let _ = PYO3_FROM_DLPACK.set(pyo3_fn.unbind());
    m.setattr("from_dlpack", f)
}

/// `Tensor`'s `tp_dealloc` once [`install`] has made it a type whose instances the cycle
/// collector does not track: pyo3's own deallocation of the object (it drops the
/// [`PyTensor`], frees the memory with the type's `tp_free` and releases the type), without
/// pyo3's slot around it, which first untracks the object from the collector (reading the
/// header that such an object no longer has) and counts the thread's attachment (pyo3 wants
/// that count when a `Py` handle is dropped; a `PyTensor` holds none: core tensors, whose
/// foreign memory is released by C deleters that take the GIL themselves).
///
/// # Safety
/// Called by the interpreter only, on an attached thread, with `obj` a `Tensor` whose last
/// reference is gone.
unsafe extern "C" fn dealloc(obj: *mut ffi::PyObject) {
    use pyo3::impl_::pycell::PyClassObjectBaseLayout;
    use pyo3::impl_::pyclass::PyClassImpl;
    // SAFETY: the interpreter calls `tp_dealloc` on an attached thread.
    let py = unsafe { Python::assume_attached() };
    let done = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `obj` is a `Tensor` (a final class, so exactly this layout) that no
        // reference reaches any more, as pyo3's slot requires.
        unsafe {
            <<PyTensor as PyClassImpl>::Layout as PyClassObjectBaseLayout<PyTensor>>::tp_dealloc(
                py, obj,
            )
        }
    }));
    if done.is_err() {
        // A panic in a destructor left the object half dropped; nothing can be reported from
        // here (pyo3's slot aborts too).
        std::process::abort();
    }
}

/// Installs [`subscript`] as `Tensor`'s `mp_subscript`, makes `Tensor` a type the cycle
/// collector does not track (module initialisation, once the type exists and before any
/// instance does), and measures the object layout for [`new_object`].
///
/// pyo3 gives every class `Py_TPFLAGS_HAVE_GC`, so each tensor made from Python carried a
/// collector header and was linked into and out of the collector's list; with no
/// `__traverse__` it reported no references, so the collector could never break a cycle
/// through it anyway. (Nor can one form: a `PyTensor` holds core tensors only, and its
/// handle is frozen.) Without the flag, the allocation skips the header and the list,
/// `tp_free` is `PyObject_Free`, and [`dealloc`] replaces pyo3's slot.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let tp = PyTensor::type_object_raw(py);
    // SAFETY: `tp` is the live heap type pyo3 made for `Tensor`, final (no subclass inherits
    // these slots), and no instance exists yet (module initialisation, right after the class
    // was added), so none was allocated with the collector's header that `PyObject_Free`
    // would not expect. The interpreter reads the flags and slots at each allocation and
    // deallocation, and `PyType_Modified` drops any cached lookups.
    unsafe {
        if (*tp).tp_flags & ffi::Py_TPFLAGS_HAVE_GC != 0 {
            (*tp).tp_flags &= !ffi::Py_TPFLAGS_HAVE_GC;
            (*tp).tp_traverse = None;
            (*tp).tp_clear = None;
            (*tp).tp_free = Some(ffi::PyObject_Free);
            (*tp).tp_dealloc = Some(dealloc);
            ffi::PyType_Modified(tp);
        }
    }
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
    measure_value_offset(py)
}
