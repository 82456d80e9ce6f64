"""Arithmetic, promotion, comparisons, in-place updates and reductions against NumPy 2."""

import operator

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from conftest import NUMPY_DTYPES

OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
}
CMPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
DTYPE_PAIRS = [(a, b) for a in NUMPY_DTYPES for b in NUMPY_DTYPES if {a, b} != {"uint8", "int8"}]


def elements(dtype):
    if dtype == "bool":
        return st.booleans()
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, -100), min(info.max, 100))
    return st.floats(-100, 100, width=np.dtype(dtype).itemsize * 8)


@st.composite
def operands(draw):
    da, db = draw(st.sampled_from(DTYPE_PAIRS))
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4)).input_shapes
    a = draw(hnp.arrays(da, sa, elements=elements(da)))
    b = draw(hnp.arrays(db, sb, elements=elements(db)))
    return a, b


def check_same(got, expected, exact=True):
    g = np.asarray(got)
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    assert g.shape == expected.shape
    if exact or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(g, expected)
    else:
        tol = 1e-2 if expected.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(g, expected, rtol=tol, atol=tol)


@given(operands(), st.sampled_from(sorted(OPS)))
def test_binary_ops_match_numpy_values_and_dtypes(ab, name):
    a, b = ab
    op = OPS[name]
    with np.errstate(all="ignore"):
        try:
            expected = op(a, b)
        except TypeError:  # bool - bool: NumPy raises TypeError, so do we
            with pytest.raises(TypeError):
                op(ts.asarray(a), ts.asarray(b))
            return
    check_same(op(ts.asarray(a), ts.asarray(b)), expected, exact=name != "truediv")
    # mixed: ndarray on one side defers to the tensor (__array_ufunc__ = None)
    check_same(op(a, ts.asarray(b)), expected, exact=name != "truediv")


@given(operands(), st.sampled_from(CMPS))
def test_comparisons_match_numpy(ab, op):
    a, b = ab
    check_same(op(ts.asarray(a), ts.asarray(b)), op(a, b))


@given(
    st.sampled_from(NUMPY_DTYPES),
    st.one_of(st.booleans(), st.integers(-50, 50), st.floats(-50, 50)),
    st.sampled_from(["add", "sub", "mul"]),
)
def test_weak_python_scalars_follow_nep50(dtype, scalar, name):
    a = np.arange(6).astype(dtype).reshape(2, 3)
    op = OPS[name]
    with np.errstate(all="ignore"):
        try:
            expected = op(a, scalar)
            rexpected = op(scalar, a)
        except (TypeError, OverflowError):
            return
    t = ts.asarray(a)
    check_same(op(t, scalar), expected, exact=False)
    check_same(op(scalar, t), rexpected, exact=False)


def test_reflected_and_unary():
    t = ts.asarray(np.array([1.0, -2.0, 3.0], np.float32))
    np.testing.assert_array_equal(np.asarray(2 - t), [1.0, 4.0, -1.0])
    np.testing.assert_array_equal(np.asarray(6 / t), [6.0, -3.0, 2.0])
    np.testing.assert_array_equal(np.asarray(-t), [-1.0, 2.0, -3.0])
    np.testing.assert_array_equal(np.asarray(abs(t)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(t**2), [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(np.asarray(2**t), [2.0, 0.25, 8.0])
    assert (t * 2).dtype == ts.float32 and (t * 2.5).dtype == ts.float32
    with pytest.raises(TypeError):
        -ts.asarray(np.array([True]))
    with pytest.raises(TypeError):
        t + "a"


def test_inplace_writes_through_a_view_into_the_base():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ts.asarray(a)
    v = t[1:, ::-2]
    before = v
    v += 100
    assert v is before  # __iadd__ returns self
    v *= ts.asarray(np.array([1.0, 2.0], np.float32))
    a[1:, ::-2] += 100
    a[1:, ::-2] *= np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(t), a)
    t[0] -= 1
    a[0] -= 1
    t[:, 0] /= 2
    a[:, 0] /= 2
    np.testing.assert_array_equal(np.asarray(t), a)
    i = ts.arange(3)
    with pytest.raises(TypeError):
        i += 1.5  # NumPy: UFuncTypeError (a TypeError) for the unsafe cast
    with pytest.raises(ValueError):
        v += ts.ones((5,), dtype=ts.float32)


def test_inplace_with_overlapping_operand_matches_numpy():
    a = np.arange(8.0)
    t = ts.asarray(a)
    a[1:] += a[:-1]
    v = t[1:]
    v += t[:-1]
    np.testing.assert_array_equal(np.asarray(t), a)


@given(
    hnp.arrays(st.sampled_from(["int32", "int64", "float32", "float64", "uint8"]),
               hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
               elements=st.integers(-20, 20).map(abs)),
    st.data(),
    st.booleans(),
)
def test_reductions_match_numpy(a, data, keepdims):
    t = ts.asarray(a)
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none())
    if a.ndim >= 2 and data.draw(st.booleans()):
        axis = tuple(data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, max_size=a.ndim, unique=True)))
    for name in ["sum", "mean", "max", "min"]:
        expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        expected = np.asarray(expected)
        got = getattr(ts, name)(t, axis=axis, keepdims=keepdims)
        m = getattr(t, name)(axis=axis, keepdims=keepdims)
        # Signed ints sum to int64, unsigned to uint64, as NumPy does on 64-bit Linux.
        check_same(got, expected, exact=name != "mean")
        check_same(m, expected, exact=name != "mean")


def test_reduction_errors():
    with pytest.raises(ValueError):
        ts.zeros((0, 3)).max()
    with pytest.raises(ValueError):
        ts.zeros((2, 3)).sum(axis=2)
    # The core's structured axis error becomes NumPy's AxisError, as np.zeros((2, 3)).sum(2).
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        ts.zeros((2, 3)).sum(axis=2)
    with pytest.raises(np.exceptions.AxisError):
        np.zeros((2, 3)).sum(axis=2)
