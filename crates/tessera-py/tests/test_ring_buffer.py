"""RingBuffer against the seed's pseudocode written in NumPy (seed 000, docs/design.md O5)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts


def seed_step(buffer, inp, axis):
    """The seed's two loops: shift left by N along `axis`, then write the input at the end."""
    n, b = inp.shape[axis], buffer.shape[axis]
    moved = np.moveaxis(buffer, axis, 0)
    src = np.moveaxis(inp, axis, 0)
    for i in range(n, b):
        moved[i - n] = moved[i]
    for i in range(n):
        moved[i + b - n] = src[i]
    return buffer


@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=3),
    st.data(),
    st.integers(0, 6),
    st.lists(st.integers(0, 4), min_size=1, max_size=8),
)
def test_ring_buffer_matches_seed_pseudocode(shape, data, length, ns):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    rb = ts.RingBuffer(shape, axis, length, dtype=ts.float32)
    ref_shape = list(shape)
    ref_shape[ax] = length
    ref = np.zeros(ref_shape, np.float32)
    counter = 0
    for n in ns:
        in_shape = list(shape)
        in_shape[ax] = n
        x = (np.arange(np.prod(in_shape)) + counter).astype(np.float32).reshape(in_shape)
        counter += x.size
        if n > length:
            with pytest.raises(ValueError):
                rb.push(x)
            continue
        window = rb.push(x)
        seed_step(ref, x, ax)
        np.testing.assert_array_equal(np.asarray(window), ref)
        np.testing.assert_array_equal(np.asarray(rb.window), ref)


def test_ring_buffer_api_and_errors():
    rb = ts.RingBuffer((2, 3), axis=0, length=4, dtype="int64")
    assert (rb.length, rb.axis, rb.shape, rb.dtype) == (4, 0, [4, 3], ts.int64)
    w = rb.push([[1, 2, 3]])
    assert np.asarray(w).tolist() == [[0, 0, 0]] * 3 + [[1, 2, 3]]
    with pytest.raises(TypeError):
        rb.push(ts.ones((1, 3), dtype=ts.float32))  # dtype mismatch
    with pytest.raises(ValueError):
        rb.push(np.ones((1, 4)))  # non-axis dim mismatch
    with pytest.raises(IndexError):
        ts.RingBuffer((2, 3), axis=5, length=2)
    assert "RingBuffer" in repr(rb)


def test_ring_buffer_op_by_name_mutates_buffer():
    buf = ts.zeros(4, dtype=ts.float32)
    out = ts.invoke("ring_buffer", ts.asarray(np.array([1.0, 2.0], np.float32)), buf, axis=0)
    np.testing.assert_array_equal(np.asarray(out), [0, 0, 1, 2])
    np.testing.assert_array_equal(np.asarray(buf), [0, 0, 1, 2])
