"""Differential tests against array-api-strict (an independent implementation of the
standard on NumPy), with inputs drawn by `hypothesis.extra.array_api` pointed at `tessera`
itself: every elementwise function over every dtype it accepts, broadcasting, empty and 0-d
arrays, and the special values (NaN, infinities, signed zeros) Hypothesis mixes in.

The two sides must agree on the result dtype, the shape and every value (NaN equal to NaN,
the sign of zero compared for the functions whose special cases fix it), or both raise the
same kind of error. Complex results compare to a relative tolerance (NumPy's complex
multiply rounds differently in the last place), and complex transcendental functions only on
finite inputs (docs/design.md U7)."""

import math
import warnings

import array_api_strict as strict
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace

import tessera as ts

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Hypothesis warns that tessera is not array-api-strict
    xps = make_strategies_namespace(ts, api_version="2024.12")

strict.set_array_api_strict_flags(api_version="2024.12")

UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
         "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
         "log", "log1p", "log2", "log10", "logical_not", "negative", "positive", "real",
         "reciprocal", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan",
         "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
          "bitwise_right_shift", "bitwise_xor", "copysign", "divide", "equal", "floor_divide",
          "greater", "greater_equal", "hypot", "less", "less_equal", "logaddexp", "logical_and",
          "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
          "not_equal", "pow", "remainder", "subtract"]
