"""The Array API's elementwise functions (revision 2024.12): ``tessera.acos(x)`` runs the
registry op ``acos``. Each is a native builtin (crates/tessera-py/src/namespace_elementwise.rs),
so a call costs no Python frame.

Signatures are the standard's: operands are positional-only. One-operand functions take an
array (or an array-like, converted); two-operand functions also take a Python ``bool``,
``int`` or ``float`` for either operand (not both), as a weak scalar: it takes the other
operand's dtype when its kind fits (``int8_array + 1`` stays int8), as the operators do.
Dtype rules, special values and errors: docs/design.md U1-U6 and docs/ops.md.
"""

from . import _native
from ._native import clip

# The standard's names (the registry ops behind abs and pow are absolute and power).
_UNARY = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
    "cos", "cosh", "exp", "expm1", "floor", "isfinite", "isinf", "isnan", "log", "log1p",
    "log2", "log10", "logical_not", "negative", "positive", "reciprocal", "round", "sign",
    "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
]

_BINARY = [
    "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
    "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
    "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder",
    "subtract",
]

__all__ = sorted([*_UNARY, *_BINARY, "clip"])

for _name in [*_UNARY, *_BINARY]:
    globals()[_name] = getattr(_native, _name)
del _name
