"""Shared Hypothesis settings and strategies for the differential tests against NumPy."""

import os

# SciPy's array API support must be on before SciPy is first imported, for scikit-learn's
# array_api_dispatch (test_clients.py); it changes nothing for NumPy inputs.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

settings.register_profile("tessera", max_examples=150, deadline=None)
settings.load_profile("tessera")

# dtypes where Tessera and NumPy agree exactly on values and promotion.
NUMPY_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=5):
    """Array shapes (tuples) for the tests."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def arange_array(shape, dtype="int64"):
    """Distinct values (so views are told apart by value) in `shape`."""
    n = int(np.prod(shape)) if shape else 1
    return np.arange(n).astype(dtype).reshape(shape)


@st.composite
def basic_keys(draw, shape):
    """A NumPy basic-indexing key valid for `shape`: ints, slices (any step), None, Ellipsis."""
    dims = list(shape)

    def item(d):
        out = []
        if draw(st.integers(0, 5)) == 0:
            out.append(None)
        if d > 0 and draw(st.booleans()):
            out.append(draw(st.integers(-d, d - 1)))
        else:
            bound = st.none() | st.integers(-d - 3, d + 3)
            step = draw(st.none() | st.integers(-4, 4).filter(lambda s: s != 0))
            out.append(slice(draw(bound), draw(bound), step))
        return out

    use_ellipsis = draw(st.booleans())
    n_front = draw(st.integers(0, len(dims)))
    n_back = draw(st.integers(0, len(dims) - n_front)) if use_ellipsis else 0
    items = []
    for d in dims[:n_front]:
        items += item(d)
    if use_ellipsis:
        items.append(Ellipsis)
        for d in dims[len(dims) - n_back:]:
            items += item(d)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def layouts(draw, shape):
    """An arange array of `shape` and the same values as a Tessera tensor: contiguous, or
    seen through a non-contiguous view (transposed storage, or reversed along dim 0)."""
    import tessera as ts

    a = arange_array(shape, "float64")
    kind = draw(st.integers(0, 2))
    if kind == 0 or a.ndim == 0:
        return a, ts.asarray(a)
    if kind == 1:  # transposed storage
        base = np.ascontiguousarray(a.T)
        return a, ts.asarray(base).T
    base = np.ascontiguousarray(a[::-1])  # reversed along dim 0
    return a, ts.asarray(base)[::-1]


def getitem_like_numpy(a, t, key, np_key=None):
    """`(a[np_key], t[key])` (`np_key` defaults to `key`), or None when NumPy raises
    IndexError, after checking that Tessera raises it too."""
    try:
        expected = a[key if np_key is None else np_key]
    except IndexError:
        with pytest.raises(IndexError):
            t[key]
        return None
    return expected, t[key]
