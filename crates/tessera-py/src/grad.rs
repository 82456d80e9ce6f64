//! Autograd from Python, with PyTorch's names: `Tensor.requires_grad_()`, `.requires_grad`,
//! `.grad`, `.is_leaf`, `.grad_fn`, `.backward()`, `.detach()`; the grad mode behind
//! `tessera.no_grad()`; `tessera.autograd.grad`; and the `SGD` and `Adam` optimisers of
//! `tessera.optim` (docs/design.md G1–G6).

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::PyClassInitializer;
use tessera::optim::{Adam, Optimizer, Sgd};
use tessera::{autograd, Tensor};

use crate::convert::to_tensor;
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

/// A gradient argument: `None`, or anything `asarray` takes.
fn opt_tensor(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Tensor>> {
    match obj {
        Some(o) if !o.is_none() => to_tensor(o, None, None).map(Some),
        _ => Ok(None),
    }
}

/// The tensors of a Python tensor or sequence of tensors.
fn tensor_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Tensor>> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(vec![t.get().t().clone()]);
    }
    let items = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a Tensor or a sequence of them"))
    })?;
    items
        .map(|x| {
            let x = x?;
            x.cast::<PyTensor>()
                .map(|t| t.get().t().clone())
                .map_err(|_| {
                    PyTypeError::new_err(format!("{what} must hold Tensors, got {}", x.get_type()))
                })
        })
        .collect()
}

#[pymethods]
impl PyTensor {
    /// Whether this tensor requires a gradient (a marked leaf, or computed from one).
    #[getter]
    fn get_requires_grad(&self) -> bool {
        self.t().requires_grad()
    }

    /// `t.requires_grad = flag`: as `requires_grad_(flag)`.
    #[setter(requires_grad)]
    fn set_requires_grad_attr(&self, flag: bool) -> PyResult<()> {
        self.set_requires_grad(flag).py()
    }

    /// Marks this leaf as requiring a gradient (or not) and returns it (PyTorch). Only float
    /// dtypes can require a gradient (RuntimeError otherwise), and a computed tensor cannot
    /// stop requiring one (use `detach()`).
    #[pyo3(signature = (requires_grad = true))]
    fn requires_grad_<'py>(
        slf: &Bound<'py, Self>,
        requires_grad: bool,
    ) -> PyResult<Bound<'py, Self>> {
        slf.get().set_requires_grad(requires_grad).py()?;
        Ok(slf.clone())
    }

    /// The gradient accumulated by `backward()` (leaves only), or None.
    #[getter]
    fn get_grad(&self) -> Option<PyTensor> {
        self.t().grad().map(Into::into)
    }

    /// Sets or clears (`None`) the accumulated gradient; it must match the tensor's shape and
    /// dtype.
    #[setter]
    fn set_grad(&self, grad: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let g = opt_tensor(grad)?;
        let t = self.t();
        if g.is_none() && !t.requires_grad() && t.grad().is_none() {
            return Ok(());
        }
        t.set_grad(g).py()
    }

    /// True when no recorded op made this tensor.
    #[getter]
    fn is_leaf(&self) -> bool {
        self.t().is_leaf()
    }

    /// The name of the op that computed this tensor (PyTorch gives an object; Tessera its
    /// op's name), or None for a leaf.
    #[getter]
    fn grad_fn(&self) -> Option<&'static str> {
        self.t().grad_fn_name()
    }

    /// Accumulates the gradient of this tensor into the leaves' `.grad`. `gradient` may be
    /// omitted for a one-element tensor; `retain_graph=True` keeps the graph for another
    /// backward. Errors (RuntimeError): a tensor that does not require a gradient, a freed
    /// graph, a forward-only op, a saved tensor modified in place; a gradient of the wrong
    /// shape or dtype is a ValueError.
    #[pyo3(signature = (gradient = None, retain_graph = false))]
    fn backward(
        &self,
        py: Python<'_>,
        gradient: Option<&Bound<'_, PyAny>>,
        retain_graph: bool,
    ) -> PyResult<()> {
        let t = self.t();
        // A tensor gradient must match exactly; a list or NumPy array takes the tensor's dtype.
        let g = match gradient {
            Some(g) if !g.is_none() && g.cast::<PyTensor>().is_err() => {
                Some(to_tensor(g, Some(t.dtype()), None)?)
            }
            g => opt_tensor(g)?,
        };
        if !t.requires_grad() {
            return Err(PyRuntimeError::new_err(
                "backward() on a tensor that does not require a gradient and has no grad_fn",
            ));
        }
        heavy(py, usize::MAX, || {
            autograd::backward(t, g.as_ref(), retain_graph)
        })
        .py()
    }

    /// The same elements without autograd state (shares storage).
    fn detach(&self) -> PyTensor {
        self.t().detach().into()
    }
}

/// Sets this thread's grad mode, returning the previous one (`tessera.no_grad` uses it).
#[pyfunction]
fn _set_grad_enabled(on: bool) -> bool {
    autograd::set_grad_enabled(on)
}

/// Whether ops on this thread record the graph.
#[pyfunction]
fn is_grad_enabled() -> bool {
    autograd::is_grad_enabled()
}

