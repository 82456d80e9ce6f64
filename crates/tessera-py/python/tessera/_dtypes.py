"""The dtypes of the Python array API standard and its dtype functions: ``finfo``, ``iinfo``,
``isdtype``, ``result_type`` and ``can_cast``. Each binds a Rust function
(``tessera::dtype_info``); this module only turns arguments into dtypes."""

import builtins
from dataclasses import dataclass

from . import _native
from ._native import Tensor, dtype

int16 = _native.int16
uint16 = _native.uint16
uint32 = _native.uint32
uint64 = _native.uint64
complex64 = _native.complex64
complex128 = _native.complex128

__all__ = [
    "can_cast", "complex64", "complex128", "finfo", "iinfo", "int16", "isdtype", "result_type",
    "uint16", "uint32", "uint64",
]


def _dtype_of(x, what):
    """The dtype of a tensor or a dtype spelling (TypeError for anything else)."""
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, dtype):
        return x
    if isinstance(x, (builtins.bool, int, float, complex)) or x is None:
        raise TypeError(f"{what}: expected a dtype or an array, got {x!r}")
    return dtype(x)


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name for the type
    """Limits of a floating-point dtype (of its real parts for a complex dtype)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dtype


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the standard's name for the type
    """Limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: dtype


def finfo(type, /):  # noqa: A002 - the standard's parameter name
    """Machine limits of a floating-point (or complex) dtype or array."""
    return finfo_object(*_native._finfo(_dtype_of(type, "finfo")))


def iinfo(type, /):  # noqa: A002 - the standard's parameter name
    """Machine limits of an integer dtype or array."""
    return iinfo_object(*_native._iinfo(_dtype_of(type, "iinfo")))


def isdtype(dtype, kind):  # noqa: A002 - the standard's parameter name
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name (``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex
    floating"``, ``"numeric"``) or a tuple of these (any of them)."""
    if not isinstance(dtype, _native.dtype):
        raise TypeError(f"isdtype: expected a tessera dtype, got {dtype!r}")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if _native._isdtype(dtype, k):
                return True
        elif isinstance(k, _native.dtype):
            if k == dtype:
                return True
        else:
            raise TypeError(f"isdtype: a kind is a str, a dtype or a tuple of these, got {k!r}")
    return False


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on the arguments: arrays and dtypes promote by the standard's
    table, Python scalars (``bool``, ``int``, ``float``, ``complex``) are weak."""
    dtypes, scalars = [], []
    for x in arrays_and_dtypes:
        if isinstance(x, (builtins.bool, int, float, complex)):
            scalars.append(x)
        else:
            dtypes.append(_dtype_of(x, "result_type"))
    return _native._result_type(dtypes, scalars)


def can_cast(from_, to, /):
    """Whether ``from_`` (a dtype or array) casts to ``to`` by the promotion rules."""
    if not isinstance(to, _native.dtype):
        to = _dtype_of(to, "can_cast")
    return _native._can_cast(_dtype_of(from_, "can_cast"), to)
