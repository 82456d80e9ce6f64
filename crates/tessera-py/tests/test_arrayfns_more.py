"""The Array API's statistical, manipulation, searching and creation functions against NumPy 2
(the sorting/set/cumulative ones are in test_arrayfns.py)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from test_arrayfns import arrays, elements, same, tensor

FLOATS = ["float32", "float64"]


def axes(draw, ndim):
    """None, an int or a tuple of distinct axes of an ``ndim``-d array."""
    if ndim == 0:
        return None
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))


@given(arrays(), st.data(), st.booleans(), st.booleans())
def test_prod_all_any_count_nonzero_match_numpy(a, data, keepdims, flipped):
    ax = axes(data.draw, a.ndim)
    t = tensor(a, flipped)
    # bool and signed ints accumulate in int64, unsigned ints in uint64 (NumPy, the standard).
    dt = {"b": np.int64, "i": np.int64, "u": np.uint64}.get(a.dtype.kind, a.dtype)
    want = np.prod(a, axis=ax, keepdims=keepdims, dtype=dt)
    got = ts.prod(t, axis=ax, keepdims=keepdims)
    if a.dtype == np.float16:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-2)
    else:
        same(got, np.asarray(want))
    same(ts.all(t, axis=ax, keepdims=keepdims), np.asarray(np.all(a, axis=ax, keepdims=keepdims)))
    same(ts.any(t, axis=ax, keepdims=keepdims), np.asarray(np.any(a, axis=ax, keepdims=keepdims)))
    want_c = np.asarray(np.count_nonzero(a, axis=ax, keepdims=keepdims)).astype(np.int64)
    same(ts.count_nonzero(t, axis=ax, keepdims=keepdims), want_c)


@given(arrays(dtypes=FLOATS), st.data(), st.booleans())
def test_var_std_match_numpy(a, data, keepdims):
    ax = axes(data.draw, a.ndim)
    corr = data.draw(st.sampled_from([0.0, 1.0]))
    with np.errstate(all="ignore"):
        wv = np.var(a, axis=ax, ddof=corr, keepdims=keepdims)
        ws = np.std(a, axis=ax, ddof=corr, keepdims=keepdims)
    for got, want in [(ts.var(ts.asarray(a), axis=ax, correction=corr, keepdims=keepdims), wv),
                      (ts.std(ts.asarray(a), axis=ax, correction=corr, keepdims=keepdims), ws)]:
        g = np.asarray(got)
        assert g.shape == np.shape(want) and g.dtype == a.dtype
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5, equal_nan=True)


@given(arrays(min_dims=1), st.data())
def test_manipulation_matches_numpy(a, data):
    nd = a.ndim
    t = tensor(a, data.draw(st.booleans()))
    src = data.draw(st.integers(-nd, nd - 1))
    dst = data.draw(st.integers(-nd, nd - 1))
    same(ts.moveaxis(t, src, dst), np.moveaxis(a, src, dst))
    ax = data.draw(st.integers(-nd, nd - 1))
    parts = ts.unstack(t, axis=ax)
    want = [np.take(a, i, axis=ax) for i in range(a.shape[ax])]
    assert len(parts) == len(want)
    for p, w in zip(parts, want):
        same(p, w)
    shift = data.draw(st.integers(-7, 7))
    same(ts.roll(t, shift), np.roll(a, shift))
    same(ts.roll(t, shift, axis=ax), np.roll(a, shift, axis=ax))
    if a.dtype != np.bool_ or True:
        n = data.draw(st.integers(0, 3))
        with np.errstate(all="ignore"):
            want = np.diff(a, n=n, axis=ax)
        same(ts.diff(t, axis=ax, n=n), want)
    if nd >= 2:
        k = data.draw(st.integers(-4, 4))
        same(ts.tril(t, k=k), np.tril(a, k))
        same(ts.triu(t, k=k), np.triu(a, k))


@given(arrays(min_dims=1, max_dims=2), st.data())
def test_repeat_matches_numpy(a, data):
    ax = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    n = a.size if ax is None else a.shape[ax]
    reps = data.draw(st.integers(0, 3) | st.lists(st.integers(0, 3), min_size=n, max_size=n))
    r = reps if isinstance(reps, int) else np.array(reps, dtype=np.int64)
    same(ts.repeat(tensor(a, False), r if isinstance(r, int) else ts.asarray(r), axis=ax), np.repeat(a, r, axis=ax))


@given(arrays(min_dims=1))
def test_nonzero_matches_numpy(a):
    got = ts.nonzero(ts.asarray(a))
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w.astype(np.int64))


@given(st.data())
def test_searchsorted_matches_numpy(data):
    d = data.draw(st.sampled_from(["int32", "int64", "float32", "float64"]))
    x1 = np.sort(data.draw(hnp.arrays(d, st.integers(0, 8), elements=elements(d))))
    x2 = data.draw(hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4), elements=elements(d)))
    side = data.draw(st.sampled_from(["left", "right"]))
    same(ts.searchsorted(ts.asarray(x1), ts.asarray(x2), side=side), np.searchsorted(x1, x2, side=side).astype(np.int64))
    perm = np.random.default_rng(0).permutation(len(x1))
    shuffled = x1[perm]
    sorter = np.argsort(shuffled, kind="stable")
    same(ts.searchsorted(ts.asarray(shuffled), ts.asarray(x2), side=side, sorter=ts.asarray(sorter)),
         np.searchsorted(shuffled, x2, side=side, sorter=sorter).astype(np.int64))


def test_creation_matches_numpy():
    for n, m, k in [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, 3, 0), (3, 3, 9)]:
        same(ts.eye(n, m, k=k), np.eye(n, m, k=k))
    same(ts.eye(2, dtype=ts.int32), np.eye(2, dtype=np.int32))
    for start, stop, num, endpoint in [(0, 1, 5, True), (0, 1, 5, False), (-2.5, 7, 1, True), (3, 3, 0, True), (1, -1, 7, True)]:
        np.testing.assert_allclose(np.asarray(ts.linspace(start, stop, num, endpoint=endpoint)),
                                   np.linspace(start, stop, num, endpoint=endpoint), rtol=1e-15, atol=1e-15)
    a, b = np.arange(3), np.arange(10, 12)
    for idx in ["xy", "ij"]:
        for g, w in zip(ts.meshgrid(ts.asarray(a), ts.asarray(b), indexing=idx), np.meshgrid(a, b, indexing=idx)):
            same(g, w)
    x = ts.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    same(ts.full_like(x, 7), np.full((2, 3), 7, np.float32))
    assert ts.empty_like(x, dtype=ts.int8).dtype == ts.int8
    ba = ts.broadcast_arrays(ts.asarray(a.reshape(3, 1)), ts.asarray(b))
    same(ba[0], np.broadcast_to(a.reshape(3, 1), (3, 2)))


def test_bad_arguments():
    x = ts.zeros((2, 3))
    with pytest.raises(ValueError):
        ts.tril(ts.zeros(3))
    with pytest.raises(ValueError):
        ts.meshgrid(ts.zeros(2), indexing="yx")
    with pytest.raises(ValueError):
        ts.diff(x, n=-1)
    with pytest.raises(ValueError):
        ts.repeat(x, ts.asarray([1, 2]), axis=1)
    with pytest.raises(ValueError):
        ts.repeat(x, -1)
    with pytest.raises(TypeError):
        ts.repeat(x, ts.asarray([1.0, 2.0]), axis=0)
    with pytest.raises(ValueError):
        ts.nonzero(ts.asarray(1.0))
    with pytest.raises(ValueError):
        ts.searchsorted(x, ts.zeros(2))
    with pytest.raises(ValueError):
        ts.searchsorted(ts.zeros(3), ts.zeros(2), side="middle")
    with pytest.raises(IndexError):
        ts.searchsorted(ts.zeros(2), ts.zeros(2), sorter=ts.asarray([0, 5]))
    with pytest.raises(ValueError):
        ts.eye(2, device="gpu")
    with pytest.raises(np.exceptions.AxisError):
        ts.moveaxis(x, 0, 2)
    with pytest.raises(ValueError):
        ts.roll(x, (1, 2), axis=0)
