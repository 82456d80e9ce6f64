"""The Array API's sorting, searching, set, cumulative and joining functions against NumPy 2:
every dtype, axes, empty and 0-d inputs, NaN / -0.0 / inf, non-contiguous inputs, errors."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from conftest import NUMPY_DTYPES

SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf]


def elements(dtype):
    """Few distinct values (many ties), and the float specials."""
    if dtype == "bool":
        return st.booleans()
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else -3
        return st.integers(lo, 3)
    return st.one_of(st.integers(-3, 3).map(float), st.sampled_from(SPECIAL))


@st.composite
def arrays(draw, dtypes=NUMPY_DTYPES, min_dims=0, max_dims=3):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=5))
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype)))


def tensor(a, flipped):
    """`a` as a tensor: contiguous, or a negative-stride view holding the same values."""
    if not flipped or a.ndim == 0:
        return ts.asarray(a)
    return ts.asarray(np.ascontiguousarray(a[::-1]))[::-1]


def same(got, want):
    g = np.asarray(got)
    want = np.asarray(want)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    np.testing.assert_array_equal(g, want)
    if want.dtype.kind == "f":
        # Signed zeros must match; a NaN's sign bit is unspecified (IEEE 754: x86 gives 0 * inf
        # a negative NaN, a propagated NaN keeps its own sign, so it follows evaluation order).
        real = ~np.isnan(want)
        assert (np.signbit(g)[real] == np.signbit(want)[real]).all()


def axis_of(draw, ndim):
    return draw(st.integers(-ndim, ndim - 1))


@given(arrays(min_dims=1), st.data(), st.booleans(), st.booleans())
def test_sort_and_argsort_match_numpy_stable(a, data, descending, flipped):
    axis = axis_of(data.draw, a.ndim)
    t = tensor(a, flipped)
    if descending:
        # array-api-strict's definition: flip, stable sort, flip back.
        want = np.flip(np.sort(np.flip(a, axis), axis=axis, kind="stable"), axis)
        n = a.shape[axis]
        want_i = n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    else:
        want = np.sort(a, axis=axis, kind="stable")
        want_i = np.argsort(a, axis=axis, kind="stable")
    same(ts.sort(t, axis=axis, descending=descending), want)
    same(ts.argsort(t, axis=axis, descending=descending), want_i.astype(np.int64))
    # Unstable sorts give the same values up to the order of equal elements.
    np.testing.assert_array_equal(np.asarray(ts.sort(t, axis=axis, descending=descending, stable=False)), want)


@given(
    st.sampled_from(["float32", "float64"]),
    st.integers(257, 6000),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["normal", "few", "specials"]),
    st.booleans(),
    st.integers(1, 3),
)
def test_long_float_lanes_sort_as_numpy_stable(dtype, n, seed, kind, descending, lanes):
    """Lanes above the sorting network's 256 elements (the vectorised quicksort where the CPU
    has AVX-512): values, signed zeros in input order, NaNs last (first when descending)."""
    rng = np.random.default_rng(seed)
    if kind == "normal":
        a = rng.standard_normal((lanes, n))
    elif kind == "few":
        a = rng.integers(-3, 4, (lanes, n)).astype(float)
    else:
        a = rng.choice([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.5, -2.0], (lanes, n))
        a[rng.random((lanes, n)) < 0.5] = rng.standard_normal()
    a = a.astype(dtype)
    if descending:
        want = np.flip(np.sort(np.flip(a, 1), axis=1, kind="stable"), 1)
    else:
        want = np.sort(a, axis=1, kind="stable")
    same(ts.sort(ts.asarray(a), axis=1, descending=descending), want)


@given(
    st.sampled_from(["int64", "uint64", "int32", "uint32", "int16", "uint16", "int8", "uint8"]),
    st.integers(2, 3000),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["full", "few"]),
    st.booleans(),
    st.integers(1, 3),
)
def test_integer_lanes_sort_as_numpy(dtype, n, seed, kind, descending, lanes):
    """Integer lanes of every length, over the whole range of the dtype: the sorting network
    (up to 256 elements, also below 32) and the vectorised quicksort of the keys above it."""
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    if kind == "full":
        a = rng.integers(info.min, info.max, (lanes, n), dtype=dtype, endpoint=True)
    else:
        a = rng.integers(max(info.min, -3), 4, (lanes, n)).astype(dtype)
    want = np.sort(a, axis=1)
    if descending:
        want = np.flip(want, 1)
    same(ts.sort(ts.asarray(a), axis=1, descending=descending), want)
    same(ts.argsort(ts.asarray(a), axis=1), np.argsort(a, axis=1, kind="stable"))


@given(arrays(), st.data(), st.booleans(), st.booleans())
def test_argmax_argmin_match_numpy(a, data, keepdims, flipped):
    axis = data.draw(st.none() | st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1)) if a.ndim else None
    t = tensor(a, flipped)
    empty = a.size == 0 if axis is None else a.shape[axis] == 0
    for f, g in [(ts.argmax, np.argmax), (ts.argmin, np.argmin)]:
        if empty:
            with pytest.raises(ValueError):
                f(t, axis=axis, keepdims=keepdims)
            continue
        same(f(t, axis=axis, keepdims=keepdims), np.asarray(g(a, axis=axis, keepdims=keepdims)).astype(np.int64))


@given(arrays(min_dims=1), st.data(), st.booleans(), st.booleans())
def test_cumulative_sum_and_prod_match_numpy(a, data, include_initial, flipped):
    axis = axis_of(data.draw, a.ndim)
    t = tensor(a, flipped)
    # bool and signed ints accumulate in int64, unsigned ints in uint64 (NumPy, the standard).
    dt = {"b": np.int64, "i": np.int64, "u": np.uint64}.get(a.dtype.kind, a.dtype)
    for f, g, ident in [(ts.cumulative_sum, np.cumsum, 0), (ts.cumulative_prod, np.cumprod, 1)]:
        want = g(a, axis=axis, dtype=dt)
        if include_initial:
            shape = list(a.shape)
            shape[axis] = 1
            want = np.concatenate([np.full(shape, ident, dtype=dt), want], axis=axis)
        got = f(t, axis=axis, include_initial=include_initial)
        if a.dtype == np.float16:
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-2)
        else:
            same(got, want)


def test_cumulative_rules():
    same(ts.cumulative_sum(ts.asarray([1, 2, 3], dtype=ts.int8), dtype=ts.float32), np.array([1, 3, 6], np.float32))
    with pytest.raises(ValueError):
        ts.cumulative_sum(ts.zeros((2, 2)))
    with pytest.raises(ValueError):
        ts.cumulative_prod(ts.asarray(3.0))
    with pytest.raises(np.exceptions.AxisError):
        ts.cumulative_sum(ts.zeros((2, 2)), axis=2)


def np_unique(a):
    """NumPy's unique with every NaN distinct (the standard's rule)."""
    v, i, inv, c = np.unique(a.ravel(), return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return v, i.astype(np.int64), inv.reshape(a.shape).astype(np.int64), c.astype(np.int64)


@given(arrays(max_dims=3), st.booleans())
def test_unique_functions_match_numpy(a, flipped):
    t = tensor(a, flipped)
    v, i, inv, c = np_unique(a)
    r = ts.unique_all(t)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    np.testing.assert_array_equal(np.asarray(r.values), v)
    assert np.asarray(r.values).dtype == a.dtype
    same(r.indices, i)
    same(r.inverse_indices, inv)
    same(r.counts, c)
    np.testing.assert_array_equal(np.asarray(ts.unique_values(t)), v)
    rc = ts.unique_counts(t)
    same(rc.counts, c)
    ri = ts.unique_inverse(t)
    same(ri.inverse_indices, inv)


@given(st.data())
def test_where_matches_numpy(data):
    dc, d1, d2 = (data.draw(st.sampled_from(NUMPY_DTYPES)) for _ in range(3))
    assume({d1, d2} != {"uint8", "int8"})
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4)).input_shapes
    c, x1, x2 = (data.draw(hnp.arrays(d, s, elements=elements(d))) for d, s in zip((dc, d1, d2), shapes))
    flipped = data.draw(st.booleans())
    got = ts.where(tensor(c, flipped), tensor(x1, flipped), tensor(x2, False))
    same(got, np.where(c, x1, x2))


@given(st.data())
def test_where_of_one_flat_run_matches_numpy(data):
    """The one-pass path of where: operands of one shape walked in one order (contiguous, or
    all transposed alike) or single elements, including operands that share storage."""
    dtype = data.draw(st.sampled_from(["bool", "int8", "int64", "float32", "float64"]))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    x = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    y = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    c = data.draw(hnp.arrays("bool", shape))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    tc, tx, ty = (ts.permute_dims(ts.asarray(np.transpose(v, np.argsort(perm)).copy()), perm)
                  for v in (c, x, y))
    one = np.array(x.flat[0] if x.size else 0, dtype)
    for got, want in (
        (ts.where(tc, tx, ty), np.where(c, x, y)),
        (ts.where(tc, tx, ts.asarray(one)), np.where(c, x, one)),
        (ts.where(tc, ts.asarray(one), ty), np.where(c, one, y)),
        (ts.where(tc, tx, tx), np.where(c, x, x)),
        (ts.where(ts.asarray(np.array(True)), tx, ty), np.where(True, x, y)),
        (ts.where(tc, tc, ts.asarray(np.array(False))), np.where(c, c, False)),
    ):
        same(got, want)


def test_where_scalars_take_the_tensor_dtype():
    x = ts.asarray(np.array([1.0, 2.0], np.float32))
    c = ts.asarray([True, False])
    same(ts.where(c, x, 0.5), np.array([1.0, 0.5], np.float32))
    same(ts.where(c, 7, x), np.array([7.0, 2.0], np.float32))
    with pytest.raises(ValueError):
        ts.where(ts.asarray([True, False, True]), x, x)


@given(st.data())
def test_concat_and_stack_match_numpy(data):
    n = data.draw(st.integers(1, 4))
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    axis = axis_of(data.draw, len(base))
    arrs = []
    for _ in range(n):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        d = data.draw(st.sampled_from(["int32", "int64", "float32", "float64"]))
        arrs.append(data.draw(hnp.arrays(d, tuple(shape), elements=elements(d))))
    ts_arrs = [tensor(a, data.draw(st.booleans())) for a in arrs]
    same(ts.concat(ts_arrs, axis=axis), np.concatenate(arrs, axis=axis))
    same(ts.concat(ts_arrs, axis=None), np.concatenate([a.ravel() for a in arrs]))
    same_shape = [np.resize(a, base) if a.size else np.zeros(base, a.dtype) for a in arrs]
    sax = data.draw(st.integers(-len(base) - 1, len(base)))
    same(ts.stack([ts.asarray(a) for a in same_shape], axis=sax), np.stack(same_shape, axis=sax))


def test_join_errors():
    a = ts.zeros((2, 3))
    with pytest.raises(ValueError):
        ts.concat([a, ts.zeros((2, 4))], axis=0)
    with pytest.raises(ValueError):
        ts.concat([])
    with pytest.raises(TypeError):
        ts.concat(a)
    with pytest.raises(ValueError):
        ts.stack([a, ts.zeros((3, 2))])
    with pytest.raises(np.exceptions.AxisError):
        ts.stack([a], axis=3)


def test_sort_errors_and_bad_arguments():
    with pytest.raises(np.exceptions.AxisError):
        ts.sort(ts.asarray(1.0))
    with pytest.raises(TypeError):
        ts.sort(ts.zeros(3), axis=0.5)
    with pytest.raises(TypeError):
        ts.argmax(ts.zeros(3), axis=True)


NATIVE_AXIS_FUNCTIONS = [
    ("sort", lambda xp, a, **kw: xp.sort(a, **kw)),
    ("argsort", lambda xp, a, **kw: xp.argsort(a, **kw)),
    ("argmax", lambda xp, a, **kw: xp.argmax(a, **kw)),
    ("argmin", lambda xp, a, **kw: xp.argmin(a, **kw)),
    ("cumulative_sum", lambda xp, a, **kw: xp.cumulative_sum(a, **kw)),
    ("cumulative_prod", lambda xp, a, **kw: xp.cumulative_prod(a, **kw)),
]


@pytest.mark.parametrize("name,call", NATIVE_AXIS_FUNCTIONS, ids=[n for n, _ in NATIVE_AXIS_FUNCTIONS])
def test_functions_bound_in_rust_take_axes_as_numpy_does(name, call):
    """The functions bound in Rust with the standard's signatures: an axis is an int or
    anything with ``__index__`` (NumPy integers), never a bool or a float; array-likes are
    converted; the result equals NumPy's."""
    a = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]])
    for axis in (0, 1, -1, np.int64(1), np.int8(-2)):
        same(call(ts, ts.asarray(a), axis=axis), call(np, a, axis=int(axis)))
        same(call(ts, a.tolist(), axis=axis), call(np, a, axis=int(axis)))
    for bad in (True, 1.0, "0", [0]):
        with pytest.raises(TypeError):
            call(ts, ts.asarray(a), axis=bad)
    with pytest.raises(np.exceptions.AxisError):
        call(ts, ts.asarray(a), axis=2)
    with pytest.raises(TypeError):
        call(ts, ts.asarray(a), 0)  # axis is keyword-only


