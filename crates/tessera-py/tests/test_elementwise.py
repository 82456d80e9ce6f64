"""The Array API's elementwise functions and the operators //, %, &, |, ^, <<, >>, ~ against
NumPy 2: every function, every dtype it accepts, broadcasting, empty and 0-d arrays,
NaN/inf/signed zeros, strided inputs, Python scalars as weak operands, and the errors
(TypeError for dtypes). Where Tessera follows the standard rather than NumPy the expected
value is adjusted and the reason written next to it."""

import operator
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from conftest import NUMPY_DTYPES

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int32", "int64"]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, np.inf, -np.inf, np.nan]

# One-operand functions: tessera name -> NumPy function.
FLOAT_UNARY = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh,
    "expm1": np.expm1, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "sinh": np.sinh, "tan": np.tan, "exp": np.exp, "log": np.log, "sin": np.sin,
    "tanh": np.tanh, "sqrt": np.sqrt,
}
# Exact on every numeric dtype (integers kept); bool is a TypeError for these.
NUMERIC_UNARY = {
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "round": np.round,
    "sign": np.sign, "positive": np.positive,
}
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "signbit": np.signbit}

FLOAT_BINARY = {
    "atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot,
    "logaddexp": np.logaddexp, "nextafter": np.nextafter,
}
DIVISION = {"floor_divide": np.floor_divide, "remainder": np.remainder}
BITWISE = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}
SHIFTS = {"bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift}
LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor}
EXISTING_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}
DTYPE_PAIRS = [(a, b) for a in NUMPY_DTYPES for b in NUMPY_DTYPES if {a, b} != {"uint8", "int8"}]


def elements(dtype, lo=-20, hi=20):
    if dtype == "bool":
        return st.booleans()
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(info.min, lo), min(info.max, hi))
    width = np.dtype(dtype).itemsize * 8
    return st.floats(lo, hi, width=width) | st.sampled_from(SPECIAL).map(np.dtype(dtype).type)


def arrays(draw, dtype, shape, **kw):
    return draw(hnp.arrays(dtype, shape, elements=elements(dtype, **kw)))


def strided(draw, a):
    """`a` as a tensor, sometimes seen through a transposed or reversed view."""
    how = draw(st.sampled_from(["plain", "transposed", "reversed"]))
    if how == "transposed" and a.ndim >= 2:
        return ts.asarray(np.ascontiguousarray(a.T)).T
    if how == "reversed" and a.ndim >= 1 and a.shape[0] > 0:
        return ts.asarray(np.ascontiguousarray(a[::-1])).flip(0)
    return ts.asarray(a)


