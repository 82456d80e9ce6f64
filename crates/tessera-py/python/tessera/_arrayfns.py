"""The Array API's sorting, searching, set, cumulative and joining functions: each binds one
registry op (``tessera.invoke``), so each is a Rust operation first and differentiable where
the op has a backward rule (docs/design.md section A, docs/ops.md)."""

import builtins as _builtins
from collections import namedtuple as _namedtuple

from . import _native
from ._native import Tensor as _Tensor, asarray as _asarray, full as _full, invoke as _invoke
# Bound in Rust with the standard's signatures (the per-call cost of a Python wrapper is
# what NumPy's small calls don't pay).
from ._native import (  # noqa: F401 - re-exported
    argmax, argmin, argsort, cumulative_prod, cumulative_sum, sort, where,
)

__all__ = [
    "all", "any", "argmax", "argmin", "argsort", "broadcast_arrays", "concat", "count_nonzero",
    "cumulative_prod", "cumulative_sum", "diff", "empty_like", "eye", "full_like", "linspace",
    "meshgrid", "moveaxis", "nonzero", "prod", "repeat", "roll", "searchsorted", "sort", "stack",
    "std", "tril", "triu", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "unstack", "var", "where",
]

UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _array(x):
    """``x`` as a tensor; anything else than a tensor or array-like is a TypeError."""
    if isinstance(x, _Tensor):
        return x
    return _asarray(x)


def _int(v, what):
    if isinstance(v, _builtins.bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return v.__index__()


def _axis_or_none(axis):
    return None if axis is None else _int(axis, "axis")


def unique_values(x, /):
    """The distinct elements of ``x`` (flattened), sorted; every NaN is distinct."""
    return _invoke("unique_values", _array(x))


def unique_all(x, /):
    """``(values, indices, inverse_indices, counts)`` of the distinct elements of ``x``:
    first-occurrence indices into the flattened ``x``, inverse indices of ``x``'s shape."""
    return UniqueAllResult(*_invoke("unique_all", _array(x)))


def unique_counts(x, /):
    """``(values, counts)`` of the distinct elements of ``x``."""
    r = unique_all(x)
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x, /):
    """``(values, inverse_indices)`` of the distinct elements of ``x``."""
    r = unique_all(x)
    return UniqueInverseResult(r.values, r.inverse_indices)


def _arrays(arrays):
    if isinstance(arrays, _Tensor) or not isinstance(arrays, (tuple, list)):
        raise TypeError("arrays must be a tuple or list of arrays")
    if not arrays:
        raise ValueError("need at least one array")
    return [_array(a) for a in arrays]


def concat(arrays, /, *, axis=0):
    """``arrays`` joined along ``axis`` (flattened first when None); dtypes promote."""
    return _invoke("concat", *_arrays(arrays), axis=_axis_or_none(axis))


def stack(arrays, /, *, axis=0):
    """``arrays`` (one shape) joined along a new axis ``axis``; dtypes promote."""
    return _invoke("stack", *_arrays(arrays), axis=_int(axis, "axis"))


def _axes(axis):
    """``axis`` (None, an int or a tuple of ints) as None or a tuple."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_int(a, "axis") for a in axis)
    return (_int(axis, "axis"),)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """Product over ``axis``; bool and integers multiply in int64 unless ``dtype`` is given;
    the empty product is 1."""
    return _native._prod(_array(x), _axes(axis), _builtins.bool(keepdims), dtype)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Variance over ``axis`` with ``correction`` (NumPy's ddof); integers give float64."""
    return _native._var(_array(x), _axes(axis), float(correction), _builtins.bool(keepdims))


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Standard deviation over ``axis`` with ``correction`` (NumPy's ddof)."""
    return _native._std(_array(x), _axes(axis), float(correction), _builtins.bool(keepdims))


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001 - the standard's name
    """Whether every element over ``axis`` is non-zero (NaN counts as true)."""
    return _native._truth("all", _array(x), _axes(axis), _builtins.bool(keepdims))


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001 - the standard's name
    """Whether any element over ``axis`` is non-zero (NaN counts as true)."""
    return _native._truth("any", _array(x), _axes(axis), _builtins.bool(keepdims))


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements over ``axis`` (int64)."""
    return _native._truth("count_nonzero", _array(x), _axes(axis), _builtins.bool(keepdims))


def nonzero(x, /):
    """The int64 indices of the non-zero elements, one tensor per dim (row-major order)."""
    idx = _invoke("argwhere", _array(x))
    return tuple(idx[:, d] for d in range(idx.shape[1]))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """int64 insertion points of ``x2``'s elements into the sorted 1-d ``x1`` (through
    ``sorter`` when given): before equal elements (``left``) or after them (``right``)."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    s = _asarray([], dtype=_native.int64) if sorter is None else _array(sorter)
    return _invoke("searchsorted", _array(x1), _array(x2), s, side=side)


