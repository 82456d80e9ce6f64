//! DLPack, the array-interchange protocol of the Array API standard (docs/design.md I1-I3):
//! `Tensor.__dlpack__` / `__dlpack_device__` export a tensor without a copy, and
//! `tessera.from_dlpack` adopts another library's memory without a copy, through a storage
//! that holds the producer's deleter and runs it exactly once when the last view goes.
//! The capsules, the managed-tensor structs and the protocol negotiation (versioned or legacy
//! ABI, `max_version`, `dl_device`, `copy`) come from the `dlpark` crate.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;
use std::sync::Arc;

use dlpark::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned,
    DLTensor, DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};
use dlpark::metadata::Dynamic;
use dlpark::python::{
    export_dlpack, from_dlpack as import_dlpack, DlpackExporter, ExportRequest, ImportedDlpack,
};
use dlpark::{DlpackFlags, Managed as DlparkManaged, ManagedTensorBase};
use pyo3::exceptions::{PyAttributeError, PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyCapsule, PyString, PyTuple};
use smallvec::SmallVec;
use tessera::{CompareOp, DType, Layout, Shape, Storage, StorageType, Tensor};

use crate::errors::PyRes;
use crate::handle::PyTensor;

/// The one device Tessera tensors live on.
const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::CPU,
    device_id: 0,
};

/// Each dtype's DLPack type code and bit width (one lane). Types DLPack has no code for
/// cannot cross.
const DL_TYPES: &[(DType, DLDataTypeCode, u8)] = &[
    (DType::Bool, DLDataTypeCode::BOOL, 8),
    (DType::U8, DLDataTypeCode::UINT, 8),
    (DType::I8, DLDataTypeCode::INT, 8),
    (DType::I16, DLDataTypeCode::INT, 16),
    (DType::U16, DLDataTypeCode::UINT, 16),
    (DType::I32, DLDataTypeCode::INT, 32),
    (DType::U32, DLDataTypeCode::UINT, 32),
    (DType::I64, DLDataTypeCode::INT, 64),
    (DType::U64, DLDataTypeCode::UINT, 64),
    (DType::F16, DLDataTypeCode::FLOAT, 16),
    (DType::BF16, DLDataTypeCode::BFLOAT, 16),
    (DType::F32, DLDataTypeCode::FLOAT, 32),
    (DType::F64, DLDataTypeCode::FLOAT, 64),
    (DType::C64, DLDataTypeCode::COMPLEX, 64),
    (DType::C128, DLDataTypeCode::COMPLEX, 128),
];

fn dl_dtype(d: DType) -> PyResult<DLDataType> {
    DL_TYPES
        .iter()
        .find(|(t, _, _)| *t == d)
        .map(|&(_, code, bits)| DLDataType {
            code,
            bits,
            lanes: 1,
        })
        .ok_or_else(|| PyBufferError::new_err(format!("{d} has no DLPack type")))
}

fn tessera_dtype(t: DLDataType) -> PyResult<DType> {
    DL_TYPES
        .iter()
        .find(|&&(_, code, bits)| code == t.code && bits == t.bits && t.lanes == 1)
        .map(|&(d, _, _)| d)
        .ok_or_else(|| {
            PyBufferError::new_err(format!(
                "DLPack type (code {}, {} bits, {} lanes) has no Tessera dtype",
                t.code.0, t.bits, t.lanes
            ))
        })
}

/// One export: the tensor (kept alive by every capsule made from it) and its flags.
struct Export {
    t: Tensor,
    flags: DlpackFlags,
}

