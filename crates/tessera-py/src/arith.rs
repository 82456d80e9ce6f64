//! Operators on tensors: arithmetic with broadcasting and promotion, Python scalars as weak
//! scalars (NEP 50), reflected and in-place forms, comparisons and unary operators.

use numpy::PyUntypedArray;
use pyo3::basic::CompareOp as PyCmp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use tessera::{BinaryOp, CompareOp, Scalar, Tensor};

use crate::convert::{numpy, to_tensor, weak_scalar};
use crate::errors::PyRes;
use crate::tensor::{heavy, PyTensor};

/// The other operand of an operator.
enum Operand {
    /// A tensor (or an array-like converted to one: strong dtype).
    Tensor(Tensor),
    /// A Python `bool`/`int`/`float`: a weak scalar.
    Scalar(Scalar),
}

/// The operand, or `None` when the type is not ours to handle (`NotImplemented`).
fn operand(obj: &Bound<'_, PyAny>) -> PyResult<Option<Operand>> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Some(Operand::Tensor(t.get().t.clone())));
    }
    if let Some(s) = weak_scalar(obj)? {
        return Ok(Some(Operand::Scalar(s)));
    }
    let py = obj.py();
    let generic = numpy(py)?.getattr("generic")?;
    if obj.cast::<PyUntypedArray>().is_ok()
        || obj.is_instance(&generic)?
        || obj.cast::<PyList>().is_ok()
        || obj.cast::<PyTuple>().is_ok()
    {
        return Ok(Some(Operand::Tensor(to_tensor(obj, None, None)?)));
    }
    Ok(None)
}

fn wrap(py: Python<'_>, r: tessera::Result<Tensor>) -> PyResult<Py<PyAny>> {
    Ok(Bound::new(py, PyTensor::from(r.py()?))?.into_any().unbind())
}

/// `a op b` (or `b op a` when `reflected`), `NotImplemented` for foreign types.
fn binop(a: &Tensor, b: &Bound<'_, PyAny>, op: BinaryOp, reflected: bool) -> PyResult<Py<PyAny>> {
    let py = b.py();
    let Some(b) = operand(b)? else {
        return Ok(py.NotImplemented());
    };
    let n = a.numel();
    let r = heavy(py, n, || match (b, reflected) {
        (Operand::Tensor(b), false) => a.binary(&b, op),
        (Operand::Tensor(b), true) => b.binary(a, op),
        (Operand::Scalar(s), false) => a.binary_scalar(s, op),
        (Operand::Scalar(s), true) => a.rbinary_scalar(s, op),
    });
    wrap(py, r)
}

/// `a op= b`, written through `a`'s view.
fn inplace(a: &Tensor, b: &Bound<'_, PyAny>, op: BinaryOp) -> PyResult<()> {
    let py = b.py();
    let Some(b) = operand(b)? else {
        return Err(PyTypeError::new_err(format!(
            "unsupported operand type for in-place {}: {}",
            op.name(),
            b.get_type().name()?
        )));
    };
    heavy(py, a.numel(), || match b {
        Operand::Tensor(b) => a.binary_(&b, op),
        Operand::Scalar(s) => a.binary_scalar_(s, op),
    })
    .py()
}

macro_rules! binary_dunders {
    ($($fwd:ident, $rev:ident, $inp:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $fwd(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                binop(&self.t, other, BinaryOp::$op, false)
            }
            fn $rev(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                binop(&self.t, other, BinaryOp::$op, true)
            }
            fn $inp(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
                inplace(&self.t, other, BinaryOp::$op)
            }
        )*}
    };
}

binary_dunders! {
    __add__, __radd__, __iadd__ => Add;
    __sub__, __rsub__, __isub__ => Sub;
    __mul__, __rmul__, __imul__ => Mul;
    __truediv__, __rtruediv__, __itruediv__ => Div;
}

#[pymethods]
impl PyTensor {
    fn __pow__(
        &self,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        if modulo.is_some_and(|m| !m.is_none()) {
            return Err(PyTypeError::new_err(
                "pow() with a modulus is not supported",
            ));
        }
        binop(&self.t, other, BinaryOp::Pow, false)
    }

    fn __rpow__(
        &self,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        binop(&self.t, other, BinaryOp::Pow, true)
    }

    fn __ipow__(
        &self,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        inplace(&self.t, other, BinaryOp::Pow)
    }

    /// Elementwise comparison, a bool tensor (NumPy); foreign types give `NotImplemented`.
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: PyCmp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let op = match op {
            PyCmp::Eq => CompareOp::Eq,
            PyCmp::Ne => CompareOp::Ne,
            PyCmp::Lt => CompareOp::Lt,
            PyCmp::Le => CompareOp::Le,
            PyCmp::Gt => CompareOp::Gt,
            PyCmp::Ge => CompareOp::Ge,
        };
        let r = match operand(other)? {
            None => return Ok(py.NotImplemented()),
            Some(Operand::Tensor(b)) => self.t.compare(&b, op),
            Some(Operand::Scalar(s)) => self.t.compare_scalar(s, op),
        };
        wrap(py, r)
    }

    fn __neg__(&self) -> PyResult<PyTensor> {
        self.t.neg().py().map(Into::into)
    }

    fn __pos__(&self) -> PyTensor {
        self.t.clone().into()
    }

    fn __abs__(&self) -> PyResult<PyTensor> {
        self.t.abs().py().map(Into::into)
    }
}
