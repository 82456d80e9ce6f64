//! The `tessera.Tensor` class's methods: properties, NumPy export, views, copies and
//! reductions. The class itself is [`PyTensor`] (in `handle.rs`, below the conversions);
//! indexing lives in [`crate::indexing`], operators in [`crate::arith`].

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use tessera::Tensor;

use crate::convert::{
    array_interface, axes_arg, int_args, int_seq, item, non_negative, numpy, shape_arg,
};
use crate::dtype::{parse_dtype, PyDType};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// Element count above which copies release the GIL (below it the release costs more).
const DETACH_ABOVE: usize = 1 << 15;

/// A reduction method (`Tensor::sum` etc.) called with Python's `axis` (None, int or tuple).
type Reduction = fn(&Tensor, Option<&[isize]>, bool) -> tessera::Result<Tensor>;

impl PyTensor {
    /// Runs reduction `f` over Python's `axis` argument, releasing the GIL for large inputs.
    fn reduce(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        f: Reduction,
    ) -> PyResult<PyTensor> {
        let (axes, t) = (axes_arg(axis)?, self.t());
        heavy(py, t.numel(), || f(t, axes.as_deref(), keepdims))
            .py()
            .map(Into::into)
    }
}

/// Runs `f` with the GIL released when the tensor is large.
pub fn heavy<R: Send>(py: Python<'_>, n: usize, f: impl FnOnce() -> R + Send) -> R {
    if n > DETACH_ABOVE {
        py.detach(f)
    } else {
        f()
    }
}