def test_flags_of_functions_bound_in_rust_are_read_by_truth():
    a = np.array([[3, 1, 2], [1, 3, 2]], np.int32)
    t = ts.asarray(a)
    same(ts.sort(t, descending=1), -np.sort(-a))
    same(ts.sort(t, descending=0, stable=False), np.sort(a))
    same(ts.argsort(t, descending=True), np.argsort(-a, stable=True))
    same(ts.argmax(t, axis=1, keepdims=1), np.argmax(a, axis=1, keepdims=True))
    same(ts.cumulative_sum(t, axis=0, include_initial=True),
         np.cumulative_sum(a, axis=0, include_initial=True))
    same(ts.cumulative_prod(t, axis=1, dtype=ts.float64), np.cumulative_prod(a, axis=1, dtype=np.float64))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("scalar", [True, 0, -3, 2.5, 1j])
def test_where_python_scalars_follow_the_weak_rule(dtype, scalar):
    """A Python scalar next to an array takes the array's dtype when its kind fits (NumPy 2's
    weak promotion, which the standard follows), whichever side it is on; both scalars take
    their default dtypes."""
    if np.dtype(dtype).kind == "u" and scalar == -3:
        return  # NumPy raises OverflowError; tested below
    x = np.array([1, 0, 1]).astype(dtype)
    c = np.array([True, False, True])
    for got, want in (
        (ts.where(ts.asarray(c), ts.asarray(x), scalar), np.where(c, x, scalar)),
        (ts.where(ts.asarray(c), scalar, ts.asarray(x)), np.where(c, scalar, x)),
    ):
        assert np.dtype(str(got.dtype)) == want.dtype, (dtype, scalar, got.dtype, want.dtype)
        np.testing.assert_array_equal(np.asarray(got), want)
    same(ts.where(ts.asarray(c), scalar, 7), np.where(c, scalar, 7))
    with pytest.raises(TypeError):
        ts.where(ts.asarray(c), ts.asarray(x), object())


