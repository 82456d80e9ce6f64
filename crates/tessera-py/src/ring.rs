//! `tessera.RingBuffer`: the last `length` inputs along an axis (seed 000, docs/design.md O5).

use pyo3::prelude::*;
use tessera::{DType, RingBuffer};

use crate::convert::{shape_arg, to_tensor};
use crate::dtype::{parse_opt_dtype, PyDType};
use crate::errors::PyRes;
use crate::handle::PyTensor;

/// A ring buffer keeping the last `length` positions of its inputs along `axis`, oldest
/// first. `shape` is the input shape (its `axis` entry is ignored). Each `push` costs O(N)
/// for an input of N positions along the axis and returns the window, a view.
#[pyclass(name = "RingBuffer", module = "tessera")]
pub struct PyRingBuffer {
    rb: RingBuffer,
}

#[pymethods]
impl PyRingBuffer {
    /// Creates a zero-filled ring buffer (dtype default float64).
    #[new]
    #[pyo3(signature = (shape, axis, length, dtype = None))]
    fn py_new(
        shape: &Bound<'_, PyAny>,
        axis: isize,
        length: usize,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dtype = parse_opt_dtype(dtype)?.unwrap_or(DType::F64);
        let rb = RingBuffer::new(&shape_arg(shape)?, axis, length, dtype).py()?;
        Ok(PyRingBuffer { rb })
    }

    /// Shifts the buffer by the input's length along the axis, writes the input at the end
    /// and returns the window (oldest first). Non-tensor inputs are converted to the
    /// buffer's dtype; a tensor of another dtype raises TypeError.
    fn push(&mut self, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let dt = if x.cast::<PyTensor>().is_ok() {
            None
        } else {
            Some(self.rb.dtype())
        };
        let x = to_tensor(x, dt, None)?;
        self.rb.push(&x).py().map(Into::into)
    }

    /// The current window (a zero-copy view).
    #[getter]
    fn window(&self) -> PyTensor {
        self.rb.window().into()
    }

    /// The buffer length along the axis.
    #[getter]
    fn length(&self) -> usize {
        self.rb.len()
    }

    /// The (non-negative) axis.
    #[getter]
    fn axis(&self) -> usize {
        self.rb.axis()
    }

    /// The window's shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.rb.shape()
    }

    /// The element type.
    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType { d: self.rb.dtype() }
    }

    fn __repr__(&self) -> String {
        format!(
            "RingBuffer(shape={:?}, axis={}, length={}, dtype={})",
            self.rb.shape(),
            self.rb.axis(),
            self.rb.len(),
            self.rb.dtype()
        )
    }
}
