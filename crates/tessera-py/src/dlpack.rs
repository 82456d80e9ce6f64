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
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned,
    DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION,
};
use dlpark::metadata::Dynamic;
use dlpark::python::{
    export_dlpack, from_dlpack as import_dlpack, DlpackExporter, ExportRequest, ImportedDlpack,
};
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};
use pyo3::exceptions::{PyAttributeError, PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyCapsule, PyString, PyTuple};
use smallvec::SmallVec;
use tessera::{CompareOp, DType, Storage, StorageType, Tensor};

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
    fn managed<M: ManagedTensorBase>(&self) -> PyResult<Managed<M>> {
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

    fn export_legacy(&self, _py: Python<'_>) -> PyResult<Managed<dlpark::ffi::DLManagedTensor>> {
        self.managed()
    }

    fn export_versioned(
        &self,
        _py: Python<'_>,
    ) -> PyResult<Managed<dlpark::ffi::DLManagedTensorVersioned>> {
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
    let capsule = capsule_of(x, copy)?;
    // The copy request went to the producer; a capsule carries no options.
    let imported = consume_capsule(&capsule)?;
    let flags = imported.flags();
    // A copy asked for and not made by the producer (a capsule given directly) is made here.
    let copy_here = copy == Some(true) && !flags.contains(DlpackFlags::IS_COPIED);
    let r = imported
        .validate()
        .map_err(|e| PyBufferError::new_err(format!("bad DLPack tensor: {e}")))?;
    if r.device().device_type != DLDeviceType::CPU {
        return Err(PyBufferError::new_err(format!(
            "DLPack device type {} is not the CPU",
            r.device().device_type.0
        )));
    }
    let dtype = tessera_dtype(r.dtype())?;
    let dims: SmallVec<[usize; 8]> = r.shape().iter().map(|&d| d as usize).collect();
    let strides = r
        .strides_or_compact()
        .map_err(|e| PyBufferError::new_err(format!("bad DLPack tensor: {e}")))?;
    let strides: SmallVec<[isize; 8]> = strides
        .iter()
        .map(|&s| isize::try_from(s))
        .collect::<Result<_, _>>()
        .map_err(|_| PyBufferError::new_err("DLPack strides past isize"))?;
    if dims.contains(&0) {
        return Tensor::zeros(&dims, dtype).py().map(Into::into);
    }
    let item = dtype.itemsize();
    let first = (r.data_ptr() as usize)
        .checked_add(r.byte_offset() as usize)
        .ok_or_else(|| PyBufferError::new_err("DLPack data pointer overflows"))?;
    // The elements the strides reach, relative to the first one: `lo ..= hi`.
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in dims.iter().zip(&strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let len = usize::try_from(hi - lo + 1)
        .map_err(|_| PyBufferError::new_err("DLPack tensor spans more than memory"))?;
    let base = usize::try_from(first as i128 + lo * item as i128)
        .map_err(|_| PyBufferError::new_err("DLPack strides reach below address 0"))?;
    let offset = (-lo) as usize;
    let ptr = NonNull::new(base as *mut u8).ok_or_else(|| PyBufferError::new_err("null data"))?;
    let align = tessera::with_dtype!(dtype, T => std::mem::align_of::<T>());
    let aligned = base.is_multiple_of(align);
    if dtype != DType::Bool && aligned && !flags.contains(DlpackFlags::READ_ONLY) && !copy_here {
        let owner = Box::new(imported.into_deleter());
        // SAFETY: the producer's descriptor, validated by dlpark (shape, strides, sizes),
        // makes the `len * item` bytes from `base` (the lowest element the strides reach)
        // writable memory of the producer until the deleter in `owner` runs; `from_external`
        // checks the alignment; every bit pattern is a valid value of a non-bool dtype.
        // Accesses by the producer's own arrays must not race with Tessera's, as for NumPy
        // views of Tessera memory (docs/design.md I1).
        let storage = unsafe { Storage::from_external(dtype, len, ptr, owner) }.py()?;
        let t = Tensor::from_storage_strided(Arc::new(storage), &dims, &strides, offset).py()?;
        return Ok(t.into());
    }
    if copy == Some(false) {
        return Err(PyBufferError::new_err(
            "copy=False, but this memory cannot be shared: it is read-only, bool (bytes other \
             than 0 and 1 must not reach Tessera) or not aligned for its dtype",
        ));
    }
    // A copy: the reached bytes into a fresh storage (bool as bytes, normalised after), the
    // producer's view over it, then compact unless it covers the whole copy.
    let stored = if dtype == DType::Bool {
        DType::U8
    } else {
        dtype
    };
    let storage = Storage::zeroed(stored, len).py()?;
    tessera::with_dtype!(stored, T => {
        let mut dst = storage.write::<T>().py()?;
        // SAFETY: the producer's memory holds `len * item` readable bytes from `base` until
        // `imported` is dropped (below); `dst` is a distinct, fresh buffer of the same byte
        // length; any bytes are a valid value of `stored` (never bool).
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.as_ptr().cast_const(),
                dst.as_mut_ptr().cast::<u8>(),
                len * item,
            )
        };
    });
    drop(imported);
    let t = Tensor::from_storage_strided(Arc::new(storage), &dims, &strides, offset).py()?;
    let t = if dtype == DType::Bool {
        // Row-major like the other copies (a comparison keeps a permuted input's order, P6).
        t.compare_scalar(0, CompareOp::Ne).py()?.contiguous().py()?
    } else if t.numel() < len || !t.is_contiguous() {
        t.copy().py()?
    } else {
        t
    };
    Ok(t.into())
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

/// The managed tensor of a DLPack capsule, which this consumer now owns (the capsule is
/// renamed "used_...", so its destructor no longer deletes the tensor). A versioned capsule,
/// what every current producer gives, is read directly: dlpark's general import (which first
/// works out which protocol an object speaks) cost a fifth of a NumPy array's import. Legacy
/// capsules and anything else go through dlpark's import, which also says what is wrong with
/// a capsule that is not a DLPack one or was consumed already.
fn consume_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<ImportedDlpack> {
    const NAME: &CStr = c"dltensor_versioned";
    const USED: &CStr = c"used_dltensor_versioned";
    let p = capsule.as_ptr();
    // SAFETY: `p` is a live object; `PyCapsule_IsValid` takes any object and sets no error.
    if unsafe { ffi::PyCapsule_IsValid(p, NAME.as_ptr()) } != 1 {
        return import_dlpack(capsule.as_borrowed(), None, None);
    }
    // SAFETY: a valid capsule of that name (checked just above) holds a non-null pointer, so
    // `GetPointer` cannot fail; `SetName` stores a pointer to a static name (it allocates
    // nothing) and fails only for an invalid capsule, which this is not.
    let raw = unsafe { ffi::PyCapsule_GetPointer(p, NAME.as_ptr()) };
    if unsafe { ffi::PyCapsule_SetName(p, USED.as_ptr()) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    // SAFETY: by the DLPack protocol a capsule named "dltensor_versioned" holds an initialised
    // `DLManagedTensorVersioned` whose shape and strides stay put until its deleter runs, and
    // the consumer that renames the capsule (just done) owns it and calls the deleter once.
    // `from_raw` checks the version (an incompatible major version is released there).
    let managed = unsafe { Managed::<DLManagedTensorVersioned>::from_raw(raw.cast()) }
        .map_err(|e| PyBufferError::new_err(format!("bad DLPack tensor: {e}")))?;
    Ok(ImportedDlpack::Versioned(managed))
}

/// Adds `from_dlpack` to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)
}