impl Export {
    /// A fresh managed tensor describing `self.t`, owning a handle to it.
    fn managed<M: ManagedTensorBase>(&self) -> PyResult<DlparkManaged<M>> {
        let shape: Vec<i64> = self.t.shape().iter().map(|&d| d as i64).collect();
        let strides: Vec<i64> = self.t.strides().iter().map(|&s| s as i64).collect();
        let mut m = Dynamic::new(shape, strides)
            .initialize_as::<M>(Box::new(self.t.clone()))
            .map_err(|e| PyBufferError::new_err(e.to_string()))?;
        m.set_data(self.t.data_ptr().cast_mut().cast::<c_void>())
            .set_device(CPU)
            .set_dtype(dl_dtype(self.t.dtype())?)
            .set_byte_offset(0);
        m.set_flags(self.flags)
            .map_err(|e| PyBufferError::new_err(e.to_string()))?;
        // SAFETY: `data` is the address of the tensor's first element, inside the storage that
        // the context (a handle to the same tensor, dropped by the deleter) keeps alive; shape
        // and strides, in elements, are copied into the managed allocation and reach only
        // elements of that storage (the tensor's layout is checked against it); the flags say
        // READ_ONLY whenever the consumer must not write (bool tensors and tensors that
        // require a gradient, as for NumPy's export).
        Ok(unsafe { m.finish() })
    }
}

impl DlpackExporter for Export {
    fn device(&self) -> DLDevice {
        CPU
    }

    fn flags(&self) -> DlpackFlags {
        self.flags
    }

    fn prepare_export(&self, _py: Python<'_>, request: &ExportRequest<'_>) -> PyResult<()> {
        match request.stream() {
            Some(s) if !s.is_none() => Err(PyValueError::new_err(
                "stream must be None for a CPU tensor",
            )),
            _ => Ok(()),
        }
    }

    fn export_legacy(&self, _py: Python<'_>) -> PyResult<DlparkManaged<DLManagedTensor>> {
        self.managed()
    }

    fn export_versioned(
        &self,
        _py: Python<'_>,
    ) -> PyResult<DlparkManaged<DLManagedTensorVersioned>> {
        self.managed()
    }
}

#[pymethods]
impl PyTensor {
    /// A DLPack capsule of this tensor (Array API `__dlpack__`). Zero-copy unless
    /// `copy=True`; a sparse tensor exports a dense copy (`copy=False` refuses). Bool tensors
    /// and tensors that require a gradient are marked read-only (versioned ABI); a consumer
    /// of the legacy ABI, which has no read-only mark, gets a copy instead (or BufferError
    /// with `copy=False`). `dl_device` may only name the CPU, `stream` must be None.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(u32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let mut t = self.t().clone();
        let mut copied = false;
        if t.stype() != StorageType::Default {
            if copy == Some(false) {
                return Err(PyBufferError::new_err(format!(
                    "a {} tensor has no dense buffer to share: copy=False cannot be honoured",
                    t.stype().name()
                )));
            }
            t = t.cast_storage(StorageType::Default).py()?;
            copied = true;
        }
        let read_only = t.dtype() == DType::Bool || t.requires_grad();
        let legacy = max_version.is_none_or(|(major, _)| major < 1);
        if !copied && (copy == Some(true) || (read_only && legacy)) {
            if copy == Some(false) {
                return Err(PyBufferError::new_err(
                    "this tensor must not be written by the consumer and the legacy DLPack \
                     ABI cannot say so: pass max_version=(1, 0) or allow a copy",
                ));
            }
            t = t.detach().copy().py()?;
            copied = true;
        }
        let flags = if read_only && !copied {
            DlpackFlags::READ_ONLY
        } else {
            DlpackFlags::empty()
        };
        // The copy (if any) is made: what is left is a zero-copy export of `t`.
        let request = ExportRequest::parse(stream.as_ref(), max_version, dl_device, None)?;
        export_dlpack(&Export { t, flags }, py, request)
    }

    /// `(device type, device id)` of the DLPack CPU device: `(1, 0)`.
    fn __dlpack_device__(&self) -> (u32, i32) {
        (CPU.device_type.0, CPU.device_id)
    }
}

