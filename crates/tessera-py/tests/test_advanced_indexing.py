"""Integer-array and boolean-mask indexing, take and take_along_axis, differential against
NumPy (docs/design.md X1-X5): random shapes and keys mixing ints, slices, None,
Ellipsis, integer arrays (negative, broadcastable) and masks, on non-contiguous inputs."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts
from conftest import arange_array, getitem_like_numpy, layouts, shapes

INDEX_DTYPES = ["int8", "uint8", "int32", "int64", "int16", "uint16", "uint32"]


@st.composite
def int_array(draw, d, shape):
    """An integer index array of `shape` valid for a dim of size `d` (negatives included)."""
    n = int(np.prod(shape)) if shape else 1
    vals = draw(st.lists(st.integers(-d, d - 1), min_size=n, max_size=n))
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    if dtype.startswith("u") or dtype == "uint8":
        vals = [v % d for v in vals]
    if dtype == "int8" and d > 127:
        dtype = "int64"
    return np.array(vals, dtype=dtype).reshape(shape)


@st.composite
def adv_keys(draw, shape):
    """A key for `shape` with at least one array or mask (or 0-d bool)."""
    dims = list(shape)
    # One broadcast shape for the integer arrays; each array takes a suffix of it with some
    # dims set to 1.
    bshape = draw(shapes(max_dims=2, max_side=3))
    key = []
    i = 0
    used_ellipsis = False
    while i < len(dims):
        if draw(st.integers(0, 6)) == 0:
            key.append(None)
        if not used_ellipsis and draw(st.integers(0, 8)) == 0:
            used_ellipsis = True
            skip = draw(st.integers(0, len(dims) - i))
            key.append(Ellipsis)
            i += skip
            continue
        d = dims[i]
        kind = draw(st.integers(0, 5))
        if kind == 0 and d > 0:
            key.append(draw(st.integers(-d, d - 1)))
        elif kind == 1:
            bound = st.none() | st.integers(-d - 2, d + 2)
            step = draw(st.none() | st.integers(-3, 3).filter(lambda s: s != 0))
            key.append(slice(draw(bound), draw(bound), step))
        elif kind in (2, 3) and d > 0:
            k = draw(st.integers(0, len(bshape)))
            sub = tuple(draw(st.sampled_from([1, s])) for s in bshape[len(bshape) - k:])
            arr = draw(int_array(d, sub))
            form = draw(st.integers(0, 2))
            key.append(ts.asarray(arr.astype("int64")) if form == 1
                       else arr.tolist() if form == 2 and arr.ndim > 0 else arr)
        elif kind == 4:
            k = draw(st.integers(1, min(2, len(dims) - i)))
            mshape = tuple(dims[i:i + k])
            n = int(np.prod(mshape))
            m = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                         dtype=bool).reshape(mshape)
            key.append(ts.asarray(m) if draw(st.booleans()) else m)
            i += k
            continue
        else:
            key.append(slice(None))
        i += 1
    if draw(st.integers(0, 6)) == 0:
        key.insert(draw(st.integers(0, len(key))), draw(st.booleans()))
    if not any(isinstance(k, (np.ndarray, list, ts.Tensor, bool)) for k in key):
        key.append(np.array(draw(st.booleans())) if draw(st.booleans()) else True)
    return tuple(key)


def numpy_key(key):
    return tuple(np.asarray(k) if isinstance(k, ts.Tensor) else
                 np.array(k, dtype=np.intp) if isinstance(k, list) and len(k) == 0 else k
                 for k in key)


@st.composite
def cases(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=5))
    a, t = draw(layouts(shape))
    return a, t, draw(adv_keys(shape))


@given(cases())
def test_getitem_matches_numpy(case):
    a, t, key = case
    pair = getitem_like_numpy(a, t, key, numpy_key(key))
    if pair is None:
        return
    expected, got = pair
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(got), expected)
    # Advanced indexing copies (a 0-d integer array alone is an integer: basic, a view).
    advanced = any(isinstance(k, (list, bool, ts.Tensor)) or
                   (isinstance(k, np.ndarray) and (k.ndim > 0 or k.dtype == bool)) for k in key)
    if got.size > 0 and advanced:
        assert not got.shares_storage(t)


@given(cases(), st.data())
def test_setitem_matches_numpy(case, data):
    a, t, key = case
    nkey = numpy_key(key)
    try:
        shape = a[nkey].shape
    except IndexError:
        with pytest.raises(IndexError):
            t[key] = 1.0
        return
    # Values broadcast: a suffix of the indexed shape with some dims set to 1.
    k = data.draw(st.integers(0, len(shape)))
    vshape = tuple(data.draw(st.sampled_from([1, s])) for s in shape[len(shape) - k:])
    values = -1.0 - np.arange(int(np.prod(vshape))).reshape(vshape)
    a = a.copy()
    a[nkey] = values
    t[key] = values
    np.testing.assert_array_equal(np.asarray(t), a)


@given(cases())
def test_setitem_scalar(case):
    a, t, key = case
    nkey = numpy_key(key)
    try:
        a[nkey]
    except IndexError:
        return
    a = a.copy()
    a[nkey] = 7
    t[key] = 7
    np.testing.assert_array_equal(np.asarray(t), a)


def test_documented_examples():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = ts.asarray(a)
    # adjacent advanced indices replace their dims in place; separated ones go first
    for key in [(slice(None), [0, 2], [1, 3]), (0, slice(None), [0, 1]), ([1], ..., [2]),
                (slice(None), 1, [0, 2]), (None, [0, 1], None, 2), (True,), (False,),
                (..., np.array(True)), (a > 10,), (a[:, :, 0] > 5,), (0, ..., 1), (..., [0], 0), (slice(None), a[0, :, 0] > 3),
                ([[0], [1]], [[0, 1, 2]]), ([], ), (np.array([], dtype=np.int64), 0)]:
        np.testing.assert_array_equal(np.asarray(t[key]), a[numpy_key(key)], err_msg=str(key))


def test_repeated_indices_last_write_wins():
    t = ts.zeros(4)
    t[[1, 1, 3, 1]] = ts.asarray([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(t), [0, 4, 0, 3])


def test_mask_getitem_large_parallel_blocks():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(300_001).astype(np.float32)
    m = rng.random(a.shape) < 0.5
    np.testing.assert_array_equal(np.asarray(ts.asarray(a)[m]), a[m])
    np.testing.assert_array_equal(np.asarray(ts.asarray(a)[ts.asarray(m)]), a[m])
    m[:] = False
    assert ts.asarray(a)[m].shape == (0,)
    b = rng.standard_normal((70_000, 3))
    mb = rng.random(70_000) < 0.3
    np.testing.assert_array_equal(np.asarray(ts.asarray(b)[mb]), b[mb])


def test_row_gather_large():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5000, 64)).astype(np.float32)
    idx = rng.integers(-5000, 5000, 20_000)
    np.testing.assert_array_equal(np.asarray(ts.asarray(a)[idx]), a[idx])
    np.testing.assert_array_equal(np.asarray(ts.take(ts.asarray(a), ts.asarray(idx), axis=0)),
                                  np.take(a, idx, axis=0))


@given(shapes(min_dims=1, max_dims=3, max_side=5), st.data())
def test_take_matches_numpy(shape, data):
    a, t = data.draw(layouts(shape))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    d = a.shape[axis]
    ishape = data.draw(shapes(max_dims=2, max_side=3))
    if d == 0:
        ishape = (0,)
    idx = data.draw(int_array(max(d, 1), ishape))
    got = ts.take(t, ts.asarray(idx.astype("int64")), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), np.take(a, idx, axis=axis))


@given(shapes(min_dims=1, max_dims=3, min_side=1, max_side=5), st.data())
def test_take_along_axis_matches_numpy(shape, data):
    a, t = data.draw(layouts(shape))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    ishape = list(shape)
    ishape[axis] = data.draw(st.integers(0, 4))
    for j in range(len(ishape)):
        if j != axis % len(ishape) and data.draw(st.booleans()):
            ishape[j] = 1
    idx = data.draw(int_array(shape[axis], tuple(ishape)))
    got = ts.take_along_axis(t, ts.asarray(idx.astype("int64")), axis=axis)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(a, idx, axis=axis))


def test_take_along_axis_sorts_like_argsort():
    a = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    i = np.argsort(a, axis=1)
    np.testing.assert_array_equal(np.asarray(ts.take_along_axis(ts.asarray(a), ts.asarray(i), axis=1)),
                                  np.sort(a, axis=1))


@pytest.mark.parametrize("expr, exc", [
    ("ts.take(ts.zeros(3), ts.asarray([3]))", IndexError),
    ("ts.take(ts.zeros(3), ts.asarray([-4]))", IndexError),
    ("ts.take(ts.zeros(3), ts.asarray([0.0]))", TypeError),
    ("ts.take(ts.zeros((2, 2)), ts.asarray([0]))", ValueError),
    ("ts.take(ts.zeros(3), ts.asarray([0]), axis=1)", IndexError),
    ("ts.take_along_axis(ts.zeros((2, 2)), ts.asarray([0]), axis=0)", ValueError),
    ("ts.take_along_axis(ts.zeros((2, 2)), ts.asarray([[2]]), axis=0)", IndexError),
    ("ts.take_along_axis(ts.zeros((2, 2)), ts.asarray([[0.5]]), axis=0)", TypeError),
    ("ts.zeros((2, 3))[[0, 1], [0, 1, 2]]", IndexError),
    ("ts.zeros((2, 3))[np.array([True, False, True])]", IndexError),
    ("ts.zeros((2, 3))[:, [3]]", IndexError),
    ("ts.zeros((2, 3))[[0], [0], [0]]", IndexError),
    ("ts.zeros((2, 3))[np.array([1.0])]", IndexError),
    ("ts.zeros((2, 3))[['a']]", IndexError),
])
def test_errors(expr, exc):
    with pytest.raises(exc):
        eval(expr)


def test_error_names_axis_and_size():
    with pytest.raises(IndexError, match="axis 1 with size 3"):
        ts.zeros((2, 3))[:, [5]]


def test_setitem_under_autograd_follows_inplace_rules():
    x = ts.zeros(3).requires_grad_()
    with pytest.raises(RuntimeError):
        x[[0, 1]] = 1.0


def test_gradient_of_gather_accumulates_repeated_indices():
    x = ts.asarray(np.arange(6.0).reshape(2, 3)).requires_grad_()
    y = x[:, [0, 0, 2]]
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [[2, 0, 1], [2, 0, 1]])
    x2 = ts.asarray(np.arange(6.0).reshape(2, 3)).requires_grad_()
    x2[x2 > 2.5].sum().backward()
    np.testing.assert_array_equal(np.asarray(x2.grad), [[0, 0, 0], [1, 1, 1]])
