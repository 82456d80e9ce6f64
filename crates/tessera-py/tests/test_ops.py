"""Ops by name, the generated `tessera.ops`, CreateView from the INT64 encoding, and the
storage-fallback warning (docs/design.md O1, O2, V4)."""

import inspect
import warnings

import numpy as np
import pytest

import tessera as ts


def test_invoke_and_generated_functions_agree():
    x = ts.asarray(np.array([0.0, 1.0, 2.0], np.float32))
    y = ts.invoke("quadratic", x, a=1, b=2, c=3)
    np.testing.assert_allclose(np.asarray(y), [3.0, 6.0, 11.0])
    z = ts.ops.quadratic(x, a=1, b=2, c=3)
    np.testing.assert_array_equal(np.asarray(z), np.asarray(y))
    assert "quadratic" in ts.ops.quadratic.__doc__ or "a*x^2" in ts.ops.quadratic.__doc__
    sig = inspect.signature(ts.ops.quadratic)
    assert list(sig.parameters) == ["data", "a", "b", "c"]
    assert sig.parameters["a"].default == 0.0


def test_every_registered_op_is_generated():
    listing = ts.list_ops()
    names = {op["name"] for op in listing}
    assert {"add", "quadratic", "ring_buffer", "create_view", "expand", "tile"} <= names
    for op in listing:
        f = getattr(ts.ops, op["name"])
        assert f.__doc__.startswith(op["doc"])
        assert set(op) >= {"name", "doc", "inputs", "outputs", "params", "forward_only"}


def test_params_are_converted_to_strings():
    x = ts.asarray([1, 2])
    np.testing.assert_array_equal(np.asarray(ts.invoke("tile", x, reps=(2, 2))), np.tile([1, 2], (2, 2)))
    np.testing.assert_array_equal(np.asarray(ts.ops.tile(x, reps=[3])), np.tile([1, 2], 3))
    m = ts.arange(6).reshape(2, 3)
    s = ts.invoke("sum", m, axis=(1,), keepdims=True)
    assert s.shape == (2, 1) and s.tolist() == [[3], [12]]
    assert ts.invoke("sum", m, axis=None).item() == 15
    e = ts.ops.expand(ts.zeros((1, 3)), sizes=(4, -1))
    assert e.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(ts.ops.add([1, 2], [10, 20])), [11, 22])


def test_op_errors():
    with pytest.raises(ValueError):
        ts.invoke("no_such_op", ts.zeros(1))
    with pytest.raises(ValueError):
        ts.invoke("tile", ts.zeros(1), rep=2)  # unknown key
    with pytest.raises(ValueError):
        ts.invoke("tile", ts.zeros(1), reps="(-1,)")
    with pytest.raises(ValueError):
        ts.invoke("add", ts.zeros(1))  # arity
    with pytest.raises(TypeError):
        ts.ops.add(ts.zeros(1))  # missing argument: Python's own TypeError


def test_create_view_from_int64_encoding_equals_getitem():
    a = np.arange(60).reshape(3, 4, 5)
    t = ts.asarray(a)
    for key in [(1, slice(None, None, -2)), (Ellipsis, None, slice(1, 4)), (slice(-1, None), 2, 0), ()]:
        code = ts.encode_index(key)
        for enc in (code, np.array(code, dtype=np.int64)):
            v = ts.create_view(t, enc)
            np.testing.assert_array_equal(np.asarray(v), a[key])
            assert v.shares_storage(t)
        np.testing.assert_array_equal(np.asarray(ts.ops.create_view(t, index=tuple(code))), a[key])
    with pytest.raises(ValueError):
        ts.create_view(t, [7, 0, 1, 0])  # unknown type code
    with pytest.raises(ValueError):
        ts.create_view(t, [0, 1])  # truncated group
    with pytest.raises(TypeError):
        ts.create_view(t, np.array([0.0, 1.0, 1.0, 1.0, 0.0]))


def test_storage_fallback_warns_once_as_runtime_warning():
    x = ts.asarray(np.array([[0.0, 1.0, 2.0]], np.float32)).tostype("csr")
    assert x.stype == "csr"
    before = ts.fallback_count()
    with pytest.warns(RuntimeWarning, match="Storage type fallback detected"):
        y = ts.ops.quadratic(x, a=1.0, b=2.0, c=3.0)
    np.testing.assert_allclose(np.asarray(y), [[3.0, 6.0, 11.0]])
    assert ts.fallback_count() == before + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ts.ops.quadratic(x, a=1.0, b=2.0, c=3.0)  # same key: logged once only
    assert ts.fallback_count() == before + 2


def test_fallback_warning_as_error_raises():
    x = ts.asarray(np.array([[1.0, 2.0]])).tostype("csr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            ts.invoke("exp", x)


def test_fallback_warning_as_error_is_raised_by_the_sparse_operator():
    # Under -W error the operator that fell back raises the warning itself, not the next
    # call (issue 15, item 10). Each (op, storage types) warns once per process: power with
    # a row_sparse operand on either side is used by no other test.
    r = ts.asarray(np.array([[0.0, 2.0], [0.0, 0.0]], np.float32)).tostype("row_sparse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="operator = power"):
            2.0 ** r
        with pytest.raises(RuntimeWarning, match="operator = power"):
            r ** 3.0
        ts.invoke("exp", ts.zeros(2))  # nothing left pending for the next call
    np.testing.assert_array_equal(np.asarray(r ** 3.0), [[0.0, 8.0], [0.0, 0.0]])
