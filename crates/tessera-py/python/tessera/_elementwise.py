"""The Array API's elementwise functions (revision 2024.12), each a Tessera registry op run
by name: ``tessera.acos(x)`` is ``tessera.invoke("acos", x)``.

Signatures are the standard's: operands are positional-only. One-operand functions take an
array (or an array-like, converted); two-operand functions also take a Python ``bool``,
``int`` or ``float`` for either operand (not both), as a weak scalar: it takes the other
operand's dtype when its kind fits (``int8_array + 1`` stays int8), as the operators do.
Dtype rules, special values and errors: docs/design.md U1-U6 and docs/ops.md.
"""

from ._native import clip
from ._native import elementwise_binary as _elementwise_binary
from ._native import elementwise_unary as _elementwise_unary
from ._native import list_ops as _list_ops

# The standard's name -> the registry op's name (they differ for abs and pow).
_UNARY = {
    "abs": "absolute", "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh",
    "atan": "atan", "atanh": "atanh", "bitwise_invert": "bitwise_invert", "ceil": "ceil",
    "cos": "cos", "cosh": "cosh", "exp": "exp", "expm1": "expm1", "floor": "floor",
    "isfinite": "isfinite", "isinf": "isinf", "isnan": "isnan", "log": "log",
    "log1p": "log1p", "log2": "log2", "log10": "log10", "logical_not": "logical_not",
    "negative": "negative", "positive": "positive", "reciprocal": "reciprocal",
    "round": "round", "sign": "sign", "signbit": "signbit", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "square": "square", "tan": "tan", "tanh": "tanh", "trunc": "trunc",
}

_BINARY = {
    "add": "add", "atan2": "atan2", "bitwise_and": "bitwise_and",
    "bitwise_left_shift": "bitwise_left_shift", "bitwise_or": "bitwise_or",
    "bitwise_right_shift": "bitwise_right_shift", "bitwise_xor": "bitwise_xor",
    "copysign": "copysign", "divide": "divide", "equal": "equal",
    "floor_divide": "floor_divide", "greater": "greater", "greater_equal": "greater_equal",
    "hypot": "hypot", "less": "less", "less_equal": "less_equal", "logaddexp": "logaddexp",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "maximum": "maximum", "minimum": "minimum", "multiply": "multiply",
    "nextafter": "nextafter", "not_equal": "not_equal", "pow": "power",
    "remainder": "remainder", "subtract": "subtract",
}


_DOCS = {info["name"]: info["doc"] for info in _list_ops()}


def _make_unary(name, op):
    def f(x, /):
        return _elementwise_unary(op, x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = _DOCS.get(op, "")
    return f


def _make_binary(name, op):
    def f(x1, x2, /):
        return _elementwise_binary(op, x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = _DOCS.get(op, "")
    return f


__all__ = sorted([*_UNARY, *_BINARY, "clip"])

for _name, _op in _UNARY.items():
    globals()[_name] = _make_unary(_name, _op)
for _name, _op in _BINARY.items():
    globals()[_name] = _make_binary(_name, _op)
del _name, _op
