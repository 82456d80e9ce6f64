//! `tessera.dist` (docs/design.md D12): meshes, SBP placements and global tensors, the global
//! ops with their gradients, and data-, model- or hybrid-parallel training, from Python. The
//! ranks are MPI processes (`mpirun -np N python script.py`; the wheel built with the `mpi`
//! feature, MPI initialised through the Rust backend on first use) or, without MPI, one
//! process that is the whole world (rank 0 of 1).

use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tessera::optim::{Adam, Optimizer, Sgd};
use tessera::Tensor;
use tessera_dist::train::DistOptimizer;
use tessera_dist::{ops, Comm, DistError, GlobalTensor, Mesh, PartialOp, Sbp};

use crate::convert::to_tensor;
use crate::errors::to_py;
use crate::handle::PyTensor;

/// The Python exception for a `tessera-dist` error: the core's mapping for local errors,
/// `ValueError` for placements and signatures, `RuntimeError` for communication.
fn dist_err(e: DistError) -> PyErr {
    match e {
        DistError::Tensor(t) => to_py(t),
        DistError::Placement(_) | DistError::NoSignature(_) => PyValueError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

trait DistRes<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> DistRes<T> for Result<T, DistError> {
    fn py(self) -> PyResult<T> {
        self.map_err(dist_err)
    }
}

/// One SBP from its text: `S(k)`, `B`, `P` or `P(sum)`, `P(max)`, `P(min)`.
fn parse_sbp(s: &str) -> PyResult<Sbp> {
    let t = s.trim();
    let inner = |p: &str| t.strip_prefix(p).and_then(|r| r.strip_suffix(')'));
    Ok(match t {
        "B" => Sbp::Broadcast,
        "P" | "P(sum)" => Sbp::Partial(PartialOp::Sum),
        "P(max)" => Sbp::Partial(PartialOp::Max),
        "P(min)" => Sbp::Partial(PartialOp::Min),
        _ => match inner("S(").map(|k| k.trim().parse::<usize>()) {
            Some(Ok(k)) => Sbp::Split(k),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "bad SBP {s:?}: use 'S(k)', 'B', 'P' ('P(sum)'), 'P(max)' or 'P(min)'"
                )))
            }
        },
    })
}

/// An nd-SBP: one string (a 1-D mesh) or a sequence of them.
fn parse_nd(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Sbp>> {
    if let Ok(s) = obj.extract::<String>() {
        return Ok(vec![parse_sbp(&s)?]);
    }
    let items: Vec<String> = obj
        .extract()
        .map_err(|_| PyTypeError::new_err("an SBP is a string such as 'S(0)' or a list of them"))?;
    items.iter().map(|s| parse_sbp(s)).collect()
}

#[cfg(feature = "mpi")]
mod world {
    use std::cell::RefCell;

    use tessera_dist::mpi_backend::MpiUniverse;
    use tessera_dist::Comm;

    thread_local! {
        /// The MPI universe, on the thread that initialised it (Python's main thread).
        static UNIVERSE: RefCell<Option<MpiUniverse>> = const { RefCell::new(None) };
    }

    /// Whether this process was started by `mpirun`.
    fn launched() -> bool {
        std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMI_SIZE").is_some()
    }

    pub fn world() -> Option<Result<Comm, String>> {
        if !launched() {
            return None;
        }
        Some(UNIVERSE.with(|u| {
            let mut u = u.borrow_mut();
            if u.is_none() {
                *u = Some(MpiUniverse::init().map_err(|e| e.to_string())?);
            }
            Ok(u.as_ref().expect("set just above").world())
        }))
    }

    /// `MPI_Finalize` (after freeing the shared windows); called at interpreter exit.
    pub fn finalize() {
        UNIVERSE.with(|u| drop(u.borrow_mut().take()));
    }

    pub const MPI: bool = true;
}

#[cfg(not(feature = "mpi"))]
mod world {
    use tessera_dist::Comm;

    pub fn world() -> Option<Result<Comm, String>> {
        None
    }

    pub fn finalize() {}

    pub const MPI: bool = false;
}

/// The communicator of every rank: MPI's world under `mpirun` (initialising MPI on first
/// use), else a world of this process alone.
fn world_comm() -> PyResult<Comm> {
    static ALONE: std::sync::OnceLock<Comm> = std::sync::OnceLock::new();
    match world::world() {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(PyRuntimeError::new_err(format!("MPI init failed: {e}"))),
        None => Ok(ALONE
            .get_or_init(|| {
                let group =
                    tessera_dist::thread::Group::new(1, tessera_dist::thread::DEFAULT_TIMEOUT);
                let me: Comm = Arc::new(group.comms().remove(0));
                me
            })
            .clone()),
    }
}

/// `(rank, size)` of this process in the world.
#[pyfunction]
fn world_info() -> PyResult<(usize, usize)> {
    let c = world_comm()?;
    Ok((c.rank(), c.size()))
}

/// Whether this build can run under MPI (the wheel's `mpi` feature).
#[pyfunction]
fn mpi_available() -> bool {
    world::MPI
}

/// Finalises MPI if it was initialised (registered with `atexit` by `tessera.dist`).
#[pyfunction]
fn finalize() {
    world::finalize();
}

/// A mesh of the world's ranks: `Mesh()` a line of all of them, `Mesh([2, 2])` a 2-D grid.
#[pyclass(name = "Mesh", module = "tessera.dist", frozen)]
pub struct PyMesh(Arc<Mesh>);

#[pymethods]
impl PyMesh {
    #[new]
    #[pyo3(signature = (shape = None))]
    fn new(shape: Option<Vec<usize>>) -> PyResult<PyMesh> {
        let comm = world_comm()?;
        let mesh = match shape {
            None => Mesh::line(comm),
            Some(s) => Mesh::new(comm, &s).py()?,
        };
        Ok(PyMesh(mesh))
    }

    /// The mesh's shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.0.shape().to_vec()
    }

    /// This rank's coordinates on the mesh.
    #[getter]
    fn coords(&self) -> Vec<usize> {
        self.0.coords().to_vec()
    }

    fn __repr__(&self) -> String {
        format!(
            "Mesh(shape={:?}, coords={:?})",
            self.0.shape(),
            self.0.coords()
        )
    }
}

