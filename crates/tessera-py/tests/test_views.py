"""broadcast_to/expand, tile/repeat, reshape as a view, permute/flip/squeeze (V5, E1, E2)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts
from conftest import arange_array, shapes


@st.composite
def broadcast_case(draw):
    src = draw(shapes(max_dims=3, max_side=4))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    target = tuple(lead) + tuple(d if d != 1 else draw(st.integers(0, 4)) for d in src)
    return src, target


@given(broadcast_case())
def test_broadcast_to_and_expand_match_numpy(case):
    src, target = case
    a = arange_array(src)
    t = ts.asarray(a)
    expected = np.broadcast_to(a, target)
    for v in (ts.broadcast_to(t, target), t.broadcast_to(target), t.expand(*target)):
        got = np.asarray(v)
        np.testing.assert_array_equal(got, expected)
        assert v.shares_storage(t)
        big = [i for i, d in enumerate(target) if d > 1]
        assert [v.strides[i] for i in big] == [expected.strides[i] for i in big]


def test_expand_minus_one_and_errors():
    t = ts.arange(3).reshape(3, 1)
    assert t.expand(2, -1, 4).shape == (2, 3, 4)
    assert t.expand((2, -1, 4)).shape == (2, 3, 4)
    with pytest.raises(ValueError):
        t.expand(2, 4)  # a size-3 dim cannot change
    with pytest.raises(ValueError):
        t.expand(-1, 3, 4)  # -1 in a new dim
    with pytest.raises(ValueError):
        ts.broadcast_to(t, (3, 2, 5))


def torch_repeat(a, counts):
    """PyTorch `repeat` in NumPy: pad the shape with 1s, then `np.tile`."""
    a = a.reshape((1,) * (len(counts) - a.ndim) + a.shape)
    return np.tile(a, counts)


@given(shapes(max_dims=3, max_side=4), st.data())
def test_tile_and_repeat_match_numpy(shape, data):
    a = arange_array(shape, "float32")
    t = ts.asarray(a)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    got = ts.tile(t, reps)
    np.testing.assert_array_equal(np.asarray(got), np.tile(a, reps))
    assert got.is_contiguous() and not got.shares_storage(t)
    counts = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 2)))
    r = t.repeat(*counts) if counts else t.repeat(())
    np.testing.assert_array_equal(np.asarray(r), torch_repeat(a, counts))
    # E2: repeat == reshape -> expand -> reshape.
    if counts:
        lead = len(counts) - len(shape)
        padded = (1,) * lead + shape
        inter = t.reshape(*[x for d in padded for x in (1, d)])
        big = inter.expand(*[x for c, d in zip(counts, padded) for x in (c, d)])
        np.testing.assert_array_equal(
            np.asarray(big.reshape(*[c * d for c, d in zip(counts, padded)])), np.asarray(r)
        )


def test_repeat_errors():
    t = ts.arange(4).reshape(2, 2)
    with pytest.raises(ValueError):
        t.repeat(-1, 2)
    with pytest.raises(ValueError):
        t.repeat(2)  # fewer counts than dims
    with pytest.raises(ValueError):
        ts.tile(t, (-2,))
    with pytest.raises(TypeError):
        t.repeat(1.5, 2)


@st.composite
def reshape_case(draw):
    """A strided view (transpose, then slices with steps 1, 2 or -1) and a 3-d target shape."""
    shape = draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    perm = tuple(draw(st.permutations(range(len(shape)))))
    steps = tuple(draw(st.sampled_from([1, 2, -1])) for _ in shape)
    a = arange_array(shape).transpose(perm)[tuple(slice(None, None, s) for s in steps)]
    n = a.size
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    first = draw(st.sampled_from(divisors))
    second = draw(st.sampled_from([d for d in divisors if (n // first) % d == 0]))
    return shape, perm, steps, (first, second, n // first // second)


@given(reshape_case())
def test_reshape_view_matches_numpy_copy_false(case):
    shape, perm, steps, new = case
    key = tuple(slice(None, None, s) for s in steps)
    root = arange_array(shape)
    a = root.transpose(perm)[key]
    troot = ts.asarray(root)
    tv = troot.permute(*perm)[key]
    np.testing.assert_array_equal(np.asarray(tv), a)
    try:
        expected = np.reshape(a, new, copy=False)
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ValueError):
            tv.reshape(new, copy=False)
        got = tv.reshape(new)  # a copy
        assert not got.shares_storage(troot)
        np.testing.assert_array_equal(np.asarray(got), np.reshape(a, new))
    else:
        got = tv.reshape(new, copy=False)
        assert got.shares_storage(troot)
        np.testing.assert_array_equal(np.asarray(got), expected)
        assert tv.reshape(*new).shares_storage(troot)
        assert np.shares_memory(np.asarray(got), np.asarray(troot))


def test_reshape_minus_one_and_errors():
    t = ts.arange(12)
    assert t.reshape(3, -1).shape == (3, 4)
    assert t.reshape((2, -1, 3)).shape == (2, 2, 3)
    with pytest.raises(ValueError):
        t.reshape(5, -1)
    with pytest.raises(ValueError):
        t.T.reshape(-1, -1)


@given(shapes(max_dims=4, max_side=4), st.data())
def test_permute_transpose_flip_squeeze_match_numpy(shape, data):
    a = arange_array(shape)
    t = ts.asarray(a)
    perm = data.draw(st.permutations(range(a.ndim)))
    np.testing.assert_array_equal(np.asarray(t.permute(*perm)), a.transpose(perm))
    np.testing.assert_array_equal(np.asarray(ts.permute_dims(t, perm)), np.permute_dims(a, perm))
    np.testing.assert_array_equal(np.asarray(t.T), a.T)
    np.testing.assert_array_equal(np.asarray(ts.transpose(t)), np.transpose(a))
    np.testing.assert_array_equal(np.asarray(t.flip()), np.flip(a))
    if a.ndim:
        ax = data.draw(st.integers(-a.ndim, a.ndim - 1))
        np.testing.assert_array_equal(np.asarray(t.flip(ax)), np.flip(a, ax))
    np.testing.assert_array_equal(np.asarray(t.squeeze()), np.squeeze(a))
    ax = data.draw(st.integers(-a.ndim - 1, a.ndim))
    np.testing.assert_array_equal(np.asarray(t.unsqueeze(ax)), np.expand_dims(a, ax))
    for v in (t.permute(*perm), t.T, t.flip(), t.squeeze()):
        assert v.shares_storage(t)



NAMESPACE_VIEWS = [
    # (name, NumPy's function, a drawer of arguments after x for an array of rank r)
    ("permute_dims", np.permute_dims, lambda d, r: (tuple(d.draw(st.permutations(range(r)))),)),
    ("transpose", np.transpose, lambda d, r: ()),
    ("reshape", np.reshape, lambda d, r: ((-1,),)),
    ("expand_dims", np.expand_dims, lambda d, r: (d.draw(st.integers(-r - 1, r)),)),
    ("squeeze", np.squeeze, lambda d, r: ()),
    ("flip", np.flip, lambda d, r: ()),
    ("broadcast_to", np.broadcast_to, lambda d, r: ()),  # the target shape is (2,) + shape
]


@given(shapes(max_dims=4, max_side=3), st.sampled_from(NAMESPACE_VIEWS), st.data())
def test_namespace_views_take_what_asarray_takes(shape, case, data):
    """The native namespace view functions give NumPy's result for a Tessera tensor (a view
    of it), a NumPy array and a nested list (both converted as asarray converts them)."""
    name, np_fn, args_of = case
    a = arange_array(shape)
    args = args_of(data, a.ndim)
    if name == "broadcast_to":
        args = ((2,) + a.shape,)
    want = np_fn(a, *args)
    t = ts.asarray(a)
    # A nested list of an empty array loses its shape ([] is (0,)), in NumPy too.
    inputs = (t, a, a.tolist()) if a.size else (t, a)
    for x in inputs:
        got = getattr(ts, name)(x, *args)
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got.dtype == t.dtype
    if name != "reshape":
        assert getattr(ts, name)(t, *args).shares_storage(t)


def test_namespace_view_errors_match_numpy():
    t = ts.asarray(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        ts.permute_dims(t, (0, 0))
    with pytest.raises(IndexError):  # AxisError, as NumPy
        ts.permute_dims(t, (0, 2))
    with pytest.raises(TypeError):
        ts.permute_dims(t, (0.0, 1))
    with pytest.raises(ValueError):
        ts.reshape(t, (4, -1))
    with pytest.raises(ValueError):
        ts.reshape(t.T, (-1,), copy=False)
    with pytest.raises(ValueError):
        ts.squeeze(t, axis=0)
    with pytest.raises(IndexError):
        ts.expand_dims(t, 3)
    with pytest.raises(TypeError):
        ts.expand_dims(t, 1.0)
    with pytest.raises(ValueError):
        ts.broadcast_to(t, (3, 3))
    with pytest.raises(ValueError):
        ts.broadcast_to(t, (-2, 3))
    with pytest.raises(TypeError):
        ts.flip(t, 0)  # axis is keyword-only, as the standard writes it

def test_contiguous_and_copy():
    t = ts.arange(6).reshape(2, 3)
    assert t.is_contiguous() and t.contiguous().shares_storage(t)
    c = t.T.contiguous()
    assert c.is_contiguous() and not c.shares_storage(t)
    np.testing.assert_array_equal(np.asarray(c), np.arange(6).reshape(2, 3).T)
    assert not t.copy().shares_storage(t)
