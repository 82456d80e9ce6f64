//! The Array API's elementwise functions (`tessera.exp`, `tessera.add`, ...) as native
//! builtins, one per function: each calls [`elementwise_unary`] or [`elementwise_binary`]
//! with its registry op's name.
//!
//! They were Python functions that called those two bindings with the name. A 16-element
//! `exp` then paid for a Python frame, and more when called as `f(*args)` (no inlined call):
//! 216 against 189 ns directly, 255 against NumPy's 253 through `*args` (1 thread,
//! docs/performance.md). Each docstring names the registry op, whose own documentation is
//! `help(tessera.ops.<op>)` and docs/ops.md.

use pyo3::prelude::*;

use crate::elementwise::{elementwise_binary, elementwise_unary};
use crate::handle::PyTensor;

/// Defines `$f(x, /)` for each `$f => $op` and `register_unary`, which adds them all.
macro_rules! unary_functions {
    ($($f:ident => $op:literal),* $(,)?) => {
        $(
            #[doc = concat!(
                "Elementwise `", stringify!($f), "(x, /)` of the Array API (registry op `",
                $op, "`: `help(tessera.ops.", $op, ")`, docs/ops.md)."
            )]
            #[pyfunction]
            #[pyo3(signature = (x, /))]
            fn $f(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                elementwise_unary(py, $op, x)
            }
        )*

        /// The standard's names of the one-operand functions.
        const UNARY_NAMES: &[&str] = &[$(stringify!($f)),*];

        fn register_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($f, m)?)?;)*
            Ok(())
        }
    };
}

/// Defines `$f(x1, x2, /)` for each `$f => $op` and `register_binary`, which adds them all.
macro_rules! binary_functions {
    ($($f:ident => $op:literal),* $(,)?) => {
        $(
            #[doc = concat!(
                "Elementwise `", stringify!($f), "(x1, x2, /)` of the Array API, with \
                 broadcasting, promotion and Python scalars as weak operands (registry op `",
                $op, "`: `help(tessera.ops.", $op, ")`, docs/ops.md)."
            )]
            #[pyfunction]
            #[pyo3(signature = (x1, x2, /))]
            fn $f(
                py: Python<'_>,
                x1: &Bound<'_, PyAny>,
                x2: &Bound<'_, PyAny>,
            ) -> PyResult<PyTensor> {
                elementwise_binary(py, $op, x1, x2)
            }
        )*

        /// The standard's names of the two-operand functions.
        const BINARY_NAMES: &[&str] = &[$(stringify!($f)),*];

        fn register_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($f, m)?)?;)*
            Ok(())
        }
    };
}

// The standard's name => the registry op's name (they differ for abs and pow).
unary_functions! {
    abs => "absolute", acos => "acos", acosh => "acosh", asin => "asin", asinh => "asinh",
    atan => "atan", atanh => "atanh", bitwise_invert => "bitwise_invert", ceil => "ceil",
    cos => "cos", cosh => "cosh", exp => "exp", expm1 => "expm1", floor => "floor",
    isfinite => "isfinite", isinf => "isinf", isnan => "isnan", log => "log",
    log1p => "log1p", log2 => "log2", log10 => "log10", logical_not => "logical_not",
    negative => "negative", positive => "positive", reciprocal => "reciprocal",
    round => "round", sign => "sign", signbit => "signbit", sin => "sin", sinh => "sinh",
    sqrt => "sqrt", square => "square", tan => "tan", tanh => "tanh", trunc => "trunc",
}

binary_functions! {
    add => "add", atan2 => "atan2", bitwise_and => "bitwise_and",
    bitwise_left_shift => "bitwise_left_shift", bitwise_or => "bitwise_or",
    bitwise_right_shift => "bitwise_right_shift", bitwise_xor => "bitwise_xor",
    copysign => "copysign", divide => "divide", equal => "equal",
    floor_divide => "floor_divide", greater => "greater", greater_equal => "greater_equal",
    hypot => "hypot", less => "less", less_equal => "less_equal", logaddexp => "logaddexp",
    logical_and => "logical_and", logical_or => "logical_or", logical_xor => "logical_xor",
    maximum => "maximum", minimum => "minimum", multiply => "multiply",
    nextafter => "nextafter", not_equal => "not_equal", pow => "power",
    remainder => "remainder", subtract => "subtract",
}

/// Adds every elementwise function of the namespace to the native module, and their names
/// as `_ELEMENTWISE_NAMES` (one-operand, two-operand), which `tessera._elementwise` exports:
/// the names are written once, here.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_unary(m)?;
    register_binary(m)?;
    m.add("_ELEMENTWISE_NAMES", (UNARY_NAMES, BINARY_NAMES))
}
