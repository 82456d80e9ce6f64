//! The Array API's operators beyond `arith.rs`: `//`, `%`, `&`, `|`, `^`, `<<`, `>>` with
//! their reflected and in-place forms, `~`, `__index__`, `__complex__`; and
//! `elementwise_unary` and `elementwise_binary`, which every function of
//! `tessera._elementwise` calls with its registry op (`namespace_elementwise.rs`; a Python
//! scalar operand of a two-operand function is weak, as for the operators).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyFloat, PyInt};
use tessera::promote::result_type_scalar;
use tessera::{BinaryOp, CompareOp, DType, MathBinaryOp, MathOp, StorageType, Tensor, UnaryOp};

use crate::arith::{invoke1, operand, wrap, Operand};
use crate::convert::{item, to_tensor};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::tensor::heavy;

/// `a op b` (or `b op a` when `reflected`); `NotImplemented` for foreign types.
fn math_op(
    a: &Tensor,
    b: &Bound<'_, PyAny>,
    op: MathBinaryOp,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let py = b.py();
    let Some(b) = operand(b, a.dtype())? else {
        return Ok(py.NotImplemented());
    };
    let r = heavy(py, a.numel(), || match (b, reflected) {
        (Operand::Tensor(b), false) => a.math_binary(&b, op),
        (Operand::Tensor(b), true) => b.math_binary(a, op),
        (Operand::Scalar(s), false) => a.math_binary_scalar(s, op),
        (Operand::Scalar(s), true) => a.rmath_binary_scalar(s, op),
    });
    wrap(py, r.py())
}

/// `a op= b`, written through `a`'s view.
fn math_inplace(a: &Tensor, b: &Bound<'_, PyAny>, op: MathBinaryOp) -> PyResult<()> {
    let py = b.py();
    let Some(b) = operand(b, a.dtype())? else {
        return Err(PyTypeError::new_err(format!(
            "unsupported operand type for in-place {}: {}",
            op.name(),
            b.get_type().name()?
        )));
    };
    heavy(py, a.numel(), || match b {
        Operand::Tensor(b) => a.math_binary_(&b, op),
        Operand::Scalar(s) => a.math_binary_scalar_(s, op),
    })
    .py()
}

macro_rules! math_dunders {
    ($($fwd:ident, $rev:ident, $inp:ident => $op:ident;)*) => {
        #[pymethods]
        impl PyTensor {$(
            fn $fwd(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                math_op(self.t(), other, MathBinaryOp::$op, false)
            }
            fn $rev(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                math_op(self.t(), other, MathBinaryOp::$op, true)
            }
            fn $inp(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
                math_inplace(self.t(), other, MathBinaryOp::$op)
            }
        )*}
    };
}

math_dunders! {
    __floordiv__, __rfloordiv__, __ifloordiv__ => FloorDivide;
    __mod__, __rmod__, __imod__ => Remainder;
    __and__, __rand__, __iand__ => BitwiseAnd;
    __or__, __ror__, __ior__ => BitwiseOr;
    __xor__, __rxor__, __ixor__ => BitwiseXor;
    __lshift__, __rlshift__, __ilshift__ => BitwiseLeftShift;
    __rshift__, __rrshift__, __irshift__ => BitwiseRightShift;
}

#[pymethods]
impl PyTensor {
    /// `~x`: bitwise invert (integers and bool; `TypeError` for floats).
    fn __invert__(&self) -> PyResult<PyTensor> {
        self.t().math(MathOp::BitwiseInvert).py().map(Into::into)
    }

