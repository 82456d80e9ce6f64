"""Sparse tensors: CSR matrices and row-sparse arrays (MXNet's storage types).

``csr_matrix((data, indices, indptr), shape=...)`` and ``row_sparse_array((data, indices),
shape=...)`` check their parts and raise ``ValueError`` naming the violated invariant;
``from_scipy`` / ``Tensor.to_scipy`` convert to and from ``scipy.sparse`` CSR; CSR index
arrays are int32 when the matrix fits (as SciPy's), else int64. Ops on sparse
tensors (``tessera.ops``, ``tessera.invoke`` and the operators) use sparse kernels where the
storage rules allow, else the logged dense fallback. ``sparse * dense`` is masked: implicit
zeros stay zero even where the dense operand is NaN or Inf.
"""

import numpy as np

from ._native import _csr_matrix, _row_sparse_array, invoke

__all__ = ["csr_matrix", "row_sparse_array", "from_scipy", "dot"]


def _idx(x):
    """Index arrays as given; an empty list is an empty int64 array (not float64)."""
    a = np.asarray(x)
    return a.astype(np.int64) if a.size == 0 else x


def csr_matrix(arg, shape):
    """A CSR tensor from ``(data, indices, indptr)`` and a 2-D ``shape`` (checked)."""
    data, indices, indptr = arg
    return _csr_matrix(data, _idx(indices), _idx(indptr), tuple(shape))


def row_sparse_array(arg, shape):
    """A row-sparse tensor from ``(data, indices)``: ``data[k]`` is row ``indices[k]``."""
    data, indices = arg
    return _row_sparse_array(data, _idx(indices), tuple(shape))


def from_scipy(m):
    """A CSR tensor from any ``scipy.sparse`` matrix or array (converted to canonical CSR:
    sorted indices, duplicates summed)."""
    m = m.tocsr()
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    return _csr_matrix(m.data, m.indices, m.indptr, tuple(m.shape))


def dot(a, b, transpose_a=False):
    """``a @ b`` (or ``a.T @ b``); ``dot(csr, dense)`` is dense, with ``transpose_a`` the
    result is row_sparse."""
    return invoke("dot", a, b, transpose_a=transpose_a)