/// `tessera.from_dlpack(x, /, *, device=None, copy=None)`: a tensor over the memory of any
/// DLPack producer (an object with `__dlpack__`, or a capsule), without a copy when the
/// memory can be shared. A copy is made (or BufferError raised with `copy=False`) for
/// read-only memory, bool arrays (their bytes may be other than 0 and 1; the copy
/// normalises them, docs/design.md H7) and memory not aligned for its dtype.
#[pyfunction]
#[pyo3(signature = (x, /, *, device = None, copy = None))]
pub fn from_dlpack(
    x: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
) -> PyResult<PyTensor> {
    if let Some(d) = device.filter(|d| !d.is_none()) {
        if d.str()?.to_cow()? != "cpu" {
            return Err(PyValueError::new_err(format!(
                "Tessera tensors live on the CPU, not on {d}"
            )));
        }
    }
    import(x, copy).map(Into::into)
}

/// [`from_dlpack`] once the device is checked: the producer's capsule, consumed and adopted.
/// Also the body of the C entry point `slots::from_dlpack`, into which it is inlined so
/// that the tensor is built where that entry point writes it (into the new object).
#[inline(always)]
pub(crate) fn import(x: &Bound<'_, PyAny>, copy: Option<bool>) -> PyResult<Tensor> {
    let capsule = capsule_of(x, copy)?;
    // The copy request went to the producer; a capsule carries no options.
    let managed = consume_capsule(&capsule)?;
    adopt(managed, copy)
}

/// The most dims a DLPack tensor may have here (NumPy's limit too): a larger `ndim` is a
/// malformed descriptor, refused before anything is sized by it.
const MAX_NDIM: usize = 64;

// DLPack's int64 dims and strides are read in place as `usize` and `isize`.
const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<i64>());

fn bad_tensor(why: &str) -> PyErr {
    PyBufferError::new_err(format!("bad DLPack tensor: {why}"))
}