    /// The value of a 0-d integer tensor as a Python `int` (so the tensor can index a
    /// sequence); `TypeError` for any other tensor, as NumPy.
    fn __index__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let t = self.t();
        if t.rank() != 0 || !t.dtype().is_integer() {
            return Err(PyTypeError::new_err(format!(
                "only 0-d integer tensors can be converted to an index (got {}-d {})",
                t.rank(),
                t.dtype()
            )));
        }
        item(py, t)
    }

    /// The single element as a Python `complex` (`ValueError` when the tensor does not hold
    /// exactly one element, as `__float__`).
    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyComplex>> {
        if self.t().numel() != 1 {
            return Err(PyValueError::new_err(
                "only tensors of one element can be converted to Python scalars",
            ));
        }
        // The element as a Python bool, int, float or complex, then Python's own conversion.
        let v = item(py, self.t())?;
        let z = py.get_type::<PyComplex>().call1((v,))?;
        Ok(z.cast_into::<PyComplex>()?)
    }
}

/// The tensor operand of a two-operand function: a tensor stays, an array-like is
/// converted, a Python scalar becomes a 0-d tensor of the dtype weak promotion gives it next
/// to `other` (`None` when `other` is a scalar too).
fn function_operand(obj: Operand, other: Option<DType>) -> PyResult<Tensor> {
    match (obj, other) {
        (Operand::Tensor(t), _) => Ok(t),
        (Operand::Scalar(s), Some(d)) => Tensor::scalar(s, result_type_scalar(d, s).py()?).py(),
        (Operand::Scalar(_), None) => Err(PyTypeError::new_err(
            "at least one operand must be an array (both are Python scalars)",
        )),
    }
}

/// `x1` and `x2` of the two-operand function `name` as tensors: a tensor stays, an
/// array-like is converted, and a Python scalar becomes a 0-d tensor of the dtype weak
/// promotion gives it next to the other operand ([`function_operand`]). Two Python scalars
/// take their default dtypes when `both_scalars` allows them, else are a `TypeError`; any
/// other type is a `TypeError`.
pub(crate) fn weak_pair(
    name: &str,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
    both_scalars: bool,
) -> PyResult<(Tensor, Tensor)> {
    let not_array = |o: &Bound<'_, PyAny>| match o.get_type().name() {
        Ok(ty) => PyTypeError::new_err(format!(
            "{name}: expected an array or a Python scalar, got {ty}"
        )),
        Err(e) => e,
    };
    // A Python complex is weak next to the other operand's dtype (float64 when that is not
    // a tensor).
    let hint = |o: &Bound<'_, PyAny>| {
        o.cast::<PyTensor>()
            .map_or(DType::F64, |t| t.get().t().dtype())
    };
    let a = operand(x1, hint(x2))?.ok_or_else(|| not_array(x1))?;
    let b = operand(x2, hint(x1))?.ok_or_else(|| not_array(x2))?;
    let dtype_of = |o: &Operand| match o {
        Operand::Tensor(t) => Some(t.dtype()),
        Operand::Scalar(_) => None,
    };
    let (da, db) = (dtype_of(&a), dtype_of(&b));
    if both_scalars && da.is_none() && db.is_none() {
        return Ok((to_tensor(x1, None, None)?, to_tensor(x2, None, None)?));
    }
    Ok((function_operand(a, db)?, function_operand(b, da)?))
}

/// A `TypeError` naming `name` when `x` is a Python `bool`, `int`, `float` or `complex`:
/// the Array API's functions of one array want an array.
pub(crate) fn not_a_python_scalar(name: &str, x: &Bound<'_, PyAny>) -> PyResult<()> {
    // `bool` is a subclass of `int`.
    let scalar = x.is_instance_of::<PyInt>()
        || x.is_instance_of::<PyFloat>()
        || x.is_instance_of::<PyComplex>();
    if scalar {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected an array, got a Python {}",
            x.get_type().name()?
        )));
    }
    Ok(())
}

/// `name(x)` for a one-operand elementwise registry op. `x` is a tensor or an array-like
/// (converted); a Python `bool`, `int`, `float` or `complex` is a `TypeError`, as the Array
/// API wants an array.
pub fn elementwise_unary(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    not_a_python_scalar(name, x)?;
    // A tensor is borrowed; anything else is converted (`asarray`).
    if let Ok(t) = x.cast::<PyTensor>() {
        return unary_of(py, name, t.get().t());
    }
    unary_of(py, name, &to_tensor(x, None, None)?)
}

