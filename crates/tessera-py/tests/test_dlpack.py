"""DLPack (docs/design.md I1-I3): zero-copy export (`Tensor.__dlpack__`) and import
(`tessera.from_dlpack`), checked against NumPy, which is both a producer and a consumer."""

import ctypes
import gc
import sys
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts

SHARED = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"]


def test_device():
    t = ts.zeros(3)
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dtype", SHARED)
def test_numpy_consumes_without_copy(dtype):
    t = ts.asarray(np.arange(12).reshape(3, 4).astype(dtype))
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 4) and a.flags.writeable
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4).astype(dtype))
    a[1, 2] = 7  # written by NumPy, read by Tessera
    assert np.asarray(t)[1, 2] == 7
    t[0, 0] = 5  # written by Tessera, read by NumPy
    assert a[0, 0] == 5


@pytest.mark.parametrize("dtype", SHARED)
def test_tessera_consumes_without_copy(dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    t = ts.from_dlpack(a)
    assert t.dtype == ts.dtype(dtype) if hasattr(ts, "dtype") else True
    np.testing.assert_array_equal(np.asarray(t), a)
    a[2, 3] = 9
    assert np.asarray(t)[2, 3] == 9
    t[0, 1] = 3
    assert a[0, 1] == 3


def views(a):
    return {
        "transposed": a.T,
        "reversed": a[::-1],
        "every other column backwards": a[:, ::-2],
        "offset block": a[1:, 2:],
        "0-d": a[1, 1][()],
    }


@pytest.mark.parametrize("name", list(views(np.zeros((4, 6)))))
def test_strided_views_both_ways(name):
    base = np.arange(24.0).reshape(4, 6)
    v = views(base)[name]
    v = np.asarray(v) if np.ndim(v) == 0 else v
    t = ts.from_dlpack(v)
    assert t.shape == v.shape
    np.testing.assert_array_equal(np.asarray(t), v)
    if v.ndim:
        # the import shares the base's memory: a write to the base shows in the tensor
        idx = (0,) * v.ndim
        v[idx] = -1.0
        assert np.asarray(t)[idx] == -1.0
        back = np.from_dlpack(t)  # and the export of a strided tensor is strided too
        np.testing.assert_array_equal(back, v)
        assert np.shares_memory(back, base)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=4),
    dtype=st.sampled_from(SHARED),
    data=st.data(),
)
def test_round_trips_match_numpy(shape, dtype, data):
    a = (np.arange(int(np.prod(shape)), dtype=np.int64) % 100).astype(dtype).reshape(shape)
    # a random basic-index view of it: slices with steps of either sign per dim
    key = tuple(
        slice(None, None, data.draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape
    )
    v = a[key] if shape else a[...]  # a[()] is a NumPy scalar, which has no __dlpack__
    t = ts.from_dlpack(v)
    np.testing.assert_array_equal(np.asarray(t), v)
    np.testing.assert_array_equal(np.from_dlpack(t), v)
    assert t.shape == v.shape
    if v.size:
        assert np.shares_memory(np.from_dlpack(t), a)


def test_memory_is_released_once_after_the_last_view():
    a = np.arange(10.0)
    alive = weakref.ref(a)
    t = ts.from_dlpack(a)
    v = t[2:5]
    del a
    gc.collect()
    assert alive() is not None  # the tensor holds the producer's array
    del t
    gc.collect()
    assert alive() is not None  # so does a view of it
    np.testing.assert_array_equal(np.asarray(v), [2.0, 3.0, 4.0])
    del v
    gc.collect()
    assert alive() is None  # the deleter ran


def test_exported_tensor_stays_alive_with_the_consumer():
    t = ts.asarray(np.arange(5, dtype=np.int32))
    a = np.from_dlpack(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(5))


def test_bool_import_copies_and_normalises():
    raw = np.frombuffer(b"\x00\x02\xff\x01", dtype=np.bool_)
    t = ts.from_dlpack(raw)
    assert t.dtype == ts.bool
    assert np.asarray(t).view(np.uint8).tolist() == [0, 1, 1, 1]
    assert int(ts.sum(ts.asarray(t, dtype=ts.int64)).item()) == 3
    with pytest.raises(BufferError):
        ts.from_dlpack(np.array([True, False]), copy=False)


def test_bool_export_is_read_only():
    t = ts.asarray(np.array([True, False, True]))
    a = np.from_dlpack(t)
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, [True, False, True])
    # the legacy ABI cannot mark read-only: the consumer gets a copy
    cap = t.__dlpack__()
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)


