"""The rest of the Array API namespace (revision 2024.12): constants, the CPU device and
``__array_namespace_info__``, ``astype``, ``broadcast_shapes``, the complex parts, ``isin``,
the linear-algebra products of the main namespace, and ``zeros_like`` / ``ones_like``.

Each function binds a Rust operation (a registry op run by name, or a ``Tensor`` method);
this module only checks and converts arguments. Design: docs/design.md N1-N4.
"""

import builtins as _builtins
import math as _math

from . import _native
from ._dtypes import isdtype as _isdtype
from ._native import Device
from ._native import Tensor as _Tensor
from ._native import asarray as _asarray
from ._native import astype, broadcast_shapes  # noqa: F401 - re-exported (bound in Rust)
from ._native import invoke as _invoke

__all__ = [
    "Device", "astype", "broadcast_shapes", "conj", "e", "imag", "inf", "isin", "matmul",
    "matrix_transpose", "nan", "newaxis", "ones_like", "pi", "real", "tensordot", "vecdot",
    "zeros_like", "__array_namespace_info__",
]

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None


def _array(name, x):
    """``x`` as a tensor; a Python scalar is a ``TypeError`` (the standard wants an array)."""
    if isinstance(x, _Tensor):
        return x
    if isinstance(x, (_builtins.bool, int, float, complex)):
        raise TypeError(f"{name}: expected an array, got a Python {type(x).__name__}")
    return _asarray(x)


def conj(x, /):
    """The complex conjugate of each element (the identity for real dtypes)."""
    return _invoke("conj", _array("conj", x))


def real(x, /):
    """The real part of each element: float32 for complex64, float64 for complex128."""
    return _invoke("real", _array("real", x))


def imag(x, /):
    """The imaginary part of each element: float32 for complex64, float64 for complex128."""
    return _invoke("imag", _array("imag", x))


def isin(x1, x2, /, *, invert=False):
    """Whether each element of ``x1`` equals some element of ``x2``: bool, ``x1``'s shape.
    Either operand may be a Python scalar (not both); NaN is in no set."""
    if not isinstance(invert, _builtins.bool):
        raise TypeError("invert must be a bool")
    scalar = (_builtins.bool, int, float, complex)
    if isinstance(x1, scalar) and isinstance(x2, scalar):
        raise TypeError("isin: at least one operand must be an array")
    if isinstance(x1, scalar):
        x1 = _asarray(x1, dtype=_array("isin", x2).dtype)
    if isinstance(x2, scalar):
        x2 = _asarray([x2], dtype=_array("isin", x1).dtype)
    return _invoke("isin", _array("isin", x1), _array("isin", x2), invert=invert)


def matmul(x1, x2, /):
    """The matrix product (NumPy ``matmul``): batched over leading dims, 1-d operands
    promoted and squeezed as NumPy does."""
    return _invoke("matmul", _array("matmul", x1), _array("matmul", x2))


def matrix_transpose(x, /):
    """The transpose of each matrix in the last two dims: a view (``x.mT``)."""
    return _array("matrix_transpose", x).mT


def tensordot(x1, x2, /, *, axes=2):
    """Sum of products over ``axes``: an int ``n`` (the last ``n`` dims of ``x1`` with the
    first ``n`` of ``x2``) or a pair of axis sequences."""
    x1, x2 = _array("tensordot", x1), _array("tensordot", x2)
    if isinstance(axes, _builtins.bool):
        raise TypeError("axes must be an int or a pair of sequences")
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"axes must be non-negative, got {axes}")
        if axes > min(x1.ndim, x2.ndim):
            raise ValueError(f"axes={axes} exceeds the rank of an operand")
        a, b = list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    else:
        try:
            a, b = axes
        except (TypeError, ValueError):
            raise TypeError("axes must be an int or a pair of sequences") from None
        a = [a] if isinstance(a, int) else list(a)
        b = [b] if isinstance(b, int) else list(b)
    return _native._tensordot(x1, x2, a, b)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of the vectors along ``axis`` (conjugating ``x1``), the other dims
    broadcast."""
    if isinstance(axis, _builtins.bool) or not isinstance(axis, int):
        raise TypeError("axis must be an int")
    return _native._vecdot(_array("vecdot", x1), _array("vecdot", x2), axis)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros of ``x``'s shape (and dtype unless given)."""
    x = _array("zeros_like", x)
    return _native.zeros(x.shape, dtype=x.dtype if dtype is None else dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones of ``x``'s shape (and dtype unless given)."""
    x = _array("ones_like", x)
    return _native.ones(x.shape, dtype=x.dtype if dtype is None else dtype, device=device)


_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")
_STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64", "complex64", "complex128")


class _Info:
    """What ``__array_namespace_info__()`` returns: Tessera's capabilities, devices and
    dtypes (the standard's inspection API)."""

    __module__ = "tessera"

    def capabilities(self):
        """Boolean indexing and data-dependent shapes are supported; the rank is bounded
        only by memory."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self):
        """The CPU."""
        return Device()

    def devices(self):
        """The devices arrays can live on: the CPU."""
        return [Device()]

    def default_dtypes(self, *, device=None):
        """The dtypes that creation functions use when none is given."""
        _native.zeros((), device=device)  # checks the device
        return {
            "real floating": _native.float64,
            "complex floating": _native.complex128,
            "integral": _native.int64,
            "indexing": _native.int64,
        }

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes Tessera supports (all of them), as a name -> dtype dict,
        optionally only those of ``kind`` (a kind name, a dtype, or a tuple of them)."""
        _native.zeros((), device=device)
        names = _STANDARD_DTYPES
        if kind is not None:
            if isinstance(kind, str) and kind not in _KINDS:
                raise ValueError(f"unknown dtype kind {kind!r}")
            names = [n for n in names if _isdtype(getattr(_native, n), kind)]
        return {n: getattr(_native, n) for n in names}


def __array_namespace_info__():  # noqa: N807 - the standard's name
    """The inspection API of the namespace (``capabilities``, ``devices``, ``dtypes``...).
    The ``fft`` and ``linalg`` extensions are there (docs/design.md N4)."""
    return _Info()