/// `name(x)` for a tensor: the op family's method for a plain one, else the registry.
fn unary_of(py: Python<'_>, name: &str, x: &Tensor) -> PyResult<PyTensor> {
    heavy(py, x.numel(), || {
        if plain(x) {
            if let Some(op) = UnaryOp::from_name(name) {
                return x.unary(op).py();
            }
            if let Some(op) = MathOp::from_name(name) {
                return x.math(op).py();
            }
        }
        invoke1(name, std::slice::from_ref(x), &[])
    })
    .map(Into::into)
}

/// True for a dense tensor that records no gradient: its op family's `Tensor` method runs the
/// dense kernel at once, which costs less than the registry's lookup by name; other tensors
/// go through the registry (sparse kernels, the fallback and its warnings, autograd).
fn plain(t: &Tensor) -> bool {
    t.stype() == StorageType::Default && !t.requires_grad()
}

/// `name(a, b)` through its op family's `Tensor` method, for plain operands ([`plain`]) and a
/// name of the three families; `None` otherwise.
fn by_method(name: &str, a: &Tensor, b: &Tensor) -> Option<tessera::Result<Tensor>> {
    if !(plain(a) && plain(b)) {
        return None;
    }
    if let Some(op) = BinaryOp::from_name(name) {
        return Some(a.binary(b, op));
    }
    if let Some(op) = CompareOp::from_name(name) {
        return Some(a.compare(b, op));
    }
    MathBinaryOp::from_name(name).map(|op| a.math_binary(b, op))
}

/// `name(x1, x2)` for a two-operand elementwise registry op, with Python scalars as weak
/// operands (the Array API's rule for scalars in binary functions).
pub fn elementwise_binary(
    py: Python<'_>,
    name: &str,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    // Two tensors (the common case) are borrowed, not cloned.
    if let (Ok(a), Ok(b)) = (x1.cast::<PyTensor>(), x2.cast::<PyTensor>()) {
        let (a, b) = (a.get().t(), b.get().t());
        let n = a.numel().max(b.numel());
        if let Some(r) = heavy(py, n, || by_method(name, a, b)) {
            return r.py().map(Into::into);
        }
    }
    let (a, b) = weak_pair(name, x1, x2, false)?;
    let n = a.numel().max(b.numel());
    heavy(py, n, || match by_method(name, &a, &b) {
        Some(r) => r.py(),
        None => invoke1(name, &[a, b], &[]),
    })
    .map(Into::into)
}

/// The Array API's `clip(x, /, min=None, max=None)`: `min` and `max` may be tensors,
/// array-likes or Python scalars (weak next to `x`); the result has `x`'s dtype.
#[pyfunction]
#[pyo3(signature = (x, /, min = None, max = None))]
pub fn clip(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let x = match operand(x, DType::F64)? {
        Some(Operand::Tensor(t)) => t,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "clip: x must be an array, got {}",
                x.get_type().name()?
            )))
        }
    };
    let bound = |b: Option<&Bound<'_, PyAny>>| -> PyResult<Option<Tensor>> {
        match b {
            Some(b) if !b.is_none() => match operand(b, x.dtype())? {
                Some(o) => function_operand(o, Some(x.dtype())).map(Some),
                None => Err(PyTypeError::new_err(format!(
                    "clip: a bound must be an array, a Python scalar or None, got {}",
                    b.get_type().name()?
                ))),
            },
            _ => Ok(None),
        }
    };
    let (lo, hi) = (bound(min)?, bound(max)?);
    heavy(py, x.numel(), || x.clip(lo.as_ref(), hi.as_ref()))
        .py()
        .map(Into::into)
}
