//! Files and pickling from Python: `tessera.save` / `tessera.load` (safetensors checkpoints,
//! `tessera::io`), `tessera.save_npy` / `tessera.load_npy`, and `Tensor.__reduce__`,
//! `__copy__` and `__deepcopy__`.
//!
//! A tensor pickles as the bytes of a one-tensor safetensors checkpoint (its logical
//! elements, dtype, shape and storage type), rebuilt by `tessera._native._rebuild_tensor`,
//! so unpickling goes through the same checks as loading a file. Copies (`copy.copy` and
//! `copy.deepcopy`) make new storage, as NumPy's do. File operations release the GIL.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyMapping, PyString};
use tessera::{StorageType, Tensor};

use crate::convert::to_tensor;
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

/// The name of the one tensor inside a pickled tensor's checkpoint.
const PICKLED: &str = "tensor";

/// A `str` key or value of a mapping argument, else TypeError naming `what`.
fn text(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_string()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be str, got {}",
            obj.get_type().name()?
        ))),
    }
}

/// The items of a mapping argument, else TypeError naming `what`.
fn mapping<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let m = obj.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a dict (a mapping), got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    m.items()?.iter().map(|kv| kv.extract()).collect()
}

/// Saves a dict of tensors (name -> Tensor or anything `asarray` takes) and an optional dict
/// of string metadata to `path` in the safetensors format. Every dtype is kept; views save
/// their logical elements; sparse tensors are saved as their parts (NAME.data,
/// NAME.indices, NAME.indptr) plus a `tessera` metadata entry, so other safetensors readers
/// see plain arrays and `tessera.load` gives the sparse tensors back. The file is replaced
/// atomically. TypeError for a non-str name or metadata entry, ValueError for a name used
/// twice or the reserved metadata key `tessera`, OSError when the file cannot be written.
#[pyfunction]
#[pyo3(signature = (path, tensors, metadata = None))]
fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: &Bound<'_, PyAny>,
    metadata: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let mut named: Vec<(String, Tensor)> = Vec::new();
    for (k, v) in mapping(tensors, "tensors")? {
        let name = text(&k, "tensor names")?;
        let t = match v.cast::<PyTensor>() {
            Ok(t) => t.get().t().clone(),
            Err(_) => to_tensor(&v, None, None)?,
        };
        named.push((name, t));
    }
    let mut meta = BTreeMap::new();
    if let Some(m) = metadata.filter(|m| !m.is_none()) {
        for (k, v) in mapping(m, "metadata")? {
            meta.insert(text(&k, "metadata keys")?, text(&v, "metadata values")?);
        }
    }
    let refs: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
    py.detach(|| tessera::io::save(&path, &refs, &meta)).py()
}

/// Loads a safetensors file as a dict of tensors in the order they were saved (files of
/// other programs: in the order of their data). With `with_metadata=True`, returns
/// `(tensors, metadata)`, the metadata a dict of str. ValueError for a bad file (truncated,
/// a header that does not match the data, a dtype Tessera lacks, invalid sparse parts);
/// OSError (FileNotFoundError, PermissionError, ...) when the file cannot be read.
#[pyfunction]
#[pyo3(signature = (path, *, with_metadata = false))]
fn load(py: Python<'_>, path: PathBuf, with_metadata: bool) -> PyResult<Py<PyAny>> {
    let ck = py.detach(|| tessera::io::load(&path)).py()?;
    let tensors = PyDict::new(py);
    for (name, t) in ck.tensors {
        tensors.set_item(name, PyTensor::from(t))?;
    }
    if !with_metadata {
        return Ok(tensors.into_any().unbind());
    }
    let meta = PyDict::new(py);
    for (k, v) in ck.metadata {
        meta.set_item(k, v)?;
    }
    Ok((tensors, meta).into_pyobject(py)?.into_any().unbind())
}

/// Saves one dense tensor (or anything `asarray` takes) to `path` in NumPy's `.npy` format,
/// which `np.load` reads. TypeError for bfloat16 (NumPy has no such dtype), ValueError for
/// a sparse tensor, OSError when the file cannot be written.
#[pyfunction]
fn save_npy(py: Python<'_>, path: PathBuf, t: &Bound<'_, PyAny>) -> PyResult<()> {
    let t = match t.cast::<PyTensor>() {
        Ok(t) => t.get().t().clone(),
        Err(_) => to_tensor(t, None, None)?,
    };
    py.detach(|| tessera::io::save_npy(&path, &t)).py()
}

