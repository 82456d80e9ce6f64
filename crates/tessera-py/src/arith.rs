//! Operators on tensors: arithmetic with broadcasting and promotion, Python scalars as weak
//! scalars (NEP 50), reflected and in-place forms, comparisons and unary operators.

use numpy::PyUntypedArray;
use pyo3::basic::CompareOp as PyCmp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyInt, PyList, PyTuple};
use tessera::dtype_info::{result_type_of, WeakScalar};
use tessera::{BinaryOp, CompareOp, DType, Scalar, StorageType, Tensor, UnaryOp, C128};

use crate::convert::{numpy, to_tensor, weak_scalar};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::ops::invoke_checked;
use crate::tensor::heavy;

/// The other operand of an operator.
pub(crate) enum Operand {
    /// A tensor (or an array-like converted to one: strong dtype).
    Tensor(Tensor),
    /// A Python `bool`/`int`/`float`: a weak scalar.
    Scalar(Scalar),
}

/// The operand next to a tensor of dtype `other`, or `None` when the type is not ours to
/// handle (`NotImplemented`). A Python `complex` is weak too: a 0-d tensor of
/// `result_type(other, complex)` (`complex64` next to `float32` or `complex64`).
pub(crate) fn operand(obj: &Bound<'_, PyAny>, other: DType) -> PyResult<Option<Operand>> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Some(Operand::Tensor(t.get().t().clone())));
    }
    if obj.is_exact_instance_of::<PyComplex>() {
        let z = obj.cast::<PyComplex>()?;
        let d = result_type_of(&[other], &[WeakScalar::Complex]).py()?;
        let t = Tensor::from_vec(vec![C128::new(z.real(), z.imag())], &[]).py()?;
        return Ok(Some(Operand::Tensor(t.astype(d).py()?)));
    }
    if let Some(s) = weak_scalar(obj)? {
        return Ok(Some(Operand::Scalar(s)));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        // Past int64: a uint64 0-d tensor (OverflowError past 2**64 - 1), as NumPy converts it.
        return Ok(Some(Operand::Tensor(to_tensor(obj, None, None)?)));
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

pub(crate) fn wrap(py: Python<'_>, r: PyResult<Tensor>) -> PyResult<Py<PyAny>> {
    Ok(Bound::new(py, PyTensor::from(r?))?.into_any().unbind())
}

/// `a op b` (or `b op a` when `reflected`), `NotImplemented` for foreign types.
fn binop(a: &Tensor, b: &Bound<'_, PyAny>, op: BinaryOp, reflected: bool) -> PyResult<Py<PyAny>> {
    let py = b.py();
    // A dense tensor operand (the common case) is borrowed, not cloned.
    if let Ok(t) = b.cast::<PyTensor>() {
        let b = t.get().t();
        if a.stype() == StorageType::Default && b.stype() == StorageType::Default {
            let n = a.numel().max(b.numel());
            let r = heavy(py, n, || match reflected {
                false => a.binary(b, op),
                true => b.binary(a, op),
            });
            return wrap(py, r.py());
        }
    }
    let Some(b) = operand(b, a.dtype())? else {
        return Ok(py.NotImplemented());
    };
    let n = a.numel();
    let b_sparse = matches!(&b, Operand::Tensor(t) if t.stype() != StorageType::Default);
    if a.stype() != StorageType::Default || b_sparse {
        return wrap(py, heavy(py, n, || sparse_binop(a, b, op, reflected)));
    }
    let r = heavy(py, n, || match (b, reflected) {
        (Operand::Tensor(b), false) => a.binary(&b, op),
        (Operand::Tensor(b), true) => b.binary(a, op),
        (Operand::Scalar(s), false) => a.binary_scalar(s, op),
        (Operand::Scalar(s), true) => a.rbinary_scalar(s, op),
    });
    wrap(py, r.py())
}

/// The first output of the op `name`, through [`invoke_checked`] (so a fallback warning
/// turned into an exception is raised by this operator).
pub(crate) fn invoke1(name: &str, inputs: &[Tensor], kv: &[(&str, &str)]) -> PyResult<Tensor> {
    let mut out = invoke_checked(name, inputs, kv)?;
    Ok(out.swap_remove(0))
}

/// An operator with a sparse operand goes through the registry, so it takes the sparse
/// kernels or the logged fallback (docs/design.md O2, O3): tensor operands call the op by name;
/// `t + s`, `t - s`, `t * s` call `add_scalar` / `mul_scalar`; other scalar forms call the
/// op with the scalar as a 0-d dense tensor (the fallback).
fn sparse_binop(a: &Tensor, b: Operand, op: BinaryOp, reflected: bool) -> PyResult<Tensor> {
    match b {
        Operand::Tensor(b) => {
            let ins = if reflected {
                [b, a.clone()]
            } else {
                [a.clone(), b]
            };
            invoke1(op.name(), &ins, &[])
        }
        Operand::Scalar(s) => {
            let text = |v: Scalar| match v {
                Scalar::Bool(x) => format!("{}", x as i64),
                Scalar::Int(i) => format!("{i}"),
                Scalar::Float(x) => format!("{x:?}"),
            };
            // `None` for -i64::MIN: `t - i64::MIN` takes the general path below.
            let neg = |v: Scalar| match v {
                Scalar::Bool(x) => Some(Scalar::Int(-(x as i64))),
                Scalar::Int(i) => i.checked_neg().map(Scalar::Int),
                Scalar::Float(x) => Some(Scalar::Float(-x)),
            };
            let one = std::slice::from_ref(a);
            match (op, reflected) {
                (BinaryOp::Add, _) => invoke1("add_scalar", one, &[("scalar", &text(s))]),
                (BinaryOp::Mul, _) => invoke1("mul_scalar", one, &[("scalar", &text(s))]),
                (BinaryOp::Sub, false) if neg(s).is_some() => {
                    let minus = neg(s).map_or_else(String::new, text);
                    invoke1("add_scalar", one, &[("scalar", &minus)])
                }
                _ => {
                    let dt = Tensor::zeros(&[1], a.dtype())
                        .and_then(|z| z.binary_scalar(s, op))
                        .py()?
                        .dtype();
                    let st = Tensor::scalar(s, dt).py()?;
                    let ins = if reflected {
                        [st, a.clone()]
                    } else {
                        [a.clone(), st]
                    };
                    invoke1(op.name(), &ins, &[])
                }
            }
        }
    }
}

/// `a op= b`, written through `a`'s view.
fn inplace(a: &Tensor, b: &Bound<'_, PyAny>, op: BinaryOp) -> PyResult<()> {
    let py = b.py();
    let Some(b) = operand(b, a.dtype())? else {
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
                binop(self.t(), other, BinaryOp::$op, false)
            }
            fn $rev(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                binop(self.t(), other, BinaryOp::$op, true)
            }
            fn $inp(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
                inplace(self.t(), other, BinaryOp::$op)
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

/// `a @ b` (or `b @ a` when `reflected`): NumPy `matmul` through the registry (so it is
/// recorded for autograd); `NotImplemented` for foreign types; a Python scalar operand is a
/// `ValueError`, as in NumPy.
fn matmul_op(a: &Tensor, b: &Bound<'_, PyAny>, reflected: bool) -> PyResult<Py<PyAny>> {
    let py = b.py();
    let b = match operand(b, a.dtype())? {
        None => return Ok(py.NotImplemented()),
        Some(Operand::Scalar(_)) => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "matmul: a scalar operand has no matrix dims (use * to scale)",
            ))
        }
        Some(Operand::Tensor(b)) => b,
    };
    let ins = if reflected {
        [b, a.clone()]
    } else {
        [a.clone(), b]
    };
    wrap(py, invoke1("matmul", &ins, &[]))
}