/// A tensor over the memory `m` describes (owning `m`, so the producer's deleter runs when
/// the last view goes), or over a copy of it (`m` released at once).
fn adopt(m: ImportedDlpack, copy: Option<bool>) -> PyResult<Tensor> {
    let flags = m.flags();
    // A copy asked for and not made by the producer (a capsule given directly) is made here.
    let copy_here = copy == Some(true) && !flags.contains(DlpackFlags::IS_COPIED);
    let dl = descriptor(&m);
    if dl.device.device_type != DLDeviceType::CPU {
        return Err(PyBufferError::new_err(format!(
            "DLPack device type {} is not the CPU",
            dl.device.device_type.0
        )));
    }
    let dtype = tessera_dtype(dl.dtype)?;
    let ndim = usize::try_from(dl.ndim)
        .ok()
        .filter(|&n| n <= MAX_NDIM)
        .ok_or_else(|| bad_tensor(&format!("ndim {} outside 0..={MAX_NDIM}", dl.ndim)))?;
    let (shape, given) = (dims_of(dl, ndim)?, strides_of(dl, ndim));
    // Dims first: an empty tensor is zeros whatever its strides say. DLPack's int64 dims
    // and strides are read in place as `usize`/`isize` (the same layout on the 64-bit
    // targets Tessera builds for), once checked non-negative.
    if shape.iter().any(|&d| d < 0) {
        return Err(bad_tensor("negative dim"));
    }
    let dims: &[usize] = bytemuck::cast_slice(shape);
    if dims.contains(&0) {
        return Tensor::zeros(dims, dtype).py();
    }
    // Strides in elements: the producer's, or row-major when it gives none (NumPy gives
    // none for C-contiguous arrays). Computed here rather than by `Shape::contiguous`, which
    // builds them in a `DimVec` and measured slower on this path: bench_dlpack 1.07-1.10
    // against 0.95-1.00 (paired runs, 2026-12-03).
    let overflow = || bad_tensor("its shape and strides overflow the address space");
    let row_major: SmallVec<[isize; 8]>;
    let strides: &[isize] = match given {
        Some(g) => bytemuck::cast_slice(g),
        None => {
            let mut compact = 1isize;
            row_major = dims
                .iter()
                .rev()
                .map(|&d| {
                    let s = compact;
                    compact = compact.checked_mul(d as isize).ok_or_else(overflow)?;
                    Ok(s)
                })
                .collect::<PyResult<SmallVec<[isize; 8]>>>()?
                .into_iter()
                .rev()
                .collect();
            &row_major
        }
    };
    // The interned shape checks that every offset the strides reach fits in `isize` and
    // knows the lowest and highest of them, `lo ..= hi` relative to the first element.
    let layout_shape = Shape::new(dims, strides).map_err(|e| bad_tensor(&e.to_string()))?;
    let (lo, hi) = layout_shape.offset_span();
    let item = dtype.itemsize();
    // `hi - lo` is at most the span the shape checked, so neither step overflows.
    let len = (hi - lo) as usize + 1;
    // The lowest element the strides reach: its address checked in integers, the pointer
    // derived from the producer's (so it keeps the producer's provenance).
    let byte_lo = lo.checked_mul(item as isize).ok_or_else(overflow)?;
    let base = (dl.data as usize)
        .checked_add(dl.byte_offset as usize)
        .and_then(|first| first.checked_add_signed(byte_lo))
        .ok_or_else(overflow)?;
    let ptr = dl
        .data
        .cast::<u8>()
        .wrapping_add(dl.byte_offset as usize)
        .wrapping_offset(byte_lo);
    let ptr = NonNull::new(ptr).ok_or_else(|| PyBufferError::new_err("null data"))?;
    let offset = lo.unsigned_abs();
    let aligned = base.is_multiple_of(tessera::with_dtype!(dtype, T => std::mem::align_of::<T>()));
    if dtype != DType::Bool && aligned && !flags.contains(DlpackFlags::READ_ONLY) && !copy_here {
        let (release, ctx) = into_release(m);
        // SAFETY: the producer's descriptor makes the `len * item` bytes from `base` (the
        // lowest element the strides reach) writable memory of the producer until its
        // deleter runs, which `release(ctx)` does (once, from any thread: DLPack deleters
        // may run on any thread and take what locks they need, NumPy's the GIL);
        // `from_external_release` checks the alignment; every bit pattern is a valid value
        // of a non-bool dtype. Accesses by the producer's own arrays must not race with
        // Tessera's, as for NumPy views of Tessera memory (docs/design.md I1).
        let storage =
            unsafe { Storage::from_external_release(dtype, len, ptr, release, ctx) }.py()?;
        return Tensor::from_storage_layout(storage, Layout::new(layout_shape, offset)).py();
    }
    if copy == Some(false) {
        return Err(PyBufferError::new_err(
            "copy=False, but this memory cannot be shared: it is read-only, bool (bytes other \
             than 0 and 1 must not reach Tessera) or not aligned for its dtype",
        ));
    }
    copy_of(m, dtype, ptr, len, Layout::new(layout_shape, offset))
}

/// [`adopt`]'s copy: the `len` elements of `dtype` from `ptr` (the lowest element the
/// producer's strides reach, which `layout` places at its span's start) into a fresh storage
/// (bool as bytes, normalised after), `layout` over it, then compact unless it covers the
/// whole copy. `m` is released once the bytes are copied.
#[inline(never)]
fn copy_of(
    m: ImportedDlpack,
    dtype: DType,
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
) -> PyResult<Tensor> {
    let item = dtype.itemsize();
    let stored = if dtype == DType::Bool {
        DType::U8
    } else {
        dtype
    };
    let storage = Storage::zeroed(stored, len).py()?;
    tessera::with_dtype!(stored, T => {
        let mut dst = storage.write::<T>().py()?;
        // SAFETY: the producer's memory holds `len * item` readable bytes from `ptr` until
        // `m` is dropped (below); `dst` is a distinct, fresh buffer of the same byte length;
        // any bytes are a valid value of `stored` (never bool).
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.as_ptr().cast_const(),
                dst.as_mut_ptr().cast::<u8>(),
                len * item,
            )
        };
    });
    drop(m);
    let t = Tensor::from_storage_layout(Arc::new(storage), layout).py()?;
    if dtype == DType::Bool {
        // Row-major like the other copies (a comparison keeps a permuted input's order, P6).
        t.compare_scalar(0, CompareOp::Ne).py()?.contiguous().py()
    } else if t.numel() < len || !t.is_contiguous() {
        t.copy().py()
    } else {
        Ok(t)
    }
}

