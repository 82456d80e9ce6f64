"""Tessera: a Rust tensor runtime with a NumPy-like Python API.

Tensors share storage with their views (``t[1:, ::-2]``, ``expand``, ``.T``...), export
zero-copy to NumPy (``np.asarray(t)``), and every registered operator is callable by name
(``tessera.invoke`` / ``tessera.ops``). See ``examples/tour.py`` for a walk through.

Notes:

- ``asarray`` copies foreign data; with ``copy=False`` it adopts a DLPack producer's memory
  (NumPy arrays, PyTorch tensors) and raises ``ValueError`` for anything else.
- ``np.asarray(t)`` is a zero-copy view of the tensor's storage; writes through it bypass
  Tessera's storage lock, like any NumPy view shared between threads.
- bfloat16 has no NumPy dtype: exporting a bfloat16 tensor raises ``TypeError``.
- NumPy ufuncs defer to the tensor's operators (``ndarray + tensor`` is a tensor);
  ``np.add(t, 1)`` raises ``TypeError``: use ``t + 1`` or ``np.asarray(t)``.
"""

from ._native import (
    RingBuffer,
    Tensor,
    arange,
    asarray,
    bfloat16,
    bool,  # noqa: A004 - NumPy spells it this way too
    broadcast_to,
    create_view,
    dtype,
    empty,
    encode_index,
    expand_dims,
    fallback_count,
    flip,
    float16,
    float32,
    float64,
    from_dlpack,
    full,
    get_num_threads,
    int8,
    int32,
    int64,
    invoke,
    list_ops,
    load,
    load_npy,
    ones,
    permute_dims,
    reshape,
    save,
    save_npy,
    set_num_threads,
    squeeze,
    transpose,
    uint8,
    zeros,
)
from . import autograd, fft, linalg, ops, optim, sparse
from ._arrayfns import *  # noqa: F401,F403 - the Array API functions (their own __all__)
from ._arrayfns import __all__ as _arrayfns_all
from ._advindex import take, take_along_axis
from ._dtypes import *  # noqa: F403 - the standard's dtypes and dtype functions
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = [
    "RingBuffer", "Tensor", "arange", "asarray", "autograd", "bfloat16", "bool", "fft",
    "broadcast_to", "create_view", "dtype", "empty", "enable_grad", "encode_index", "linalg",
    "expand_dims", "fallback_count", "flip", "is_grad_enabled", "no_grad", "optim",
    "set_grad_enabled",
    "float16", "float32", "float64", "full", "int8", "int32", "int64", "invoke", "list_ops",
    "load", "load_npy", "max", "mean", "min", "ones", "ops", "permute_dims",
    "reshape", "save", "save_npy", "squeeze", "sparse", "sum", "tile", "transpose", "uint8",
    "zeros",
] + _arrayfns_all
__all__ += ["from_dlpack", "get_num_threads", "set_num_threads", "take", "take_along_axis"]
__all__ += _dtypes.__all__  # noqa: F405


def _summed_dtype(x, dtype):
    """``x`` converted for a reduction with result ``dtype`` (None: unchanged)."""
    return x if dtype is None else x.astype(dtype, copy=False)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001 - the standard's name
    """Sum of ``x`` over ``axis`` (None: all; int or tuple). Without ``dtype``: int64 for
    bool and signed integers, uint64 for unsigned ones, else ``x``'s dtype; with ``dtype``
    the sum is computed in it."""
    x = _summed_dtype(asarray(x), dtype)
    out = x.sum(axis=axis, keepdims=keepdims)
    return out if dtype is None else out.astype(dtype, copy=False)


def mean(x, /, *, axis=None, keepdims=False):
    """Mean of ``x`` over ``axis`` (None: all; int or tuple); ints give float64."""
    return asarray(x).mean(axis=axis, keepdims=keepdims)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001 - the standard's name
    """Maximum of ``x`` over ``axis``; NaN propagates; empty reductions raise ValueError."""
    return asarray(x).max(axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001 - the standard's name
    """Minimum of ``x`` over ``axis``; NaN propagates; empty reductions raise ValueError."""
    return asarray(x).min(axis=axis, keepdims=keepdims)


def tile(x, repetitions, /):
    """NumPy ``tile``: ``x`` repeated ``repetitions`` times per dim (padded with 1s on the
    left)."""
    return asarray(x).tile(repetitions)


from ._namespace import *  # noqa: E402, F403 - constants, devices, products, isin, astype
from ._namespace import __all__ as _namespace_all  # noqa: E402
from ._namespace import __array_namespace_info__  # noqa: E402, F401

__array_api_version__ = "2024.12"
__all__ += _namespace_all

from ._elementwise import *  # noqa: E402, F403 - the Array API's elementwise functions
from ._elementwise import __all__ as _elementwise_all  # noqa: E402

__all__ += _elementwise_all
