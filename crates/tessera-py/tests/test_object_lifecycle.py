"""The life of a `tessera.Tensor` object: not tracked by the cycle collector (slots.rs), and
released exactly once, with what it keeps alive, whichever way it was made."""

import gc
import sys
import weakref

import numpy as np
import pytest

import tessera as ts


def makers():
    """(name, function of a NumPy array giving a tensor) for the ways Python makes tensors."""
    return [
        ("asarray", ts.asarray),
        ("from_dlpack", ts.from_dlpack),
        ("view", lambda a: ts.asarray(a)[1:]),
        ("int_index", lambda a: ts.asarray(a)[0]),
        ("arith", lambda a: ts.asarray(a) + 1),
        ("reduction", lambda a: ts.asarray(a).sum(axis=0)),
        ("advanced", lambda a: ts.asarray(a)[[0, 1]]),
    ]


@pytest.mark.parametrize("name, make", makers())
def test_tensors_are_not_collector_objects(name, make):
    t = make(np.arange(12.0).reshape(3, 4))
    assert type(t).__flags__ & (1 << 14) == 0  # Py_TPFLAGS_HAVE_GC
    assert not gc.is_tracked(t)
    assert gc.get_referents(t) == []
    # The reported size has no collector header: the object alone.
    assert sys.getsizeof(t) == type(t).__basicsize__


def test_tensors_are_built_in_place():
    """`t[key]` and `from_dlpack(x)` write their tensor straight into a fresh object (slots.rs
    `new_object`) when pyo3's per-instance contents are the tensor alone, right after the
    object header. A pyo3 release that laid objects out otherwise would turn that off (pyo3's
    constructor would be used, correct but slower): this test says so."""
    from tessera import _native

    assert _native._tensor_value_offset == object.__basicsize__
    a = np.arange(24.0).reshape(2, 3, 4)
    for t in (ts.from_dlpack(a), ts.asarray(a)[1], ts.asarray(a)[:, 1:]):
        assert type(t) is ts.Tensor and not gc.is_tracked(t)
    np.testing.assert_array_equal(np.asarray(ts.from_dlpack(a)[1, 2]), a[1, 2])


@pytest.mark.parametrize("name, make", makers())
def test_each_tensor_releases_its_type_and_memory_once(name, make):
    """Making and dropping many tensors leaves the type's reference count where it was (each
    instance holds one reference to its heap type and gives it back once), and an imported
    array is released when the last tensor on it goes."""
    a = np.arange(12.0).reshape(3, 4)
    tp = type(ts.zeros(1))
    for _ in range(10):  # first calls may fill caches that refer to the type
        make(a)
    gc.collect()
    before = sys.getrefcount(tp)
    for _ in range(2000):
        make(a)
    gc.collect()
    assert sys.getrefcount(tp) == before
    # A producer kept alive by a zero-copy import is released with the tensor, at once (no
    # deferred release waiting for the next call into the module).
    owner = np.arange(5.0)
    probe = weakref.ref(owner)
    t = ts.from_dlpack(owner)
    v = t[1:]
    del owner, t
    assert probe() is not None
    del v
    assert probe() is None


def test_a_tensor_in_a_reference_cycle_is_freed_with_it():
    """A cycle through Python objects that hold a tensor is collected, tensor included (the
    tensor itself holds no Python references, so it is never part of the cycle)."""

    class Holder:
        pass

    owner = np.arange(4.0)
    probe = weakref.ref(owner)
    h = Holder()
    h.me = h
    h.t = ts.from_dlpack(owner)
    del owner, h
    gc.collect()
    assert probe() is None
