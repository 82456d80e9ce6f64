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

# The standard's names, one- and two-operand (the registry ops behind abs and pow are
# absolute and power), as the native module defines them.
_UNARY, _BINARY = _native._ELEMENTWISE_NAMES

__all__ = sorted([*_UNARY, *_BINARY, "clip"])

for _name in [*_UNARY, *_BINARY]:
    globals()[_name] = getattr(_native, _name)
del _name