/// Loads the array of a `.npy` file (bool, uint8, int8, int32, int64, float16, float32,
/// float64; C or Fortran order; either byte order). ValueError for a bad file or a dtype
/// Tessera lacks, OSError when the file cannot be read.
#[pyfunction]
fn load_npy(py: Python<'_>, path: PathBuf) -> PyResult<PyTensor> {
    py.detach(|| tessera::io::load_npy(&path))
        .py()
        .map(Into::into)
}

/// Rebuilds a pickled tensor from its checkpoint bytes (see `Tensor.__reduce__`).
#[pyfunction]
#[pyo3(signature = (data, requires_grad = false))]
fn _rebuild_tensor(
    py: Python<'_>,
    data: &Bound<'_, PyBytes>,
    requires_grad: bool,
) -> PyResult<PyTensor> {
    let bytes = data.as_bytes();
    let ck = heavy(py, bytes.len(), || tessera::io::deserialize(bytes)).py()?;
    match ck.tensors.into_iter().next() {
        Some((name, t)) if name == PICKLED => Ok(t.requires_grad_(requires_grad).py()?.into()),
        _ => Err(PyValueError::new_err(
            "pickled tensor data does not hold one tensor",
        )),
    }
}

/// Whether a copy or an unpickled tensor requires a gradient: when the original is a leaf
/// that does (PyTorch keeps the flag of parameters; a computed tensor's copy is a plain one).
fn keeps_requires_grad(t: &Tensor) -> bool {
    t.requires_grad() && t.is_leaf()
}

/// A copy with storage of its own: `copy()` for a dense tensor (a view copies its logical
/// elements), new parts for a sparse one. A leaf that requires a gradient gives one that
/// does too (without `.grad`).
fn deep_copy(py: Python<'_>, t: &Tensor) -> PyResult<PyTensor> {
    let copied = heavy(py, t.numel(), || match t.stype() {
        StorageType::Default => t.copy(),
        _ => {
            let bytes = tessera::io::serialize(&[(PICKLED, t)], &BTreeMap::new())?;
            let mut ck = tessera::io::deserialize(&bytes)?;
            Ok(ck.tensors.remove(0).1)
        }
    });
    let copied = copied.py()?.detach();
    copied
        .requires_grad_(keeps_requires_grad(t))
        .py()
        .map(Into::into)
}

/// What `__reduce__` returns: the rebuild function and its arguments (checkpoint bytes, and
/// whether the tensor is a leaf that requires a gradient).
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>, bool));

#[pymethods]
impl PyTensor {
    /// Pickling: the tensor's dtype, shape, storage type and logical elements (a view
    /// pickles what it shows), as one-tensor safetensors bytes, and whether it is a leaf
    /// that requires a gradient.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let t = slf.get().t();
        let bytes = heavy(py, t.numel(), || {
            tessera::io::serialize(&[(PICKLED, t)], &BTreeMap::new())
        })
        .py()?;
        let rebuild = py.import("tessera._native")?.getattr("_rebuild_tensor")?;
        Ok((rebuild, (PyBytes::new(py, &bytes), keeps_requires_grad(t))))
    }

    /// `copy.copy`: a new tensor with its own storage (as NumPy's `copy.copy` of an array).
    fn __copy__(&self, py: Python<'_>) -> PyResult<PyTensor> {
        deep_copy(py, self.t())
    }

    /// `copy.deepcopy`: a new tensor with its own storage.
    #[pyo3(signature = (memo = None))]
    fn __deepcopy__(&self, py: Python<'_>, memo: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        let _ = memo;
        deep_copy(py, self.t())
    }
}

/// Registers the file functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(save_npy, m)?)?;
    m.add_function(wrap_pyfunction!(load_npy, m)?)?;
    m.add_function(wrap_pyfunction!(_rebuild_tensor, m)?)?;
    Ok(())
}