def test_requires_grad_export_is_read_only():
    w = ts.ones(3, dtype=ts.float32).requires_grad_()
    a = np.from_dlpack(w)
    assert not a.flags.writeable


def test_read_only_producer_is_copied_or_refused():
    a = np.arange(6.0)
    a.flags.writeable = False
    t = ts.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(t), a)
    t[0] = 42.0  # writes the copy, never the read-only memory
    assert a[0] == 0.0
    with pytest.raises(BufferError):
        ts.from_dlpack(a, copy=False)
    b = np.broadcast_to(np.arange(3.0), (4, 3))  # read-only, stride 0
    tb = ts.from_dlpack(b)
    np.testing.assert_array_equal(np.asarray(tb), b)


def test_copy_true_gives_independent_memory():
    a = np.arange(4.0)
    t = ts.from_dlpack(a, copy=True)
    a[0] = 100.0
    assert np.asarray(t)[0] == 0.0
    u = ts.asarray(np.arange(3.0))
    c = np.from_dlpack(u, copy=True)
    c[0] = 5.0
    assert np.asarray(u)[0] == 0.0


def test_sparse_export_is_a_dense_copy():
    import scipy.sparse as sp

    s = ts.sparse.from_scipy(sp.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]])))
    np.testing.assert_array_equal(np.from_dlpack(s), [[0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(BufferError):
        s.__dlpack__(copy=False)


def test_unaligned_memory_is_copied():
    buf = np.zeros(33, dtype=np.uint8)
    a = np.ndarray((4,), dtype=np.float64, buffer=buf, offset=1)
    assert not a.flags.aligned
    try:
        t = ts.from_dlpack(a)
    except BufferError:
        return  # NumPy may refuse to export unaligned memory
    np.testing.assert_array_equal(np.asarray(t), a)


def test_capsule_import():
    a = np.arange(3, dtype=np.int64)
    refs = sys.getrefcount(a)  # each capsule's tensor holds one until its deleter runs
    t = ts.from_dlpack(a.__dlpack__())
    np.testing.assert_array_equal(np.asarray(t), a)
    a[0] = 7  # shared
    assert np.asarray(t)[0] == 7
    c = ts.from_dlpack(a.__dlpack__(max_version=(1, 0)), copy=True)  # copied by Tessera
    a[1] = 8
    assert np.asarray(c).tolist() == [7, 1, 2]
    versioned = a.__dlpack__(max_version=(1, 0))
    v = ts.from_dlpack(versioned)
    a[2] = 9
    assert np.asarray(v).tolist() == [7, 8, 9]
    with pytest.raises(ValueError, match="consumed"):
        ts.from_dlpack(versioned)  # a capsule is consumed once
    del v, t, versioned
    gc.collect()
    assert np.asarray(c).tolist() == [7, 1, 2]
    assert sys.getrefcount(a) == refs  # every deleter ran, and ran once


def new_capsule(pointer, name):
    """A PyCapsule holding `pointer` under `name` (a ctypes buffer the caller keeps alive)."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    return new(pointer, ctypes.addressof(name), None)


def test_foreign_capsule_is_refused():
    buf = ctypes.create_string_buffer(64)
    name = ctypes.create_string_buffer(b"not_a_dltensor")
    capsule = new_capsule(ctypes.addressof(buf), name)
    with pytest.raises(TypeError, match="DLPack"):
        ts.from_dlpack(capsule)
    del capsule


class DLVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]


@pytest.mark.parametrize("major", [1, 2])
def test_hand_made_versioned_capsule(major):
    """A producer written with ctypes: version 1 is adopted without a copy; an unknown major
    version is refused, and in both cases the producer's deleter runs exactly once and the
    capsule is marked consumed."""
    calls = []
    deleter = DELETER(lambda _: calls.append(1))
    data = (ctypes.c_double * 3)(1.0, 2.0, 3.0)
    shape = (ctypes.c_int64 * 1)(3)
    m = DLManagedTensorVersioned()
    m.version = DLVersion(major, 0)
    m.deleter = deleter
    m.dl_tensor.data = ctypes.addressof(data)
    m.dl_tensor.device = DLDevice(1, 0)
    m.dl_tensor.ndim = 1
    m.dl_tensor.dtype = DLDataType(2, 64, 1)  # float64
    m.dl_tensor.shape = shape
    name = ctypes.create_string_buffer(b"dltensor_versioned")
    capsule = new_capsule(ctypes.addressof(m), name)
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype = ctypes.c_int
    is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if major == 1:
        t = ts.from_dlpack(capsule)
        data[1] = 7.0  # shared memory
        assert np.asarray(t).tolist() == [1.0, 7.0, 3.0]
        assert calls == []
        del t
        gc.collect()
    else:
        with pytest.raises(BufferError, match="DLPack"):
            ts.from_dlpack(capsule)
    assert calls == [1]
    assert is_valid(capsule, b"used_dltensor_versioned") == 1
    del capsule


def test_bad_arguments():
    with pytest.raises(TypeError):
        ts.from_dlpack(object())
    with pytest.raises(ValueError):
        ts.from_dlpack(np.zeros(2), device="cuda:0")
    t = ts.zeros(2)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        ts.from_dlpack(np.zeros(2, dtype=np.dtype("datetime64[s]")))


def test_empty_and_zero_dims():
    for shape in [(0,), (3, 0), (0, 4, 2)]:
        a = np.zeros(shape, dtype=np.float32)
        t = ts.from_dlpack(a)
        assert t.shape == shape
        assert np.from_dlpack(t).shape == shape


def test_producer_protocols_and_keywords():
    a = np.arange(6.0)

    class Legacy:
        """A producer older than the versioned protocol: no keyword arguments."""

        def __dlpack__(self):
            return a.__dlpack__()

    t = ts.from_dlpack(Legacy())
    a[0] = 5
    assert np.asarray(t).tolist() == [5, 1, 2, 3, 4, 5]  # shared, not copied

    class Broken:
        def __dlpack__(self, **kwargs):
            raise AttributeError("inside the producer")

    with pytest.raises(AttributeError, match="inside the producer"):
        ts.from_dlpack(Broken())

    # both keywords reach the producer: copy=True copies, copy=False shares
    c = ts.from_dlpack(a, copy=True)
    s = ts.from_dlpack(a, copy=False)
    a[1] = 9
    assert np.asarray(c)[1] == 1
    assert np.asarray(s)[1] == 9


def hand_made(data, shape, strides, ndim=None, calls=None):
    """A versioned capsule over the ctypes array `data` (float64) with `shape` and `strides`
    (None: a null pointer); returns it with the objects it points into (keep them alive)."""
    calls = [] if calls is None else calls
    deleter = DELETER(lambda _: calls.append(1))
    n = len(shape) if ndim is None else ndim
    c_shape = (ctypes.c_int64 * max(len(shape), 1))(*shape) if shape is not None else None
    c_strides = (ctypes.c_int64 * max(len(strides), 1))(*strides) if strides is not None else None
    m = DLManagedTensorVersioned()
    m.version = DLVersion(1, 0)
    m.deleter = deleter
    m.dl_tensor.data = ctypes.addressof(data)
    m.dl_tensor.device = DLDevice(1, 0)
    m.dl_tensor.ndim = n
    m.dl_tensor.dtype = DLDataType(2, 64, 1)
    if c_shape is not None:
        m.dl_tensor.shape = c_shape
    if c_strides is not None:
        m.dl_tensor.strides = c_strides
    name = ctypes.create_string_buffer(b"dltensor_versioned")
    return new_capsule(ctypes.addressof(m), name), (deleter, c_shape, c_strides, m, name, calls)


def test_hand_made_descriptors_null_strides_and_scalars():
    """Null strides mean row-major for any rank; a 0-d tensor needs no shape pointer."""
    data = (ctypes.c_double * 6)(*range(6))
    capsule, keep = hand_made(data, [2, 3], None)
    t = ts.from_dlpack(capsule)
    np.testing.assert_array_equal(np.asarray(t), np.arange(6.0).reshape(2, 3))
    data[4] = 40.0  # shared
    assert np.asarray(t)[1, 1] == 40.0
    del t, capsule
    gc.collect()
    assert keep[-1] == [1]
    capsule, keep = hand_made(data, None, None, ndim=0)
    t = ts.from_dlpack(capsule)
    assert t.shape == () and float(t) == 0.0
    del t, capsule
    gc.collect()
    assert keep[-1] == [1]


@pytest.mark.parametrize(
    "shape, strides",
    [
        ([2**62, 2**62, 2**62], [1, 1, 1]),  # the reach overflows
        ([2**40, 2**40], None),  # row-major strides overflow
        ([3, 2], [2**62, 1]),  # the reach overflows at once
        ([-1, 2], [2, 1]),  # a negative dim
    ],
)
def test_malformed_descriptors_are_refused_and_released(shape, strides):
    data = (ctypes.c_double * 6)(*range(6))
    capsule, keep = hand_made(data, shape, strides)
    with pytest.raises(BufferError, match="DLPack"):
        ts.from_dlpack(capsule)
    assert keep[-1] == [1]


def test_descriptor_limits():
    data = (ctypes.c_double * 6)(*range(6))
    # An empty dim makes zeros whatever the other dims and strides say.
    capsule, keep = hand_made(data, [3, 0, 4], [2**62, 1, 2**62])
    assert ts.from_dlpack(capsule).shape == (3, 0, 4)
    assert keep[-1] == [1]
    # Too many dims (NumPy's limit is 64 too), or a negative count.
    for ndim in (65, -1):
        capsule, keep = hand_made(data, [1] * 65, [1] * 65, ndim=ndim)
        with pytest.raises(BufferError, match="ndim"):
            ts.from_dlpack(capsule)
        assert keep[-1] == [1]


def test_one_argument_entry_agrees_with_the_keyword_path():
    """`from_dlpack(x)` runs a hand-written C entry point (crates/tessera-py/src/slots.rs);
    any call with keywords, or another arity, runs pyo3's function. Both give the same tensor
    and the same error type on the same producers."""
    a = np.arange(24.0).reshape(2, 3, 4)

    class Legacy:
        def __dlpack__(self):
            return a.__dlpack__()

    producers = [a, a[:, ::-1, 1], a.astype(np.int16).T, np.zeros((0, 3)), np.ones(3, bool),
                 Legacy(), object(), 5, np.zeros(2, dtype=np.dtype("datetime64[s]"))]
    for x in producers:
        results = []
        for call in (lambda: ts.from_dlpack(x), lambda: ts.from_dlpack(x, copy=None)):
            try:
                t = call()
                results.append((t.dtype, t.shape, np.asarray(t).tolist()))
            except Exception as e:  # noqa: BLE001 - the two paths must raise alike
                results.append(type(e))
        assert results[0] == results[1], (x, results)
    a[0, 0, 0] = -1
    assert np.asarray(ts.from_dlpack(a))[0, 0, 0] == -1  # the entry point shares memory
    with pytest.raises(TypeError):
        ts.from_dlpack()
    with pytest.raises(TypeError):
        ts.from_dlpack(a, a)
    assert ts.from_dlpack.__name__ == "from_dlpack"
    assert "without a copy" in ts.from_dlpack.__doc__