#[pymethods]
impl PyTensor {
    /// Size of each dimension (a tuple).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.t().shape())
    }

    /// Strides in bytes, as NumPy reports them (may be negative or zero).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let item = self.t().dtype().itemsize() as isize;
        PyTuple::new(py, self.t().strides().iter().map(|s| s * item))
    }

    /// The element type.
    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType {
            d: self.t().dtype(),
        }
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.t().rank()
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.t().numel()
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.t().dtype().itemsize()
    }

    /// Bytes of the elements in view (exact: a stride-0 view can count more than `usize`).
    #[getter]
    fn nbytes(&self) -> u128 {
        self.t().numel() as u128 * self.t().dtype().itemsize() as u128
    }

    /// Storage type name (`default` for dense tensors).
    #[getter]
    fn stype(&self) -> &'static str {
        self.t().stype().name()
    }

    /// Zero-copy export to NumPy (array interface version 3). NumPy keeps this tensor alive
    /// as the array's base. Writes through the NumPy array bypass Tessera's storage lock, like
    /// any NumPy view: do not race them with Tessera writes. bfloat16 raises TypeError.
    #[getter]
    ///
    /// A sparse tensor exports a dense copy (made once, kept with the tensor).
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.t().stype() == tessera::StorageType::Default {
            return array_interface(py, self.t());
        }
        if self.dense.get().is_none() {
            let d = self.t().cast_storage(tessera::StorageType::Default).py()?;
            let _ = self.dense.set(Box::new(d));
        }
        match self.dense.get() {
            Some(d) => array_interface(py, d),
            None => Err(pyo3::exceptions::PyRuntimeError::new_err(
                "dense copy missing",
            )),
        }
    }

    /// NumPy ufuncs on tensors defer to the tensor's operators (`ndarray + tensor` gives a
    /// tensor); convert with `np.asarray(t)` to use NumPy functions.
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// A zero-copy NumPy view of this tensor (`np.asarray(self)`).
    fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        numpy(slf.py())?.call_method1("asarray", (slf,))
    }

    /// The single element as a Python scalar.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        item(py, self.t())
    }

    /// The elements as nested Python lists.
    fn tolist<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let t = slf.get().t();
        let arr = if t.dtype() == tessera::DType::BF16 {
            Bound::new(
                slf.py(),
                PyTensor::from(t.astype(tessera::DType::F32).py()?),
            )?
            .into_any()
        } else {
            slf.clone().into_any()
        };
        numpy(slf.py())?
            .call_method1("asarray", (arr,))?
            .call_method0("tolist")
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        item(py, self.t())?
            .bind(py)
            .call_method0("__float__")
            .map(Bound::unbind)
    }

    fn __int__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        item(py, self.t())?
            .bind(py)
            .call_method0("__int__")
            .map(Bound::unbind)
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        if self.t().numel() != 1 {
            return Err(PyValueError::new_err(
                "the truth value of a tensor with more than one element is ambiguous",
            ));
        }
        item(py, self.t())?.bind(py).is_truthy()
    }

    fn __len__(&self) -> PyResult<usize> {
        self.t()
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object (a 0-d tensor)"))
    }

    /// NumPy-like `repr`: `tensor([...], dtype=...)`, plus PyTorch's `requires_grad=True` for
    /// a leaf that requires a gradient or `grad_fn=<op>` for a computed one.
    fn __repr__(&self) -> String {
        let t = self.t();
        let text = format!("{t:?}");
        let extra = match t.grad_fn_name() {
            Some(op) => format!(", grad_fn=<{op}>"),
            None if t.requires_grad() => ", requires_grad=True".to_string(),
            None => return text,
        };
        match text.strip_suffix(')') {
            Some(head) => format!("{head}{extra})"),
            None => text,
        }
    }

    /// NumPy-like `str`.
    fn __str__(&self) -> String {
        self.t().to_string()
    }

    /// True when both tensors view the same storage.
    fn shares_storage(&self, other: &PyTensor) -> bool {
        self.t().shares_storage(other.t())
    }

    /// C-contiguous (size-1 dims ignored; empty tensors are contiguous).
    fn is_contiguous(&self) -> bool {
        self.t().is_contiguous()
    }

    /// This tensor if C-contiguous, else a contiguous copy (a blocked transpose for `.T`).
    fn contiguous(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let t = self.t();
        heavy(py, t.numel(), || t.contiguous()).py().map(Into::into)
    }

    /// A new contiguous tensor holding a copy of the elements.
    fn copy(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let t = self.t();
        heavy(py, t.numel(), || t.copy()).py().map(Into::into)
    }

    /// A converted copy (NumPy `astype`; float to int truncates and saturates, NaN to 0).
    /// With `copy=False` the array itself when it already has `dtype` (the standard's rule).
    #[pyo3(signature = (dtype, /, *, copy = true, device = None))]
    fn astype(
        slf: PyRef<'_, Self>,
        dtype: &Bound<'_, PyAny>,
        copy: bool,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        crate::device::check_device(device)?;
        let py = slf.py();
        let (t, d) = (slf.t().clone(), parse_dtype(dtype)?);
        if !copy && t.dtype() == d {
            let same: Py<Self> = slf.into();
            return Ok(same.into_any());
        }
        let out: PyTensor = heavy(py, t.numel(), || t.astype(d)).py()?.into();
        Ok(Py::new(py, out)?.into_any())
    }

    /// PyTorch `expand(*sizes)`: a stride-0 view; `-1` keeps a dim, new dims go in front.
    #[pyo3(signature = (*sizes))]
    fn expand(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        self.t().expand(&int_args(sizes)?).py().map(Into::into)
    }

    /// NumPy `broadcast_to(shape)`: a stride-0 view (writes into it raise ValueError).
    fn broadcast_to(&self, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        self.t()
            .broadcast_to(&shape_arg(shape)?)
            .py()
            .map(Into::into)
    }

    /// PyTorch `repeat(*counts)`: a new tensor; counts may add leading dims; negative counts
    /// raise ValueError.
    #[pyo3(signature = (*counts))]
    fn repeat(&self, py: Python<'_>, counts: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        let counts = non_negative(&int_args(counts)?, "repeat counts must be non-negative")?;
        let t = self.t();
        heavy(py, t.numel(), || t.repeat(&counts))
            .py()
            .map(Into::into)
    }

    /// NumPy `tile(reps)` (reps padded with 1s on the left).
    fn tile(&self, py: Python<'_>, reps: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let reps = non_negative(&int_seq(reps)?, "tile reps must be non-negative")?;
        let t = self.t();
        heavy(py, t.numel(), || t.tile(&reps)).py().map(Into::into)
    }

    /// Reshape (tuple or varargs; `-1` infers one dim): a view when the layout allows, else
    /// a copy. `copy=False` raises ValueError when a copy would be needed (NumPy);
    /// `copy=True` always copies.
    #[pyo3(signature = (*shape, copy = None))]
    fn reshape(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyTuple>,
        copy: Option<bool>,
    ) -> PyResult<PyTensor> {
        reshape_to(py, self.t(), &int_args(shape)?, copy)
    }

    /// Reshape that never copies (PyTorch `view`): ValueError when a copy would be needed.
    #[pyo3(signature = (*shape))]
    fn view(&self, shape: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        self.t().view(&int_args(shape)?).py().map(Into::into)
    }

    /// Reorders dims (`permute(*axes)` or `permute(axes)`): a view.
    #[pyo3(signature = (*axes))]
    fn permute(&self, axes: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        self.t().permute(&int_args(axes)?).py().map(Into::into)
    }

    /// NumPy `transpose(*axes)`: reverses the dims without arguments, else permutes.
    #[pyo3(signature = (*axes))]
    fn transpose(&self, axes: &Bound<'_, PyTuple>) -> PyResult<PyTensor> {
        if axes.is_empty() {
            return self.t().t().py().map(Into::into);
        }
        self.permute(axes)
    }

    /// The transpose (all dims reversed): a view.
    #[getter(T)]
    fn t_(&self) -> PyResult<PyTensor> {
        self.t().t().py().map(Into::into)
    }

    /// Reverses the given axes (all when `None`): a view with negative strides.
    #[pyo3(signature = (axis = None))]
    fn flip(&self, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        let axes = axes_arg(axis)?;
        self.t().flip(axes.as_deref()).py().map(Into::into)
    }

    /// Removes size-1 dims (all, or the given ones, which must have size 1).
    #[pyo3(signature = (axis = None))]
    fn squeeze(&self, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
        let axes = axes_arg(axis)?;
        self.t().squeeze(axes.as_deref()).py().map(Into::into)
    }

    /// Inserts a size-1 dim at `axis`.
    fn unsqueeze(&self, axis: isize) -> PyResult<PyTensor> {
        self.t().unsqueeze(axis).py().map(Into::into)
    }

    /// Sum over `axis` (None: all; int or tuple); integers and bool accumulate in int64.
    #[pyo3(signature = (axis = None, keepdims = false))]
    fn sum(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyTensor> {
        self.reduce(py, axis, keepdims, Tensor::sum)
    }

    /// Mean over `axis` (None: all; int or tuple); integers give float64.
    #[pyo3(signature = (axis = None, keepdims = false))]
    fn mean(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyTensor> {
        self.reduce(py, axis, keepdims, Tensor::mean)
    }

    /// Maximum over `axis`; NaN propagates; an empty reduction raises ValueError.
    #[pyo3(signature = (axis = None, keepdims = false))]
    fn max(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyTensor> {
        self.reduce(py, axis, keepdims, Tensor::max)
    }

    /// Minimum over `axis`; NaN propagates; an empty reduction raises ValueError.
    #[pyo3(signature = (axis = None, keepdims = false))]
    fn min(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyTensor> {
        self.reduce(py, axis, keepdims, Tensor::min)
    }
}

/// `t` reshaped to `shape` (one dim may be -1): a view when the layout allows, else a copy;
/// `copy=Some(false)` is ValueError when a copy would be needed, `Some(true)` always copies.
/// Shared by `Tensor.reshape` and the namespace's `reshape`.
pub fn reshape_to(
    py: Python<'_>,
    t: &Tensor,
    shape: &[isize],
    copy: Option<bool>,
) -> PyResult<PyTensor> {
    match copy {
        Some(false) => t.view(shape).py(),
        Some(true) => heavy(py, t.numel(), || t.copy()?.view(shape)).py(),
        None => heavy(py, t.numel(), || t.reshape(shape)).py(),
    }
    .map(Into::into)
}