def moveaxis(x, source, destination, /):
    """A view of ``x`` with axes ``source`` moved to ``destination``."""
    return _native._moveaxis(_array(x), _axes(source), _axes(destination))


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis`` (views), as a tuple."""
    return tuple(_native._unstack(_array(x), _int(axis, "axis")))


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (stride-0 views), as a list."""
    return list(_native._broadcast_arrays([_array(a) for a in arrays]))


def roll(x, /, shift, *, axis=None):
    """A copy of ``x`` with elements shifted by ``shift`` along ``axis`` (flattened when
    None), wrapping round."""
    shifts = _axes(shift)
    axes = _axes(axis)
    if axes is not None and len(shifts) not in (1, len(axes)):
        raise ValueError("shift and axis must have the same length")
    return _native._roll(_array(x), shifts, axes)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis`` (after joining ``prepend``/``append``)."""
    n = _int(n, "n")
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    p = None if prepend is None else _array(prepend)
    a = None if append is None else _array(append)
    return _native._diff(_array(x), _int(axis, "axis"), n, p, a)


def tril(x, /, *, k=0):
    """The lower triangle of the last two dims (``col - row <= k``), zeros elsewhere."""
    return _native._triangle(_array(x), _int(k, "k"), True)


def triu(x, /, *, k=0):
    """The upper triangle of the last two dims (``col - row >= k``), zeros elsewhere."""
    return _native._triangle(_array(x), _int(k, "k"), False)


def _device(device):
    """ValueError unless ``device`` is None, ``Device()`` or "cpu" (docs/design.md N2)."""
    _native._check_device(device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A ``n_rows x n_cols`` tensor with ones on diagonal ``k`` (float64 by default)."""
    _device(device)
    rows = _int(n_rows, "n_rows")
    cols = rows if n_cols is None else _int(n_cols, "n_cols")
    if rows < 0 or cols < 0:
        raise ValueError("eye: negative dimensions")
    return _native._eye(rows, cols, _int(k, "k"), dtype)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``)."""
    _device(device)
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError("complex linspace is not supported")
    num = _int(num, "num")
    if num < 0:
        raise ValueError(f"num must be non-negative, got {num}")
    return _native._linspace(float(start), float(stop), num, _builtins.bool(endpoint), dtype)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids of 1-d arrays: ``indexing`` "xy" (Cartesian) or "ij" (matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    return list(_native._meshgrid([_array(a) for a in arrays], indexing))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """A tensor of ``x``'s shape (and dtype unless given) filled with ``fill_value``."""
    _device(device)
    x = _array(x)
    return _full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype)


def empty_like(x, /, *, dtype=None, device=None):
    """An uninitialised tensor of ``x``'s shape (and dtype unless given)."""
    _device(device)
    x = _array(x)
    return _native.empty(x.shape, dtype=x.dtype if dtype is None else dtype)


def repeat(x, repeats, /, *, axis=None):
    """NumPy's ``repeat`` (the standard's): each element repeated ``repeats`` times (an int,
    or one count per element) along ``axis`` (of the flattened ``x`` when None). PyTorch's
    tiling repeat is ``Tensor.repeat(*sizes)``; NumPy's ``tile`` is ``tessera.tile``."""
    if isinstance(repeats, _builtins.bool):
        raise TypeError("repeats must be an int or an integer array")
    r = _asarray(repeats, dtype=_native.int64) if isinstance(repeats, int) else _array(repeats)
    return _invoke("repeat_interleave", _array(x), r, axis=_axis_or_none(axis))