/// The producer's capsule: `x` itself when it is one, else `x.__dlpack__(max_version=...,
/// copy=...)`, or `x.__dlpack__()` for producers older than the versioned protocol. The
/// device is checked on the capsule's descriptor, so `__dlpack_device__` is not asked first
/// (Tessera can take nothing but CPU memory anyway).
fn capsule_of<'py>(x: &Bound<'py, PyAny>, copy: Option<bool>) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    if x.is_instance_of::<PyCapsule>() {
        return Ok(x.clone());
    }
    let name = intern!(py, "__dlpack__");
    match call_dlpack(x, name, copy) {
        Ok(capsule) => Ok(capsule),
        Err(e) if e.is_instance_of::<PyAttributeError>(py) && !x.hasattr(name)? => {
            Err(PyTypeError::new_err(format!(
                "{} does not support the DLPack protocol (no __dlpack__)",
                x.get_type()
                    .name()
                    .map_or_else(|_| "the object".into(), |n| n.to_string())
            )))
        }
        // A producer that predates the keyword arguments, asked for what it can give.
        Err(e) if copy.is_none() && e.is_instance_of::<PyTypeError>(py) => x.call_method0(name),
        Err(e) => Err(e),
    }
}

/// `x.<name>(max_version=(major, minor))` (`name` is the interned `"__dlpack__"`), with
/// `copy=c` when asked, as one vectorcall with interned keyword names: building a bound method and a keyword dict per import (what
/// `call_method` with a dict does) was a third of the import's cost, and a producer that
/// parses keywords by identity (NumPy) takes interned names on its fast path.
fn call_dlpack<'py>(
    x: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    static VERSION: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    static MAX_VERSION: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    static MAX_VERSION_COPY: PyOnceLock<Py<PyTuple>> = PyOnceLock::new();
    let version = VERSION.get_or_try_init(py, || {
        PyTuple::new(py, [DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION]).map(Bound::unbind)
    })?;
    let max_version = intern!(py, "max_version");
    let kwnames = match copy {
        None => {
            MAX_VERSION.get_or_try_init(py, || PyTuple::new(py, [max_version]).map(Bound::unbind))
        }
        Some(_) => MAX_VERSION_COPY.get_or_try_init(py, || {
            PyTuple::new(py, [max_version, intern!(py, "copy")]).map(Bound::unbind)
        }),
    }?;
    let flag = copy.map(|c| PyBool::new(py, c));
    let args = [
        x.as_ptr(),
        version.as_ptr(),
        flag.as_ref().map_or(std::ptr::null_mut(), |f| f.as_ptr()),
    ];
    // SAFETY: `args[0]` is `self` and is followed by one value per name in `kwnames` (1 or
    // 2; a null third entry is never read when `kwnames` has one name); every pointer is a
    // live object borrowed for the call (`x`, the cached tuples, the static bools); the
    // positional count (1) has no offset flag, so CPython does not write to `args[-1]`.
    // The call returns a new reference or null with an exception set.
    unsafe {
        let capsule =
            ffi::PyObject_VectorcallMethod(name.as_ptr(), args.as_ptr(), 1, kwnames.as_ptr());
        Bound::from_owned_ptr_or_err(py, capsule)
    }
}

/// The descriptor of an imported managed tensor (either ABI).
fn descriptor(m: &ImportedDlpack) -> &DLTensor {
    // SAFETY: an imported managed tensor is initialised, and its producer keeps it unchanged
    // until the deleter runs, which is after `m` (and this borrow) ends.
    unsafe {
        match m {
            ImportedDlpack::Versioned(t) => t.tensor(),
            ImportedDlpack::Legacy(t) => t.tensor(),
        }
    }
}

