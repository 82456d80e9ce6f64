"""The Array API's ``linalg`` extension (revision 2024.12), computed by the Rust core: the
factorizations on faer (``Tensor::det``, ``solve``, ``eigh``, ``svd``... docs/design.md L4-L7),
the rest from Tessera's own ops (L1-L3). This module checks the standard's signatures and
binds them.

Every function reads the last two dims as a stack of matrices (batched). float32, float64,
complex64 and complex128 compute in their own precision; float16 and bfloat16 in float32 (the
results cast back); integers and bool in float64, as NumPy does. A singular matrix in ``inv``,
``solve`` or a negative ``matrix_power``, a matrix that is not positive definite in
``cholesky``, and inf or NaN given to ``eigh``/``svd`` raise NumPy's ``LinAlgError`` (a
``ValueError``), re-exported here.
"""

import builtins as _builtins
import math as _math
from typing import NamedTuple as _NamedTuple

from numpy.linalg import LinAlgError

from . import _native
from ._namespace import _array, matmul, matrix_transpose, tensordot, vecdot
from ._native import Tensor as _Tensor

__all__ = [
    "EighResult", "LinAlgError", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cross",
    "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
    "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class EighResult(_NamedTuple):
    """``eigh``'s result: ascending real ``eigenvalues`` and the ``eigenvectors`` (columns)."""

    eigenvalues: _Tensor
    eigenvectors: _Tensor


class QRResult(_NamedTuple):
    """``qr``'s result: ``Q`` with orthonormal columns and upper triangular ``R``."""

    Q: _Tensor
    R: _Tensor


class SlogdetResult(_NamedTuple):
    """``slogdet``'s result: the ``sign`` of the determinant and ``logabsdet``, log |det|."""

    sign: _Tensor
    logabsdet: _Tensor


class SVDResult(_NamedTuple):
    """``svd``'s result: ``x = U @ diag(S) @ Vh``, ``S`` descending."""

    U: _Tensor
    S: _Tensor
    Vh: _Tensor


def _bool(name, v):
    if not isinstance(v, _builtins.bool):
        raise TypeError(f"{name} must be a bool, got {v!r}")
    return v


def _int(name, v):
    if isinstance(v, _builtins.bool) or not isinstance(v, int):
        try:
            return int(v.__index__())
        except AttributeError:
            raise TypeError(f"{name} must be an int, got {v!r}") from None
    return v


def _rtol(rtol):
    """``rtol`` as a float (None: the default); a 0-d array is taken as its value."""
    if rtol is None:
        return None
    if isinstance(rtol, _Tensor):
        if rtol.ndim != 0:
            raise ValueError("rtol as an array of several values is not supported; give a float")
        rtol = rtol.item()
    if isinstance(rtol, (_builtins.bool, complex)) or not isinstance(rtol, (int, float)):
        raise TypeError(f"rtol must be a float or None, got {rtol!r}")
    return float(rtol)


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix: lower ``L`` with
    ``L @ L.mH == x`` (from the lower triangle), or with ``upper`` the upper ``U`` with
    ``U.mH @ U == x``."""
    return _native._cholesky(_array("cholesky", x), _bool("upper", upper))


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along ``axis`` (the operands broadcast)."""
    return _native._outer_cross(_array("cross", x1), _array("cross", x2), _int("axis", axis))


def det(x, /):
    """The determinant of each square matrix."""
    return _native._linalg1("det", _array("det", x))


def diagonal(x, /, *, offset=0):
    """The ``offset``-th diagonal of each matrix (a view; above the main one when positive)."""
    return _native._diagonal(_array("diagonal", x), _int("offset", offset))


def eigh(x, /):
    """The eigenvalues (ascending, real) and eigenvectors of each Hermitian matrix, read
    from its lower triangle."""
    return EighResult(*_native._linalg_n("eigh", _array("eigh", x), False))


def eigvalsh(x, /):
    """The eigenvalues (ascending, real) of each Hermitian matrix."""
    return _native._linalg1("eigvalsh", _array("eigvalsh", x))


def inv(x, /):
    """The inverse of each square matrix (``LinAlgError`` when one is singular)."""
    return _native._linalg1("inv", _array("inv", x))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix: ``"fro"`` (default), ``"nuc"`` (sum of the singular
    values), ``1``/``-1`` (column sums), ``2``/``-2`` (singular values), ``inf``/``-inf``
    (row sums)."""
    return _native._matrix_norm(_array("matrix_norm", x), _bool("keepdims", keepdims), ord)


def matrix_power(x, n, /):
    """Each square matrix raised to the integer power ``n`` (``n < 0``: of the inverse)."""
    return _native._matrix_power(_array("matrix_power", x), _int("n", n))


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values above ``rtol`` times the largest (default ``rtol``:
    ``max(M, N)`` times the dtype's epsilon), as int64."""
    return _native._pinv_rank(_array("matrix_rank", x), _rtol(rtol), True)


def outer(x1, x2, /):
    """The outer product of two vectors."""
    return _native._outer_cross(_array("outer", x1), _array("outer", x2), None)


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD (singular values up to
    ``rtol`` times the largest count as zero; default as ``matrix_rank``)."""
    return _native._pinv_rank(_array("pinv", x), _rtol(rtol), False)


def qr(x, /, *, mode="reduced"):
    """The QR factorization of each matrix: ``mode="reduced"`` gives ``Q`` ``[..., M, K]`` and
    ``R`` ``[..., K, N]`` (``K = min(M, N)``), ``"complete"`` ``[..., M, M]`` and
    ``[..., M, N]``."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*_native._linalg_n("qr", _array("qr", x), mode == "complete"))


def slogdet(x, /):
    """The sign and ``log |det|`` of each square matrix's determinant (sign 0 and log -inf
    when singular)."""
    return SlogdetResult(*_native._linalg_n("slogdet", _array("slogdet", x), False))


def solve(x1, x2, /):
    """The solution of ``x1 @ x = x2``: ``x2`` is a vector when it is 1-D, else a stack of
    matrices whose batch dims broadcast with ``x1``'s (``LinAlgError`` when singular)."""
    return _native._solve(_array("solve", x1), _array("solve", x2))


def svd(x, /, *, full_matrices=True):
    """The singular value decomposition ``x = U @ diag(S) @ Vh`` of each matrix."""
    return SVDResult(*_native._linalg_n("svd", _array("svd", x), _bool("full_matrices",
                                                                          full_matrices)))


def svdvals(x, /):
    """The singular values (descending) of each matrix."""
    return _native._linalg1("svdvals", _array("svdvals", x))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the ``offset``-th diagonal of each matrix (in ``dtype`` when given)."""
    return _native._trace(_array("trace", x), _int("offset", offset), dtype)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector ``ord``-norm over ``axis`` (all axes by default): ``ord`` any real number,
    ``inf`` or ``-inf``."""
    if isinstance(ord, _builtins.bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"vector_norm: ord must be a number, got {ord!r}")
    if _math.isnan(ord):
        raise ValueError("vector_norm: ord is NaN")
    if axis is not None:
        axis = [_int("axis", a) for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    return _native._vector_norm(_array("vector_norm", x), axis, _bool("keepdims", keepdims),
                                float(ord))
