"""asarray, dtypes, zero-copy NumPy export, printing, creation functions and bad input."""

import gc
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts
from conftest import NUMPY_DTYPES


@given(hnp.arrays(st.sampled_from(NUMPY_DTYPES), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)))
def test_asarray_round_trips_every_numpy_dtype(a):
    t = ts.asarray(a)
    assert t.shape == a.shape and t.dtype == a.dtype and t.ndim == a.ndim and t.size == a.size
    back = np.asarray(t)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    assert not np.shares_memory(back, a)  # asarray copies foreign memory


def test_asarray_sources():
    assert ts.asarray([[1, 2], [3, 4]]).dtype == ts.int64
    assert ts.asarray([1.5, 2]).dtype == ts.float64
    assert ts.asarray(True).dtype == ts.bool and ts.asarray(True).shape == ()
    assert ts.asarray(3).item() == 3
    assert ts.asarray(2.5, dtype="float32").dtype == ts.float32
    assert ts.asarray(bytearray(b"\x01\x02")).dtype == ts.uint8
    assert np.asarray(ts.asarray(memoryview(np.arange(3, dtype=np.int32)))).tolist() == [0, 1, 2]
    # non-contiguous and byte-swapped NumPy inputs
    a = np.arange(12.0).reshape(3, 4)[:, ::-2]
    np.testing.assert_array_equal(np.asarray(ts.asarray(a)), a)
    b = np.arange(4, dtype=">i4")
    np.testing.assert_array_equal(np.asarray(ts.asarray(b)), b)
    # longdouble (no tessera dtype) is converted only when a target dtype is given
    with pytest.raises(TypeError):
        ts.asarray(np.arange(3, dtype=np.longdouble))
    assert ts.asarray(np.arange(3, dtype=np.longdouble), dtype=ts.int32).dtype == ts.int32
    with pytest.raises(ValueError):
        ts.asarray([1, 2], copy=False)
    # copy=False on a DLPack producer adopts its memory: writes show on both sides.
    shared = np.arange(6.0).reshape(2, 3)[:, ::2]
    adopted = ts.asarray(shared, copy=False)
    adopted[0, 1] = 99.0
    assert shared[0, 1] == 99.0
    with pytest.raises(ValueError):
        ts.asarray(shared, dtype=ts.float32, copy=False)
    with pytest.raises(BufferError):
        ts.asarray(np.array([True, False]), copy=False)
    t = ts.asarray([1, 2])
    assert ts.asarray(t) is not None and ts.asarray(t).shares_storage(t)
    assert not ts.asarray(t, copy=True).shares_storage(t)
    assert ts.asarray(t, dtype=ts.float32).dtype == ts.float32


# NumPy bool memory can hold any byte (`np.frombuffer(b"\x02", np.bool_)`, `.view(np.bool_)`);
# only 0 and 1 are Rust bools, so every import reads bytes and normalises them (nonzero is
# True, the values NumPy's casts give) instead of copying them into a bool tensor.
RAW_BOOLS = b"\x00\x02\xff\x01\x80"


def _bytes(t):
    """The raw bytes of a bool tensor."""
    return np.asarray(t).view(np.uint8).tolist()


def test_invalid_numpy_bools_are_normalised_on_import():
    a = np.frombuffer(RAW_BOOLS, np.bool_)
    want = a.astype(np.uint8).tolist()
    assert want == [0, 1, 1, 1, 1]
    t = ts.asarray(a)
    assert _bytes(t) == want and t.tolist() == a.tolist()
    assert t.astype(ts.uint8).tolist() == want
    assert ts.asarray(a, dtype=ts.float32).tolist() == want
    assert t.sum().item() == int(a.sum()) == 4
    assert (t == True).tolist() == [False, True, True, True, True]  # noqa: E712
    # 2-D, strided and reversed (NumPy copies first), a buffer with format "?", a 0-d array
    b = np.frombuffer(bytes(range(0, 256, 3)), np.bool_)
    for v in (b.reshape(2, -1), b[::-5], b.reshape(2, -1)[:, ::2].T):
        assert _bytes(ts.asarray(v)) == v.astype(np.uint8).tolist()
    assert _bytes(ts.asarray(memoryview(bytearray(RAW_BOOLS)).cast("?"))) == want
    assert _bytes(ts.asarray(a[1:2].reshape(()))) == 1


def test_invalid_numpy_bools_are_normalised_as_operands_and_values():
    a = np.frombuffer(RAW_BOOLS, np.bool_)
    want = a.astype(np.uint8).tolist()
    t = ts.zeros(5, dtype=ts.bool)
    t[:] = a
    assert _bytes(t) == want
    f = ts.zeros(5)
    f[:] = a
    assert f.tolist() == want
    assert (ts.zeros(5, dtype=ts.uint8) + a).tolist() == want
    assert _bytes(ts.full(2, a[2:3].reshape(()))) == [1, 1]
    s = ts.sparse.csr_matrix((a[1:3], [0, 1], [0, 1, 2]), shape=(2, 2))
    assert np.asarray(s.todense()).view(np.uint8).tolist() == [[1, 0], [0, 1]]
    rb = ts.RingBuffer((3,), 0, 3, dtype=ts.bool)
    assert _bytes(rb.push(a[:3])) == want[:3]


