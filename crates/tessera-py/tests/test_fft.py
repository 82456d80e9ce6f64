"""`tessera.fft` against `numpy.fft` (pocketfft), with Hypothesis: every function, every
`norm`, odd and prime lengths, `n` cutting or padding, any axis, float32/complex64 keeping
single precision, and the errors of bad arguments (docs/design.md F1-F4)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts

NORMS = ["backward", "ortho", "forward"]
lengths = st.sampled_from([1, 2, 3, 5, 7, 8, 12, 13, 16, 31, 97])


def close(got, want, single=False):
    g = np.asarray(got)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    tol = 2e-4 if single else 1e-10
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol * scale)


@st.composite
def signals(draw, complex_=True):
    dtype = draw(st.sampled_from(["float64", "float32"] + (["complex128", "complex64"] if complex_ else [])))
    shape = draw(st.lists(lengths, min_size=1, max_size=3))
    a = draw(hnp.arrays(dtype, shape, elements=st.floats(-4, 4, width=32)))
    return a, draw(st.integers(-a.ndim, a.ndim - 1))


@given(signals(), st.sampled_from(NORMS), st.none() | lengths)
def test_one_axis_transforms_match_numpy(sig, norm, n):
    a, axis = sig
    single = a.dtype in (np.float32, np.complex64)
    for name in ("fft", "ifft", "hfft"):
        if name == "hfft" and n is None and a.shape[axis] == 1:
            continue  # NumPy refuses the default n = 0 too (checked below)
        want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
        close(getattr(ts.fft, name)(ts.asarray(a), n=n, axis=axis, norm=norm), want, single)
    if a.dtype.kind == "f":
        for name in ("rfft", "ihfft"):
            want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
            close(getattr(ts.fft, name)(ts.asarray(a), n=n, axis=axis, norm=norm), want, single)
    spectrum = np.fft.rfft(a.real, axis=axis).astype(np.complex64 if single else np.complex128)
    if n is not None or spectrum.shape[axis] > 1:
        want = np.fft.irfft(spectrum, n=n, axis=axis, norm=norm)
        close(ts.fft.irfft(ts.asarray(spectrum), n=n, axis=axis, norm=norm), want, single)


@given(signals(), st.sampled_from(NORMS), st.data())
def test_n_dimensional_transforms_match_numpy(sig, norm, data):
    a, _ = sig
    axes = data.draw(st.none() | st.lists(st.integers(0, a.ndim - 1), min_size=1,
                                          max_size=a.ndim, unique=True))
    s = None
    if axes is not None and data.draw(st.booleans()):
        s = [data.draw(lengths) for _ in axes]
    single = a.dtype in (np.float32, np.complex64)
    for name in ("fftn", "ifftn"):
        want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
        close(getattr(ts.fft, name)(ts.asarray(a), s=s, axes=axes, norm=norm), want, single)
    if a.dtype.kind == "f":
        want = np.fft.rfftn(a, s=s, axes=axes, norm=norm)
        got = ts.fft.rfftn(ts.asarray(a), s=s, axes=axes, norm=norm)
        close(got, want, single)
        back_s = s if s is not None else [a.shape[i] for i in (axes or range(a.ndim))]
        close(ts.fft.irfftn(got, s=back_s, axes=axes, norm=norm),
              np.fft.irfftn(want, s=back_s, axes=axes, norm=norm), single)


@given(st.integers(1, 40), st.floats(0.1, 10), st.sampled_from(["float32", "float64"]))
def test_frequencies_and_shifts_match_numpy(n, d, dtype):
    close(ts.fft.fftfreq(n, d=d, dtype=getattr(ts, dtype)), np.fft.fftfreq(n, d=d).astype(dtype),
          dtype == "float32")
    close(ts.fft.rfftfreq(n, d=d), np.fft.rfftfreq(n, d=d))
    a = np.arange(n * 3.0).reshape(3, n)
    for axes in (None, 0, 1, (0, 1)):
        close(ts.fft.fftshift(ts.asarray(a), axes=axes), np.fft.fftshift(a, axes=axes))
        close(ts.fft.ifftshift(ts.asarray(a), axes=axes), np.fft.ifftshift(a, axes=axes))


def test_non_contiguous_and_integer_input():
    a = np.arange(60.0).reshape(6, 10)[::2, ::-3]
    close(ts.fft.fft(ts.asarray(np.arange(60.0).reshape(6, 10))[::2, ::-3]), np.fft.fft(a))
    close(ts.fft.fft(ts.asarray([1, 2, 3])), np.fft.fft(np.array([1, 2, 3])))
    prime = np.random.default_rng(1).random(100003)
    close(ts.fft.fft(ts.asarray(prime)), np.fft.fft(prime))


@pytest.mark.parametrize("call,exc", [
    (lambda: ts.fft.fft(ts.ones(4), n=0), ValueError),
    (lambda: ts.fft.fft(ts.ones(4), axis=1), IndexError),
    (lambda: ts.fft.fft(ts.ones(4), norm="unitary"), ValueError),
    (lambda: ts.fft.fft(ts.ones(4), n=2.5), TypeError),
    (lambda: ts.fft.rfft(ts.asarray([1j])), TypeError),
    (lambda: ts.fft.irfft(ts.ones(1, dtype=ts.complex128)), ValueError),
    (lambda: ts.fft.fftn(ts.ones((2, 2)), s=[2, 2, 2], axes=[0, 1]), ValueError),
    (lambda: ts.fft.fftn(ts.ones((2, 2)), axes=[0, 0]), ValueError),
    (lambda: ts.fft.fftfreq(0), ValueError),
    (lambda: ts.fft.fftfreq(4, device="gpu"), ValueError),
    (lambda: ts.fft.fft(3.0), TypeError),
])
def test_bad_arguments_raise_the_usual_errors(call, exc):
    with pytest.raises(exc):
        call()
