//! Ops by name (`tessera.invoke`), the registry listing behind `tessera.ops`, CreateView from
//! the INT64 encoding, and the storage-fallback warning routed to Python's `warnings`.

use std::cell::RefCell;
use std::ffi::CString;

use pyo3::exceptions::{PyRuntimeWarning, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};
use tessera::index::{encode, IndexSpec};
use tessera::ops::{self, FallbackEvent};
use tessera::{DType, Tensor};

use crate::convert::{to_tensor, DimList};
use crate::dtype::PyDType;
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::indexing::parse_key;

thread_local! {
    /// A warning that became an exception (`-W error`) inside the fallback hook, raised when
    /// the op returns.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Routes core fallback warnings to `warnings.warn(message, RuntimeWarning)`.
pub fn install_fallback_hook() {
    ops::set_fallback_hook(Some(Box::new(|event: &FallbackEvent| {
        Python::attach(|py| {
            let msg =
                CString::new(event.message().replace('\0', " ")).expect("NUL bytes were replaced");
            let category = py.get_type::<PyRuntimeWarning>();
            if let Err(e) = PyErr::warn(py, category.as_any(), &msg, 2) {
                PENDING.with(|p| *p.borrow_mut() = Some(e));
            }
        })
    })));
}

fn take_pending() -> PyResult<()> {
    PENDING.with(|p| p.borrow_mut().take()).map_or(Ok(()), Err)
}

/// [`ops::invoke`] for Python: the fallback warning that became an exception while the op ran
/// (`-W error`) is raised by this call, not left for the next one, and wins over the op's
/// own result or error. Every registry call of the package goes through here, so no
/// exception is left pending in `PENDING`. Needs no GIL (runs inside `py.detach`).
pub fn invoke_checked(name: &str, inputs: &[Tensor], kv: &[(&str, &str)]) -> PyResult<Vec<Tensor>> {
    let result = ops::invoke(name, inputs, kv);
    take_pending()?;
    result.py()
}

/// The string form of a parameter value: bools as `true`/`false`, `None` as `None`, tuples
/// and lists as `(1, 2)`, dtypes by name, anything else with `str()`.
fn param_str(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.into());
    }
    if v.is_none() {
        return Ok("None".into());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_str()?.to_string());
    }
    if let Ok(d) = v.cast::<PyDType>() {
        return Ok(d.get().d.name().into());
    }
    if v.cast::<PyTuple>().is_ok() || v.cast::<PyList>().is_ok() {
        let items = v
            .try_iter()?
            .map(|x| param_str(&x?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(match items.as_slice() {
            [one] => format!("({one},)"),
            _ => format!("({})", items.join(", ")),
        });
    }
    Ok(v.str()?.to_str()?.to_string())
}

/// Runs a registered op by name: `invoke("quadratic", x, a=1, b=2, c=3)`. Inputs are
/// tensors or anything `asarray` accepts; parameters are converted to the registry's string
/// form. Returns one tensor, or a tuple for several outputs.
#[pyfunction]
#[pyo3(signature = (name, *inputs, **params))]
pub fn invoke(
    py: Python<'_>,
    name: &str,
    inputs: &Bound<'_, PyTuple>,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let tensors = inputs
        .iter()
        .map(|x| to_tensor(&x, None, None))
        .collect::<PyResult<Vec<Tensor>>>()?;
    let mut kv: Vec<(String, String)> = Vec::new();
    if let Some(p) = params {
        for (k, v) in p.iter() {
            kv.push((k.extract::<String>()?, param_str(&v)?));
        }
    }
    let kv_ref: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut outs = invoke_checked(name, &tensors, &kv_ref)?;
    if outs.len() == 1 {
        let t = outs.pop().expect("one output");
        return Ok(Bound::new(py, PyTensor::from(t))?.into_any().unbind());
    }
    let items = outs
        .into_iter()
        .map(|t| Bound::new(py, PyTensor::from(t)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyTuple::new(py, items)?.into_any().unbind())
}

/// Every registered op as a dict: `name`, `doc`, `inputs`, `outputs`, `params` (dicts with
/// `name`, `type`, `default` (a string, `"required"` when there is none), `range`, `doc`),
/// `inplace`, `mutates`, `forward_only`, `stateful`, `gradient` (the backward rule in words,
/// or None), `gradient_op` (the registered op computing it, or None), `no_gradient` (why
/// there is none, or None), `has_sparse`.
#[pyfunction]
pub fn list_ops(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for info in ops::registry().list() {
        let d = PyDict::new(py);
        d.set_item("name", info.name)?;
        d.set_item("doc", info.doc)?;
        d.set_item("inputs", info.inputs.to_vec())?;
        d.set_item("outputs", info.outputs.to_vec())?;
        let params = PyList::empty(py);
        for p in &info.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("type", p.type_name)?;
            pd.set_item("default", &p.default)?;
            pd.set_item("range", p.range.as_deref())?;
            pd.set_item("doc", p.doc)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        d.set_item("inplace", info.inplace.to_vec())?;
        d.set_item("mutates", info.mutates.to_vec())?;
        let (rule, via, none) = match &info.gradient {
            ops::Gradient::Rule { doc, via } => (Some(*doc), *via, None),
            ops::Gradient::NotDifferentiable(why) => (None, None, Some(*why)),
            ops::Gradient::ForwardOnly => (None, None, Some("forward only by design")),
            ops::Gradient::Missing => (None, None, Some("no backward rule yet")),
        };
        d.set_item(
            "forward_only",
            matches!(info.gradient, ops::Gradient::ForwardOnly),
        )?;
        d.set_item("stateful", info.stateful)?;
        d.set_item("gradient", rule)?;
        d.set_item("gradient_op", via)?;
        d.set_item("no_gradient", none)?;
        d.set_item("has_sparse", info.has_sparse)?;
        out.append(d)?;
    }
    Ok(out)
}

/// CreateView (seed 002): the view of `t` selected by index specs in the INT64 encoding
/// (a NumPy int64 array or a list of ints; see `tessera::index` for the layout).
#[pyfunction]
pub fn create_view(t: &PyTensor, encoded: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let code = to_tensor(encoded, None, None)?;
    if !code.dtype().is_integer() && code.numel() > 0 {
        return Err(PyTypeError::new_err(format!(
            "the index encoding must be integers (int64), got {}",
            code.dtype()
        )));
    }
    let code = code.astype(DType::I64).py()?.to_vec::<i64>().py()?;
    t.t().create_view(&code).py().map(Into::into)
}

/// The INT64 encoding (a list of ints) of a NumPy-style index key, e.g.
/// `encode_index((slice(1, 3), None, 0))`; `create_view(t, encode_index(k))` equals `t[k]`.
#[pyfunction]
pub fn encode_index(key: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let mut specs: DimList<IndexSpec> = DimList::new();
    parse_key(key, &mut specs)?;
    Ok(encode(&specs))
}

/// Number of storage fallbacks executed so far in this process.
#[pyfunction]
pub fn fallback_count() -> usize {
    ops::fallback_count()
}