def test_dtypes_accept_numpy_and_strings():
    for name in ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]:
        d = getattr(ts, name)
        assert d == name and d == np.dtype(name) and repr(d) == f"tessera.{name}"
        assert ts.zeros(2, dtype=np.dtype(name)).dtype == d
        assert ts.zeros(2, dtype=name).dtype == d
    assert ts.bfloat16.itemsize == 2 and ts.dtype("bf16") == ts.bfloat16
    assert ts.zeros(1, dtype=float).dtype == ts.float64
    assert ts.zeros(1, dtype=np.int32).dtype == ts.int32
    with pytest.raises(TypeError):
        ts.zeros(1, dtype="clongdouble")
    with pytest.raises(TypeError):
        ts.zeros(1, dtype="nonsense")


def test_zero_copy_export_and_lifetime():
    t = ts.arange(24, dtype=ts.float32).reshape(2, 3, 4)
    a = np.asarray(t)
    assert a.flags.writeable and a.base is not None
    assert a.__array_interface__["data"][0] == t.__array_interface__["data"][0]
    v = t[1, ::-1, None, 1:3]
    av = np.asarray(v)
    assert np.shares_memory(av, a)
    assert av.strides == v.strides == a[1, ::-1, None, 1:3].strides
    av[0, 0, 0] = -1.0  # NumPy writes reach the tensor (bypassing the lock, documented)
    assert t[1, 2, 1].item() == -1.0
    assert t.numpy().base is not None
    # the storage outlives the tensor object while NumPy holds the export
    w = np.asarray(ts.arange(5)[::2])
    gc.collect()
    assert w.tolist() == [0, 2, 4]
    assert sys.getrefcount(t) >= 2
    e = np.asarray(ts.zeros((1, 3)).expand(4, 3))
    assert e.strides == (0, 8)


def test_bfloat16_export_raises_type_error():
    b = ts.arange(3, dtype=ts.bfloat16)
    with pytest.raises(TypeError):
        np.asarray(b)
    assert b.astype(ts.float32).tolist() == [0.0, 1.0, 2.0]
    assert b.tolist() == [0.0, 1.0, 2.0]
    assert "bfloat16" in repr(b)


def test_repr_and_str_follow_numpy():
    for a in [np.arange(6).reshape(2, 3), np.linspace(0, 1, 5, dtype=np.float32), np.array(True), np.arange(2000)]:
        t = ts.asarray(a)
        assert str(t) == str(a)
        assert repr(t) == repr(a).replace("array(", "tensor(").replace("\n      ", "\n       ")


def test_creation_functions():
    np.testing.assert_array_equal(np.asarray(ts.arange(5)), np.arange(5))
    np.testing.assert_array_equal(np.asarray(ts.arange(1, 10, 3)), np.arange(1, 10, 3))
    np.testing.assert_array_equal(np.asarray(ts.arange(0.0, 1.0, 0.25)), np.arange(0.0, 1.0, 0.25))
    assert ts.arange(3).dtype == ts.int64 and ts.arange(3.0).dtype == ts.float64
    assert ts.full((2, 2), 7).dtype == ts.int64 and ts.full((2,), 1.5).dtype == ts.float64
    assert ts.full((2,), True).dtype == ts.bool
    assert ts.full(3, 2, dtype=ts.int8).tolist() == [2, 2, 2]
    assert ts.ones((2, 3)).tolist() == [[1.0] * 3] * 2 and ts.ones(2).dtype == ts.float64
    assert ts.empty((0, 2)).shape == (0, 2)
    with pytest.raises(ValueError):
        ts.zeros((-1, 2))
    with pytest.raises(TypeError):
        ts.zeros((1.5, 2))
    with pytest.raises(ValueError):
        ts.arange(0, 5, 0)
    with pytest.raises((ValueError, MemoryError)):
        ts.zeros((1 << 62, 8))


@pytest.mark.parametrize("shape", [2**63, 2**64, (2**63, 2), [1, -(2**63) - 1], 10**30])
def test_dims_past_isize_are_value_errors(shape):
    # NumPy's "Maximum allowed dimension exceeded", not TypeError or OverflowError.
    for f in (ts.zeros, ts.ones, ts.empty, lambda s: ts.full(s, 1.0),
              lambda s: ts.zeros(1).broadcast_to(s), lambda s: ts.RingBuffer(s, 0, 2)):
        with pytest.raises(ValueError):
            f(shape)
    with pytest.raises(OverflowError):  # axes are not shapes: Python's OverflowError
        ts.zeros(2).sum(axis=2**63)


def test_nbytes_is_exact_past_usize():
    v = ts.zeros(1).expand(2**61)
    assert v.size == 2**61 and v.nbytes == 2**64
    assert ts.zeros((2, 3), dtype=ts.float32).nbytes == 24


def test_scalar_conversions():
    t = ts.asarray([2.5])
    assert float(t) == 2.5 and int(t) == 2 and bool(t)
    with pytest.raises(ValueError):
        bool(ts.zeros(2))
    with pytest.raises(TypeError):
        len(ts.asarray(1.0))
    with pytest.raises(TypeError):
        hash(t)