/// A logical tensor placed on a mesh with an nd-SBP; each rank holds its shard
/// (`local`). Operators `+ - * / @` and unary `-` run global ops.
#[pyclass(name = "GlobalTensor", module = "tessera.dist")]
pub struct PyGlobal(GlobalTensor);

fn global(obj: &Bound<'_, PyAny>) -> PyResult<GlobalTensor> {
    obj.cast::<PyGlobal>()
        .map(|g| g.borrow().0.clone())
        .map_err(|_| {
            PyTypeError::new_err(format!("expected a GlobalTensor, got {}", obj.get_type()))
        })
}

#[pymethods]
impl PyGlobal {
    /// Places a full tensor that every rank holds: each rank keeps its slice.
    #[staticmethod]
    fn from_logical(
        full: &Bound<'_, PyAny>,
        sbp: &Bound<'_, PyAny>,
        mesh: &PyMesh,
    ) -> PyResult<PyGlobal> {
        let full = to_tensor(full, None, None)?;
        Ok(PyGlobal(
            GlobalTensor::from_logical(&full, &parse_nd(sbp)?, &mesh.0).py()?,
        ))
    }

    /// Wraps this rank's shard of a `shape`-shaped logical tensor placed `sbp` (checked).
    #[staticmethod]
    fn from_local(
        local: &Bound<'_, PyAny>,
        shape: Vec<usize>,
        sbp: &Bound<'_, PyAny>,
        mesh: &PyMesh,
    ) -> PyResult<PyGlobal> {
        let local = to_tensor(local, None, None)?;
        Ok(PyGlobal(
            GlobalTensor::from_local(local, &shape, &parse_nd(sbp)?, &mesh.0, true).py()?,
        ))
    }

    /// The same logical tensor placed `sbp` (boxing; collective; recorded for gradients).
    fn to_sbp(&self, sbp: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        Ok(PyGlobal(self.0.to_sbp(&parse_nd(sbp)?).py()?))
    }

    /// The full logical tensor on every rank (collective).
    fn to_full(&self) -> PyResult<PyTensor> {
        Ok(self.0.to_full().py()?.into())
    }

    /// This rank's shard.
    #[getter]
    fn local(&self) -> PyTensor {
        self.0.to_local().into()
    }