# Rounding-exact functions: results must match bit for bit (sign of zero included).
EXACT = {"abs", "ceil", "floor", "trunc", "round", "negative", "positive", "sign", "signbit",
         "copysign", "maximum", "minimum", "nextafter", "real", "imag", "conj", "add",
         "subtract", "multiply", "equal", "not_equal", "less", "less_equal", "greater",
         "greater_equal", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
         "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
         "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "square"}


def to_strict(x):
    return strict.asarray(np.asarray(x))


def call(xp, name, *args):
    try:
        return getattr(xp, name)(*args), None
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        return None, e


def compare(name, got, want, args):
    gerr, werr = got[1], want[1]
    if werr is not None or gerr is not None:
        # array-api-strict refuses dtypes the standard leaves out (a TypeError); Tessera may
        # extend a function to more dtypes, but must not fail where the standard defines it.
        assert werr is not None, f"{name}{args}: tessera raised {gerr!r}"
        return
    g, w = np.asarray(got[0]), np.asarray(want[0]._array)
    assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
    assert g.shape == w.shape
    complex_in = any(np.asarray(a).dtype.kind == "c" for a in args)
    if w.dtype.kind == "c":
        # Complex results: the error relative to |w| (a part much smaller than the other
        # carries no relative accuracy of its own), the same non-finite parts.
        tol = 4e-6 if w.dtype == np.complex64 else 1e-12
        finite = np.isfinite(w)
        assert np.array_equal(finite, np.isfinite(g)), f"{name}{args}: {g} vs {w}"
        assert np.all(np.abs(g[finite] - w[finite]) <= tol * np.abs(w[finite]) + 1e-300), \
            f"{name}{args}: {g} vs {w}"
    elif w.dtype.kind == "f" and (name not in EXACT or complex_in):
        tol = 4e-6 if w.dtype in (np.float32, np.complex64) else 1e-12
        # logaddexp's two terms cancel where e^x1 + e^x2 is near 1: its accuracy there is
        # absolute, for NumPy as for Tessera (docs/design.md P2).
        atol = 0
        if name == "logaddexp":
            finite = [np.abs(a[np.isfinite(a)]) for a in map(np.asarray, args)]
            atol = tol * max([1.0] + [float(f.max()) for f in finite if f.size])
        np.testing.assert_allclose(g, w, rtol=tol, atol=atol, equal_nan=True,
                                   err_msg=f"{name}{args}")
    else:
        np.testing.assert_array_equal(g, w, err_msg=f"{name}{args}", strict=True)
        if w.dtype.kind == "f":
            both_zero = (g == 0) & (w == 0)
            assert np.array_equal(np.signbit(g[both_zero]), np.signbit(w[both_zero])), name


shapes = xps.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


@settings(max_examples=15)
@pytest.mark.parametrize("name", UNARY)
@given(x=xps.arrays(dtype=xps.scalar_dtypes(), shape=shapes))
def test_unary_functions_match_array_api_strict(name, x):
    if np.asarray(x).dtype.kind == "c" and name not in {"isnan", "isinf", "isfinite", "real",
                                                        "imag", "conj", "abs", "positive",
                                                        "negative", "sign"}:
        # C99's special values for complex infinities and NaNs are not promised (U7).
        assume(bool(np.all(np.isfinite(np.asarray(x)))))
    if name == "sign" and np.asarray(x).dtype.kind == "c":
        # NumPy divides by |z| in the input's precision: 1 / |z| overflows for subnormal |z|
        # (sign(1e-45j) is nan+infj there, 1j here); compare where it does not.
        a = np.abs(np.asarray(x).astype(np.complex128))
        tiny = 1e-37 if np.asarray(x).dtype == np.complex64 else 1e-307
        assume(bool(np.all((a == 0) | (a > tiny))))
    if np.asarray(x).dtype.kind == "c":
        if name == "log1p":
            # NumPy computes complex log1p as log(1 + z) and loses Re(log1p(z)) for small z
            # (Tessera keeps it); compare where both are accurate.
            assume(bool(np.all(np.abs(np.asarray(x)) > 1e-2)))
        if name == "expm1":
            # Where e^x overflows float32 NumPy's exp(z) - 1 gives inf; the f64 formula does not.
            assume(bool(np.all(np.abs(np.asarray(x).real) < 80)))
    compare(name, call(ts, name, x), call(strict, name, to_strict(x)), (x,))


@settings(max_examples=15)
@pytest.mark.parametrize("name", BINARY)
@given(data=st.data())
def test_binary_functions_match_array_api_strict(name, data):
    dtype = data.draw(xps.scalar_dtypes(), label="dtype")
    s1, s2 = data.draw(xps.mutually_broadcastable_shapes(2, max_dims=3, max_side=4)).input_shapes
    x1 = data.draw(xps.arrays(dtype=dtype, shape=s1), label="x1")
    x2 = data.draw(xps.arrays(dtype=dtype, shape=s2), label="x2")
    if name in ("bitwise_left_shift", "bitwise_right_shift") and np.asarray(x2).dtype.kind in "iu":
        # Negative shift counts are undefined in the standard.
        assume(bool(np.all(np.asarray(x2) >= 0)))
    if name in ("floor_divide", "remainder") and np.asarray(x2).dtype.kind in "iu":
        # Integer division by zero is unspecified by the standard (NumPy warns and gives 0).
        assume(bool(np.all(np.asarray(x2) != 0)))
    if name in ("floor_divide", "remainder") and np.asarray(x1).dtype.kind == "f":
        # With an infinite operand the standard's special cases (inf // 1 = inf,
        # 1 // -inf = -0) and NumPy's Python-style results (nan, -1) differ: Tessera follows
        # the standard (docs/design.md U3), so they are compared in test_elementwise.py.
        assume(bool(np.all(np.isfinite(np.asarray(x1))) and np.all(np.isfinite(np.asarray(x2)))))
    if np.asarray(x1).dtype.kind == "c" and name in ("multiply", "pow", "divide"):
        # Within a rounding of complex64's overflow threshold the f32 products may overflow
        # where NumPy's do not: compare away from it.
        assume(bool(np.all(np.abs(np.asarray(x1)) < 1e15) and np.all(np.abs(np.asarray(x2)) < 1e15)))
    if name == "pow" and np.asarray(x2).dtype.kind in "iu":
        assume(bool(np.all(np.asarray(x2) >= 0)))  # negative integer powers are unspecified
    if name == "pow" and np.asarray(x1).dtype.kind == "f":
        # NumPy's pow(-inf, y) is NaN for y > 0 not an integer, where the standard says +inf
        # (Tessera's); test_elementwise.py checks that case.
        a1, a2 = np.broadcast_arrays(np.asarray(x1), np.asarray(x2))
        assume(not bool(np.any(np.isneginf(a1) & (a2 > 0) & (np.floor(a2) != a2))))
    compare(name, call(ts, name, x1, x2), call(strict, name, to_strict(x1), to_strict(x2)),
            (x1, x2))


@settings(max_examples=40)
@given(data=st.data())
def test_mixed_dtypes_promote_as_array_api_strict(data):
    d1, d2 = data.draw(xps.scalar_dtypes()), data.draw(xps.scalar_dtypes())
    x1 = data.draw(xps.arrays(dtype=d1, shape=xps.array_shapes(max_dims=2, max_side=3)))
    x2 = data.draw(xps.arrays(dtype=d2, shape=x1.shape))
    for name in ("add", "multiply", "equal", "maximum"):
        compare(name, call(ts, name, x1, x2), call(strict, name, to_strict(x1), to_strict(x2)),
                (x1, x2))


@settings(max_examples=40)
@given(x=xps.arrays(dtype=xps.real_dtypes(), shape=xps.array_shapes(min_dims=1, max_dims=3,
                                                                    min_side=0, max_side=4)),
       data=st.data())
def test_statistics_and_sorting_match_array_api_strict(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    for name, kw in (("sum", {"axis": axis}), ("prod", {"axis": axis}),
                     ("max", {"axis": axis}), ("min", {"axis": axis}),
                     ("cumulative_sum", {"axis": axis}), ("sort", {"axis": axis}),
                     ("argsort", {"axis": axis}), ("argmax", {"axis": axis}),
                     ("any", {"axis": axis}), ("all", {"axis": axis}),
                     ("mean", {"axis": axis}), ("std", {"axis": axis}),
                     ("var", {"axis": axis, "correction": 1})):
        def run(xp, a, name=name, kw=kw):
            try:
                return getattr(xp, name)(a, **kw), None
            except (TypeError, ValueError) as e:
                return None, e

        got, want = run(ts, x), run(strict, to_strict(x))
        if want[1] is not None:
            assert got[1] is not None or x.shape[axis] == 0 or name in ("mean", "std", "var"), \
                (name, want[1])
            continue
        if got[1] is not None:
            raise AssertionError(f"{name}: tessera raised {got[1]!r}")
        g, w = np.asarray(got[0]), np.asarray(want[0]._array)
        assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
        if name in ("mean", "std", "var", "sum", "prod", "cumulative_sum") and w.dtype.kind == "f":
            # Summation order differs (pairwise vs blocked): compare to a relative tolerance.
            tol = 1e-4 if w.dtype == np.float32 else 1e-9
            with np.errstate(invalid="ignore", over="ignore"):
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol * float(
                    np.nanmax(np.abs(np.asarray(x, dtype=np.float64)), initial=0.0) ** (
                        2 if name == "var" else 1) * max(1, x.shape[axis]) if
                    math.isfinite(float(np.nanmax(np.abs(np.asarray(x, dtype=np.float64)),
                                                  initial=0.0))) else 0.0),
                    equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name, strict=True)