#[pymethods]
impl PyTensor {
    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        matmul_op(self.t(), other, false)
    }

    fn __rmatmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        matmul_op(self.t(), other, true)
    }

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
        binop(self.t(), other, BinaryOp::Pow, false)
    }

    fn __rpow__(
        &self,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        binop(self.t(), other, BinaryOp::Pow, true)
    }

    fn __ipow__(
        &self,
        other: &Bound<'_, PyAny>,
        _modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        inplace(self.t(), other, BinaryOp::Pow)
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
        let r = match operand(other, self.t().dtype())? {
            None => return Ok(py.NotImplemented()),
            Some(Operand::Tensor(b)) => self.t().compare(&b, op),
            Some(Operand::Scalar(s)) => self.t().compare_scalar(s, op),
        };
        wrap(py, r.py())
    }

    fn __neg__(&self) -> PyResult<PyTensor> {
        if self.t().stype() != StorageType::Default {
            return invoke1(UnaryOp::Neg.name(), std::slice::from_ref(self.t()), &[])
                .map(Into::into);
        }
        self.t().neg().py().map(Into::into)
    }

    fn __pos__(&self) -> PyTensor {
        self.t().clone().into()
    }

    fn __abs__(&self) -> PyResult<PyTensor> {
        if self.t().stype() != StorageType::Default {
            return invoke1(UnaryOp::Abs.name(), std::slice::from_ref(self.t()), &[])
                .map(Into::into);
        }
        self.t().abs().py().map(Into::into)
    }
}