    /// The logical shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.0.logical_shape().to_vec()
    }

    /// The nd-SBP, as strings.
    #[getter]
    fn sbp(&self) -> Vec<String> {
        self.0.sbp().iter().map(ToString::to_string).collect()
    }

    /// Whether the shard requires a gradient.
    #[getter]
    fn requires_grad(&self) -> bool {
        self.0.requires_grad()
    }

    /// Makes this tensor a leaf that requires a gradient; returns it.
    #[pyo3(signature = (requires_grad = true))]
    fn requires_grad_(
        mut slf: PyRefMut<'_, Self>,
        requires_grad: bool,
    ) -> PyResult<PyRefMut<'_, Self>> {
        slf.0 = slf.0.clone().requires_grad_(requires_grad).py()?;
        Ok(slf)
    }

    /// The gradient, placed with the dual SBP (a Broadcast tensor's is P(sum)), or None.
    #[getter]
    fn grad(&self) -> PyResult<Option<PyGlobal>> {
        Ok(self.0.grad().py()?.map(PyGlobal))
    }

    /// Without autograd state.
    fn detach(&self) -> PyGlobal {
        PyGlobal(self.0.detach())
    }

    /// Backward from this one-element loss (collective).
    fn backward(&self) -> PyResult<()> {
        tessera_dist::autograd::backward(&self.0).py()
    }

    fn __add__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        binary(&self.0, &global(o)?, tessera::BinaryOp::Add)
    }
    fn __sub__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        binary(&self.0, &global(o)?, tessera::BinaryOp::Sub)
    }
    fn __mul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        binary(&self.0, &global(o)?, tessera::BinaryOp::Mul)
    }
    fn __truediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        binary(&self.0, &global(o)?, tessera::BinaryOp::Div)
    }
    fn __matmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
        Ok(PyGlobal(ops::matmul(&self.0, &global(o)?).py()?))
    }
    fn __neg__(&self) -> PyResult<PyGlobal> {
        Ok(PyGlobal(ops::unary(&self.0, tessera::UnaryOp::Neg).py()?))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

fn binary(a: &GlobalTensor, b: &GlobalTensor, op: tessera::BinaryOp) -> PyResult<PyGlobal> {
    Ok(PyGlobal(ops::binary(a, b, op).py()?))
}

/// Global op `name` on `inputs` with string parameters (`tessera.dist.invoke`): the op runs
/// on each rank's shards under the cheapest SBP signature.
#[pyfunction]
#[pyo3(signature = (name, inputs, params = None))]
fn invoke(
    name: &str,
    inputs: &Bound<'_, PyList>,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyGlobal> {
    let gs = inputs
        .iter()
        .map(|x| global(&x))
        .collect::<PyResult<Vec<GlobalTensor>>>()?;
    let refs: Vec<&GlobalTensor> = gs.iter().collect();
    let mut kv: Vec<(String, String)> = Vec::new();
    if let Some(p) = params {
        for (k, v) in p.iter() {
            kv.push((k.extract()?, v.str()?.to_string()));
        }
    }
    let kv: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Ok(PyGlobal(ops::invoke(name, &refs, &kv).py()?))
}

/// An optimiser over global parameters (`tessera.dist.DistOptimizer(params, "adam", lr=...)`
/// or `"sgd"` with `momentum`): `backward(loss)` runs backward and reduces the gradients
/// (during backward, bucketed), `step()` refuses a gradient left Partial.
#[pyclass(name = "DistOptimizer", module = "tessera.dist", unsendable)]
pub struct PyDistOptimizer(DistOptimizer<Box<dyn Optimizer + Send + Sync>>);

#[pymethods]
impl PyDistOptimizer {
    #[new]
    #[pyo3(signature = (params, kind = "adam", lr = 1e-3, momentum = 0.0))]
    fn new(
        params: &Bound<'_, PyList>,
        kind: &str,
        lr: f64,
        momentum: f64,
    ) -> PyResult<PyDistOptimizer> {
        let gs = params
            .iter()
            .map(|x| global(&x))
            .collect::<PyResult<Vec<GlobalTensor>>>()?;
        if kind != "sgd" && kind != "adam" {
            return Err(PyValueError::new_err(format!(
                "optimiser {kind:?}: 'adam' or 'sgd'"
            )));
        }
        let make = |p: Vec<Tensor>| -> tessera::Result<Box<dyn Optimizer + Send + Sync>> {
            Ok(match kind {
                "sgd" => Box::new(Sgd::new(p, lr, momentum)?),
                _ => Box::new(Adam::new(p, lr)?),
            })
        };
        Ok(PyDistOptimizer(DistOptimizer::new(gs, make).py()?))
    }

    /// Backward from `loss`, then the gradients reduced to each parameter's placement.
    fn backward(&mut self, loss: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.backward(&global(loss)?).py()
    }

    /// Reduces the gradients (when backward ran through `GlobalTensor.backward()`).
    fn reduce_gradients(&mut self) -> PyResult<()> {
        self.0.reduce_gradients().py()
    }

    /// One step of the local optimiser on every shard.
    fn step(&mut self) -> PyResult<()> {
        self.0.step().py()
    }

    /// Clears every gradient.
    fn zero_grad(&mut self) -> PyResult<()> {
        self.0.zero_grad().py()
    }
}

/// Mean softmax cross-entropy of global `logits` `[batch, classes]` against one-hot targets
/// (`tessera.dist.cross_entropy`; the Rust `train::mlp::cross_entropy`).
#[pyfunction]
fn cross_entropy(logits: &Bound<'_, PyAny>, one_hot: &Bound<'_, PyAny>) -> PyResult<PyGlobal> {
    Ok(PyGlobal(
        tessera_dist::train::mlp::cross_entropy(&global(logits)?, &global(one_hot)?).py()?,
    ))
}

/// Adds the `tessera.dist` classes and functions to the native module (as `dist_*`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMesh>()?;
    m.add_class::<PyGlobal>()?;
    m.add_class::<PyDistOptimizer>()?;
    m.add("dist_world_info", wrap_pyfunction!(world_info, m)?)?;
    m.add("dist_mpi_available", wrap_pyfunction!(mpi_available, m)?)?;
    m.add("dist_finalize", wrap_pyfunction!(finalize, m)?)?;
    m.add("dist_invoke", wrap_pyfunction!(invoke, m)?)?;
    m.add("dist_cross_entropy", wrap_pyfunction!(cross_entropy, m)?)?;
    Ok(())
}