/// `torch.autograd.grad`: the gradients of `outputs` with respect to `inputs`, without
/// touching `.grad`. An input the outputs do not reach is an error unless `allow_unused`,
/// which gives None for it.
#[pyfunction]
#[pyo3(signature = (outputs, inputs, grad_outputs = None, retain_graph = false, allow_unused = false))]
fn _autograd_grad(
    py: Python<'_>,
    outputs: &Bound<'_, PyAny>,
    inputs: &Bound<'_, PyAny>,
    grad_outputs: Option<&Bound<'_, PyAny>>,
    retain_graph: bool,
    allow_unused: bool,
) -> PyResult<Vec<Option<PyTensor>>> {
    let outs = tensor_list(outputs, "outputs")?;
    let ins = tensor_list(inputs, "inputs")?;
    let seeds: Vec<Option<Tensor>> = match grad_outputs.filter(|g| !g.is_none()) {
        None => vec![None; outs.len()],
        Some(g) if g.cast::<PyTensor>().is_ok() => vec![opt_tensor(Some(g))?],
        Some(g) => g
            .try_iter()?
            .map(|x| opt_tensor(Some(&x?)))
            .collect::<PyResult<_>>()?,
    };
    if seeds.len() != outs.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "grad_outputs has {} entries for {} outputs",
            seeds.len(),
            outs.len()
        )));
    }
    let grads = heavy(py, usize::MAX, || {
        autograd::grad(&outs, &seeds, &ins, retain_graph)
    })
    .py()?;
    if !allow_unused {
        if let Some(i) = grads.iter().position(Option::is_none) {
            return Err(PyRuntimeError::new_err(format!(
                "input {i} is not reached from the outputs; pass allow_unused=True to get None"
            )));
        }
    }
    Ok(grads.into_iter().map(|g| g.map(Into::into)).collect())
}

/// The leaf parameters an optimiser updates.
fn params_arg(params: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    tensor_list(params, "params")
}

/// The base class of the optimisers (PyTorch's `torch.optim.Optimizer`): the methods every
/// optimiser shares, over the core optimiser it holds. Subclasses only construct it.
#[pyclass(name = "Optimizer", module = "tessera.optim", subclass)]
pub struct PyOptimizer {
    inner: Box<dyn Optimizer + Send + Sync>,
}

#[pymethods]
impl PyOptimizer {
    /// One update of every parameter that has a gradient (in Rust, with the GIL released).
    fn step(&mut self, py: Python<'_>) -> PyResult<()> {
        let opt = &mut self.inner;
        py.detach(|| opt.step()).py()
    }

    /// Clears every parameter's gradient.
    fn zero_grad(&self) -> PyResult<()> {
        self.inner.zero_grad().py()
    }

    /// The optimiser state (step count, and momentum buffers or moments) as name → Tensor.
    fn state_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, t) in self.inner.state().py()? {
            d.set_item(name, PyTensor::from(t))?;
        }
        Ok(d)
    }

    /// Restores `state_dict()`'s output (names, shapes and dtypes must match; nothing changes
    /// on error).
    fn load_state_dict(&mut self, state: &Bound<'_, PyDict>) -> PyResult<()> {
        let state = state
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, to_tensor(&v, None, None)?)))
            .collect::<PyResult<Vec<(String, Tensor)>>>()?;
        self.inner.load_state(&state).py()
    }

    /// The parameters.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let params = self
            .inner
            .params()
            .iter()
            .map(|p| PyTensor::from(p.clone()));
        PyList::new(py, params)
    }
}

/// Stochastic gradient descent with momentum (PyTorch's form: `v = μv + g; p -= lr·v`). A
/// row_sparse gradient updates only its rows (MXNet's lazy update).
#[pyclass(name = "SGD", module = "tessera.optim", extends = PyOptimizer)]
pub struct PySgd;

#[pymethods]
impl PySgd {
    #[new]
    #[pyo3(signature = (params, lr, momentum = 0.0))]
    fn new(
        params: &Bound<'_, PyAny>,
        lr: f64,
        momentum: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let inner = Box::new(Sgd::new(params_arg(params)?, lr, momentum).py()?);
        Ok(PyClassInitializer::from(PyOptimizer { inner }).add_subclass(PySgd))
    }
}

/// Adam (Kingma and Ba, with bias correction). A row_sparse gradient updates only its rows
/// and their moments (MXNet's lazy update, as PyTorch's `SparseAdam`).
#[pyclass(name = "Adam", module = "tessera.optim", extends = PyOptimizer)]
pub struct PyAdam;

#[pymethods]
impl PyAdam {
    #[new]
    #[pyo3(signature = (params, lr = 1e-3, betas = (0.9, 0.999), eps = 1e-8))]
    fn new(
        params: &Bound<'_, PyAny>,
        lr: f64,
        betas: (f64, f64),
        eps: f64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let inner = Adam::with_betas(params_arg(params)?, lr, betas.0, betas.1, eps).py()?;
        let base = PyOptimizer {
            inner: Box::new(inner),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PyAdam))
    }
}

/// Adds the autograd functions and optimiser classes to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_autograd_grad, m)?)?;
    m.add_class::<PyOptimizer>()?;
    m.add_class::<PySgd>()?;
    m.add_class::<PyAdam>()?;
    Ok(())
}