def test_where_int_scalar_out_of_range_is_an_error():
    with pytest.raises((OverflowError, ValueError)):
        ts.where(ts.asarray([True]), ts.asarray(np.array([1], np.uint8)), -3)


def test_astype_bound_in_rust():
    x = ts.asarray([1.5, -2.5])
    assert ts.astype(x, ts.float64, copy=False) is x
    y = ts.astype(x, ts.float64)
    assert y is not x and not np.shares_memory(np.asarray(y), np.asarray(x))
    same(ts.astype([1, 2], ts.float32), np.array([1, 2], np.float32))
    t = ts.permute_dims(ts.asarray(np.arange(6.0).reshape(2, 3)), (1, 0))
    same(ts.astype(t, ts.int32), np.arange(6.0).reshape(2, 3).T.astype(np.int32))
    for bad in (1, 2.5, True, 1j):
        with pytest.raises(TypeError):
            ts.astype(bad, ts.float64)
    with pytest.raises(TypeError):
        ts.astype(ts.asarray([1j]), ts.float64)
    with pytest.raises(TypeError):
        ts.astype(x, ts.float64, False)  # copy is keyword-only


def test_gradients_flow_through_sort_where_cumsum_concat():
    x = ts.asarray([3.0, 1.0, 2.0]).requires_grad_(True)
    y = ts.sort(x)
    (y * ts.asarray([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [100.0, 1.0, 10.0])
    x = ts.asarray([1.0, 2.0, 3.0]).requires_grad_(True)
    ts.cumulative_sum(ts.concat([x, x], axis=0)).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [6.0 + 3.0, 5.0 + 2.0, 4.0 + 1.0])