/// The `ndim` dims of `dl` (none when `ndim == 0`, whatever the pointer); a null shape with
/// `ndim > 0` is an error.
fn dims_of(dl: &DLTensor, ndim: usize) -> PyResult<&[i64]> {
    if ndim == 0 {
        return Ok(&[]);
    }
    if dl.shape.is_null() {
        return Err(bad_tensor("null shape"));
    }
    // SAFETY: by the DLPack protocol `shape` points at `ndim` integers that stay put until
    // the deleter runs, after the descriptor's borrow (to which this one is tied) ends.
    Ok(unsafe { std::slice::from_raw_parts(dl.shape, ndim) })
}

/// The `ndim` strides of `dl` in elements, or `None` when the producer gives none
/// (row-major: the legacy ABI's convention, which this consumer accepts from every version).
fn strides_of(dl: &DLTensor, ndim: usize) -> Option<&[i64]> {
    if dl.strides.is_null() {
        return None;
    }
    if ndim == 0 {
        return Some(&[]);
    }
    // SAFETY: as in `dims_of`.
    Some(unsafe { std::slice::from_raw_parts(dl.strides, ndim) })
}

/// The imported tensor's deleter as a storage release function and its argument, without
/// running it: the storage then owns the managed tensor.
fn into_release(m: ImportedDlpack) -> (unsafe fn(*mut ()), *mut ()) {
    match m {
        ImportedDlpack::Versioned(t) => (release::<DLManagedTensorVersioned>, t.into_raw().cast()),
        ImportedDlpack::Legacy(t) => (release::<DLManagedTensor>, t.into_raw().cast()),
    }
}

/// Runs the deleter of the managed tensor `M` at `ctx` (dlpark's `drop_raw`, what dropping
/// its `Managed` handle does).
///
/// # Safety
/// `ctx` points at a managed tensor the caller owns, released once (here).
unsafe fn release<M: ManagedTensorBase>(ctx: *mut ()) {
    // SAFETY: the caller's contract; a DLPack deleter may run on any thread.
    unsafe { M::drop_raw(ctx.cast()) }
}

/// The managed tensor of a DLPack capsule, which this consumer now owns. A versioned capsule,
/// what every current producer gives, is taken directly (dlpark's `Managed::from_raw` checks
/// its major version, and releases and refuses another one): dlpark's general import, which
/// first works out which protocol an object speaks, cost a fifth of a NumPy array's import,
/// and its descriptor validation (not used: `adopt` reads the descriptor) another tenth. Legacy capsules and anything else go through dlpark's import, which also
/// says what is wrong with a capsule that is not a DLPack one or was consumed already.
fn consume_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<ImportedDlpack> {
    const NAME: &CStr = c"dltensor_versioned";
    const USED: &CStr = c"used_dltensor_versioned";
    let p = capsule.as_ptr();
    // SAFETY: `p` is a live object; `GetPointer` takes any object and returns the capsule's
    // (never null) pointer when it is a capsule of that name, else null with an error set.
    // One name comparison: `PyCapsule_IsValid` first would make two.
    let raw = unsafe { ffi::PyCapsule_GetPointer(p, NAME.as_ptr()) };
    if raw.is_null() {
        // Not a versioned capsule: the general import says what it is instead.
        // SAFETY: the error `GetPointer` just set is cleared on the thread that set it.
        unsafe { ffi::PyErr_Clear() };
        return import_dlpack(capsule.as_borrowed(), None, None);
    }
    // SAFETY: `SetName` stores a pointer to a static name (it allocates nothing) and fails
    // only for an invalid capsule, which this is not.
    if unsafe { ffi::PyCapsule_SetName(p, USED.as_ptr()) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    // SAFETY: by the DLPack protocol a capsule named "dltensor_versioned" holds an initialised
    // `DLManagedTensorVersioned` whose shape and strides stay put until its deleter runs, and
    // the consumer that renames the capsule (just done) owns it and calls the deleter once.
    // `from_raw` checks the version (an incompatible major version is released there).
    let managed = unsafe { DlparkManaged::<DLManagedTensorVersioned>::from_raw(raw.cast()) }
        .map_err(|e| bad_tensor(&e.to_string()))?;
    Ok(ImportedDlpack::Versioned(managed))
}

/// Adds `from_dlpack` to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)
}