def check_close(got, want, exact):
    g = np.asarray(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(g, want)
        if want.dtype.kind == "f":
            # Signed zeros too.
            np.testing.assert_array_equal(np.signbit(g), np.signbit(want))
        return
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
    eps = np.finfo(want.dtype).eps
    np.testing.assert_allclose(g, want, rtol=8 * eps, atol=8 * np.finfo(want.dtype).tiny, equal_nan=True)


def numpy_call(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(f(*args))


@given(st.data(), st.sampled_from(sorted(FLOAT_UNARY)), st.sampled_from(NUMPY_DTYPES))
def test_float_functions(data, name, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = arrays(data.draw, dtype, shape)
    want = numpy_call(FLOAT_UNARY[name], a)
    got = getattr(ts, name)(strided(data.draw, a))
    # float16 computes in float32 and rounds once in both libraries; other floats may
    # differ by a few ulp between libm and NumPy's own kernels.
    check_close(got, want, exact=False)


@given(st.data(), st.sampled_from(sorted(NUMERIC_UNARY) + ["reciprocal", "abs", "negative", "square"]),
       st.sampled_from(NUMPY_DTYPES))
def test_numeric_functions(data, name, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = arrays(data.draw, dtype, shape)
    f = getattr(ts, name)
    if dtype == "bool" and name in ("ceil", "floor", "trunc", "round", "sign", "positive", "negative"):
        # The standard: numeric dtypes only (NumPy returns bool for floor/ceil/trunc/round).
        with pytest.raises(TypeError):
            f(ts.asarray(a))
        return
    if name == "reciprocal":
        # Tessera computes integer reciprocals in float (NumPy's integer 1 // x is not the
        # standard's function, which is defined for floats).
        fd = np.asarray(getattr(ts, "exp")(ts.asarray(np.zeros((), dtype)))).dtype
        want = numpy_call(np.reciprocal, a.astype(fd))
        # float16: 1/x in f32 rounded to f16 (NumPy: the same, or a correctly rounded f16).
        return check_close(f(strided(data.draw, a)), want, exact=False)
    npf = {"abs": np.abs, "negative": np.negative, "square": np.square}.get(name) or NUMERIC_UNARY[name]
    want = numpy_call(npf, a)
    if name == "sign" and want.dtype.kind == "f":
        want = np.where(want == 0, np.zeros_like(want), want)  # NumPy's sign(-0.0) is 0.0 too
    check_close(f(strided(data.draw, a)), want, exact=True)


@given(st.data(), st.sampled_from(sorted(PREDICATES) + ["logical_not", "bitwise_invert"]),
       st.sampled_from(NUMPY_DTYPES))
def test_predicates_and_not(data, name, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = arrays(data.draw, dtype, shape)
    f = getattr(ts, name)
    if name == "bitwise_invert":
        if dtype in FLOATS:
            with pytest.raises(TypeError):
                f(ts.asarray(a))
            return
        want = numpy_call(np.invert, a)
    elif name == "logical_not":
        want = numpy_call(np.logical_not, a)
    else:
        want = numpy_call(PREDICATES[name], a)
    check_close(f(strided(data.draw, a)), want, exact=True)


def binary_operands(data, pairs, **kw):
    da, db = data.draw(st.sampled_from(pairs))
    sa, sb = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4)).input_shapes
    return arrays(data.draw, da, sa, **kw), arrays(data.draw, db, sb, **kw)


@given(st.data(), st.sampled_from(sorted(FLOAT_BINARY) + sorted(DIVISION)))
def test_float_binary_and_division(data, name):
    a, b = binary_operands(data, DTYPE_PAIRS)
    np_f = {**FLOAT_BINARY, **DIVISION}[name]
    want = numpy_call(np_f, a, b)
    if name == "floor_divide" and want.dtype.kind == "f":
        # The standard's special cases with an infinite operand: floor(x1 / x2) (NumPy: NaN
        # for inf // finite, -1 for -1 // inf).
        ab = np.broadcast_arrays(a.astype(want.dtype), b.astype(want.dtype))
        inf = np.isinf(ab[0]) | np.isinf(ab[1])
        want = np.where(inf, numpy_call(lambda x, y: np.floor(x / y), *ab), want).astype(want.dtype)
    if name == "nextafter" and want.dtype == np.float16:
        # NumPy's half nextafter returns x1 when x1 == x2; C's nextafter (NumPy's f32/f64,
        # and the standard: nextafter(-0, +0) is +0) returns x2, as Tessera does.
        ab = np.broadcast_arrays(a.astype(want.dtype), b.astype(want.dtype))
        want = np.where(ab[0] == ab[1], ab[1], want).astype(want.dtype)
    got = getattr(ts, name)(strided(data.draw, a), ts.asarray(b))
    if name == "logaddexp":
        check_logaddexp(got, want, a, b)
        return
    exact = name in ("copysign", "nextafter", "floor_divide", "remainder")
    check_close(got, want, exact=exact)


def check_logaddexp(got, want, *args):
    """`logaddexp` against a `longdouble` reference of the same operands (80-bit on x86-64
    Linux, where CI runs; `want` gives the dtype). Where `e^x1 + e^x2` is near 1 the formula's
    two terms cancel and its error is absolute, about `eps * max(1, |x1|, |x2|)` of the
    precision it computes in (float64 for float32 and float64, float32 for the halves), for
    NumPy as for Tessera (docs/design.md P2: NumPy's own float32, computed in float32, is
    then up to 5e5 ulp off): so a relative comparison with NumPy's value would test NumPy's
    rounding. Allowed: that absolute error plus 4 ulp of the result."""
    ab = np.broadcast_arrays(*[np.asarray(x, dtype=want.dtype) for x in args])
    with np.errstate(all="ignore"):
        ref = np.logaddexp(*[x.astype(np.longdouble) for x in ab])
        scale = np.maximum(1, np.maximum(np.abs(ab[0]), np.abs(ab[1]))).astype(np.longdouble)
    g = np.asarray(got).astype(np.longdouble)
    assert np.asarray(got).dtype == want.dtype and g.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(g), np.isnan(ref))
    infinite = np.isinf(ref)
    np.testing.assert_array_equal(g[infinite], ref[infinite])
    finite = np.isfinite(ref)
    wide = want.dtype in (np.float32, np.float64)
    computed = np.finfo(np.float64 if wide else np.float32).eps
    tol = 8 * computed * scale + 4 * np.finfo(want.dtype).eps * np.abs(ref)
    assert np.all(np.abs(g[finite] - ref[finite]) <= tol[finite]), (g, ref)


@given(st.data(), st.sampled_from(sorted(BITWISE) + sorted(SHIFTS) + sorted(LOGICAL)))
def test_bitwise_shift_and_logical(data, name):
    a, b = binary_operands(data, DTYPE_PAIRS, lo=-70, hi=70)
    f = getattr(ts, name)
    kinds = {a.dtype.kind, b.dtype.kind}
    rejects = (name in BITWISE and "f" in kinds) or (
        name in SHIFTS and ("f" in kinds or np.result_type(a, b) == np.bool_)
    )
    if rejects:
        # Floats, and bool for shifts (the standard: integers only; NumPy shifts bools as int8).
        with pytest.raises(TypeError):
            f(ts.asarray(a), ts.asarray(b))
        return
    np_f = {**BITWISE, **SHIFTS, **LOGICAL}[name]
    want = numpy_call(np_f, a, b)
    check_close(f(strided(data.draw, a), ts.asarray(b)), want, exact=True)


@given(st.data(), st.sampled_from(sorted(EXISTING_BINARY)))
def test_existing_binary_functions_under_standard_names(data, name):
    a, b = binary_operands(data, [(x, y) for x, y in DTYPE_PAIRS if "bool" not in (x, y)], lo=0, hi=5)
    want = numpy_call(EXISTING_BINARY[name], a, b)
    got = getattr(ts, name)(ts.asarray(a), ts.asarray(b))
    if name == "pow" and want.dtype.kind == "f":
        # NumPy's pow(-inf, y) is NaN for y > 0 not an integer; C99 and the standard say +inf
        # (Python's math.pow agrees), which Tessera gives.
        x1, x2 = np.broadcast_arrays(a.astype(want.dtype), b.astype(want.dtype))
        fix = np.isneginf(x1) & (x2 > 0) & (np.floor(x2) != x2)
        want = np.where(fix, np.inf, want).astype(want.dtype)
    if name in ("maximum", "minimum") and want.dtype.kind == "f":
        # Equal zeros of opposite signs: the standard leaves the sign of the result open, and
        # NumPy differs by dtype (float16 returns the first operand, float32/float64 the
        # second, as Tessera does for every dtype). The values are compared exactly.
        np.testing.assert_array_equal(np.asarray(got), want, strict=True)
        return
    check_close(got, want, exact=want.dtype.kind != "f" or name != "pow")


@given(st.data(), st.sampled_from(sorted(FLOAT_BINARY) + sorted(DIVISION) + sorted(BITWISE) + ["add", "maximum"]),
       st.sampled_from(["int32", "int64", "float32", "float64", "int8"]),
       st.sampled_from([2, -3, 1.5, True]), st.booleans())
def test_python_scalars_are_weak(data, name, dtype, scalar, scalar_first):
    a = arrays(data.draw, dtype, data.draw(hnp.array_shapes(min_dims=0, max_dims=2)))
    np_f = {**FLOAT_BINARY, **DIVISION, **BITWISE, **EXISTING_BINARY}[name]
    args = (scalar, a) if scalar_first else (a, scalar)
    try:
        want = numpy_call(np_f, *args)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(ts, name)(*[ts.asarray(x) if isinstance(x, np.ndarray) else x for x in args])
        return
    got = getattr(ts, name)(*[ts.asarray(x) if isinstance(x, np.ndarray) else x for x in args])
    if name == "floor_divide" and want.dtype.kind == "f":
        return  # infinite operands: the standard's rule, checked above
    if name == "logaddexp" and want.dtype.kind == "f":
        check_logaddexp(got, want, *args)
        return
    check_close(got, want, exact=name not in FLOAT_BINARY or name in ("copysign", "nextafter"))


OPERATORS = [
    (operator.floordiv, operator.ifloordiv), (operator.mod, operator.imod),
    (operator.and_, operator.iand), (operator.or_, operator.ior), (operator.xor, operator.ixor),
    (operator.lshift, operator.ilshift), (operator.rshift, operator.irshift),
]


@given(st.data(), st.sampled_from(OPERATORS), st.sampled_from(["int8", "int32", "int64", "uint8"]))
def test_operators_reflected_and_in_place(data, ops, dtype):
    op, iop = ops
    a = arrays(data.draw, dtype, (3, 4), lo=-9, hi=9)
    b = arrays(data.draw, dtype, (4,), lo=-9, hi=9)
    s = data.draw(st.integers(0, 5))
    t = ts.asarray(a)
    check_close(op(t, ts.asarray(b)), numpy_call(op, a, b), exact=True)
    check_close(op(t, s), numpy_call(op, a, s), exact=True)
    check_close(op(s, t), numpy_call(op, s, a), exact=True)
    t2, a2 = ts.asarray(a), a.copy()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a2 = iop(a2, b)
    t2 = iop(t2, ts.asarray(b))
    np.testing.assert_array_equal(np.asarray(t2), a2)


def test_float_operators_and_in_place_through_a_view():
    a = np.array([[7.5, -7.5], [0.0, -0.0]])
    t = ts.asarray(a)
    np.testing.assert_array_equal(np.asarray(t // 2), a // 2)
    np.testing.assert_array_equal(np.asarray(-3 % t[0]), -3 % a[0])
    col = t[:, 1]
    col %= 2.0
    np.testing.assert_array_equal(np.asarray(t), np.array([[7.5, 0.5], [0.0, 0.0]]))
    with pytest.raises(TypeError):
        t & 1
    i = ts.asarray(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError):
        i //= 1.5  # float result into an int32 tensor
    np.testing.assert_array_equal(np.asarray(~i), ~np.arange(4, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(~ts.asarray(np.array([True, False]))), [False, True])


def test_index_complex_and_conversions():
    seq = [10, 20, 30]
    assert seq[ts.asarray(np.int64(2))] == 30
    assert operator.index(ts.asarray(np.uint8(1))) == 1
    for bad in (np.float64(1.0), np.array([1]), np.bool_(True)):
        with pytest.raises(TypeError):
            operator.index(ts.asarray(bad))
    assert complex(ts.asarray(np.float32(2.5))) == 2.5 + 0j
    assert int(ts.asarray(np.int8(-3))) == -3 and float(ts.asarray(np.float16(0.5))) == 0.5
    assert bool(ts.asarray(np.array([1]))) is True
    with pytest.raises(ValueError):
        complex(ts.asarray(np.zeros(2)))


def test_special_values_of_the_standard():
    inf, nan = np.inf, np.nan
    x = ts.asarray(np.array([0.0, -0.0, inf, -inf, nan]))
    np.testing.assert_array_equal(np.signbit(np.asarray(ts.sign(x))), [False, False, False, True, False])
    np.testing.assert_array_equal(np.asarray(ts.atanh(ts.asarray(np.array([1.0, -1.0])))), [inf, -inf])
    np.testing.assert_array_equal(np.asarray(ts.hypot(ts.asarray(np.array([inf])), nan)), [inf])
    np.testing.assert_array_equal(np.asarray(ts.logaddexp(x, x))[2:4], [inf, -inf])
    fd = np.asarray(ts.floor_divide(ts.asarray(np.array([inf, -1.0, 1.0])), ts.asarray(np.array([2.0, inf, inf]))))
    assert fd[0] == inf and fd[1] == 0 and np.signbit(fd[1]) and not np.signbit(fd[2])
    r = np.asarray(ts.remainder(ts.asarray(np.array([-5.0, 5.0])), inf))
    np.testing.assert_array_equal(r, [inf, 5.0])
    r = np.asarray(ts.round(ts.asarray(np.array([0.5, 1.5, 2.5, -0.5], dtype=np.float32))))
    np.testing.assert_array_equal(r, [0.0, 2.0, 2.0, -0.0])
    assert np.signbit(r[3])
    # Integer division by zero: 0, as NumPy (without its warning).
    z = np.asarray(ts.asarray(np.array([5, -5], dtype=np.int32)) // 0)
    np.testing.assert_array_equal(z, [0, 0])


@given(st.data(), st.sampled_from(["float32", "float64", "int32", "int8"]))
def test_clip(data, dtype):
    a = arrays(data.draw, dtype, data.draw(hnp.array_shapes(min_dims=0, max_dims=2)), lo=-9, hi=9)
    lo = data.draw(st.none() | st.integers(-5, 0))
    hi = data.draw(st.none() | st.integers(0, 5))
    want = a if lo is None and hi is None else np.clip(a, lo, hi)
    got = ts.clip(ts.asarray(a), lo, hi)
    # Values, not the sign of a zero bound's result (NumPy's SIMD minimum may give -0.0).
    check_close(got, np.asarray(want, dtype=a.dtype), exact=False)
    # Array bounds broadcast.
    lo_arr = np.full(a.shape[-1:] if a.ndim else (), -1, dtype=dtype)
    got = ts.clip(ts.asarray(a), min=ts.asarray(lo_arr))
    check_close(got, np.maximum(a, lo_arr), exact=False)


def test_errors_and_signatures():
    x = ts.asarray(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        ts.acos(x=x)  # positional-only
    with pytest.raises(TypeError):
        ts.add(1, 2)  # no array operand
    with pytest.raises(TypeError):
        ts.cos(1.0)
    with pytest.raises(TypeError):
        ts.bitwise_left_shift(x, x)
    with pytest.raises(TypeError):
        ts.floor(ts.asarray(np.array([True])))
    with pytest.raises(ValueError):
        ts.atan2(x, ts.asarray(np.zeros(3)))  # shapes do not broadcast
    with pytest.raises(TypeError):
        ts.clip(1.0, 0, 1)
    for name in ["acos", "floor_divide", "bitwise_invert", "logical_xor", "clip", "pow", "abs"]:
        assert name in ts.__all__ and callable(getattr(ts, name))


def test_autograd_through_new_functions():
    x = ts.asarray(np.array([0.2, -0.4, 0.6]))
    x.requires_grad_(True)
    y = ts.sum(ts.asin(x) + ts.atan2(x, 2.0) + ts.floor(x))
    y.backward()
    xv = np.array([0.2, -0.4, 0.6])
    want = 1 / np.sqrt(1 - xv**2) + 2.0 / (xv**2 + 4.0)
    np.testing.assert_allclose(np.asarray(x.grad), want, rtol=1e-12)


@pytest.mark.parametrize("z", [3.38465441e-215 + 1j, 1 + 1e-300j, 1 - 5e-200j, -1 + 1e-170j, 1e-310 - 1j])
def test_complex_atan_and_atanh_near_their_singularities(z):
    """atanh near ±1 and atan near ±i, where (1 - x)² + y² underflows: finite, as NumPy."""
    for ours, theirs in ((ts.atan, np.arctan), (ts.atanh, np.arctanh)):
        got = complex(ours(ts.asarray(np.complex128(z))))
        want = complex(theirs(np.complex128(z)))
        np.testing.assert_allclose([got.real, got.imag], [want.real, want.imag], rtol=1e-12, atol=0)
