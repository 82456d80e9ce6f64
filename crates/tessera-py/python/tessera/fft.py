"""The Array API's ``fft`` extension (revision 2024.12), computed by the Rust core on rustfft
and realfft (``Tensor::fft`` and friends, docs/design.md F1-F4); this module checks the
standard's signatures and binds them.

``norm`` is "backward" (the default: the inverse scaled by 1/n), "ortho" (1/sqrt(n) both ways)
or "forward". Single-precision input (float32, complex64) gives complex64 / float32 results,
everything else complex128 / float64; integer input is converted, as NumPy does.
"""

import builtins as _builtins

from . import _native
from ._namespace import _array

__all__ = [
    "fft", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifftn", "ifftshift", "ihfft",
    "irfft", "irfftn", "rfft", "rfftfreq", "rfftn",
]


def _n(n):
    if n is None:
        return None
    if isinstance(n, _builtins.bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int or None, got {n!r}")
    if n < 1:
        raise ValueError(f"invalid number of data points ({n})")
    return n


def _axis(axis):
    if isinstance(axis, _builtins.bool) or not isinstance(axis, int):
        raise TypeError(f"axis must be an int, got {axis!r}")
    return axis


def _seq(v, what):
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, _builtins.bool):
        return [v]
    v = list(v)
    if any(isinstance(i, _builtins.bool) or not isinstance(i, int) for i in v):
        raise TypeError(f"{what} must be a sequence of ints")
    return v


def _one(kind):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        return _native._transform(kind, _array(kind, x), _n(n), _axis(axis), norm)

    f.__name__ = f.__qualname__ = kind
    return f


def _nd(kind):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        s = _seq(s, "s")
        if s is not None and any(n < 1 for n in s):
            raise ValueError(f"invalid number of data points in s={s}")
        return _native._transform_nd(kind, _array(kind, x), s, _seq(axes, "axes"), norm)

    f.__name__ = f.__qualname__ = kind
    return f


fft = _one("fft")
fft.__doc__ = "The discrete Fourier transform along ``axis`` (``n`` points: cut or zero-padded)."
ifft = _one("ifft")
ifft.__doc__ = "The inverse discrete Fourier transform along ``axis``."
rfft = _one("rfft")
rfft.__doc__ = "The transform of real input: the ``n // 2 + 1`` non-negative frequencies."
irfft = _one("irfft")
irfft.__doc__ = "The inverse of ``rfft``: ``n`` real values (default ``2 * (m - 1)``)."
hfft = _one("hfft")
hfft.__doc__ = "The transform of a Hermitian-symmetric signal (its first half given): real."
ihfft = _one("ihfft")
ihfft.__doc__ = "The inverse of ``hfft``."
fftn = _nd("fftn")
fftn.__doc__ = "The n-dimensional transform over ``axes`` with lengths ``s``."
ifftn = _nd("ifftn")
ifftn.__doc__ = "The inverse of ``fftn``."
rfftn = _nd("rfftn")
rfftn.__doc__ = "The n-dimensional transform of real input (``rfft`` over the last axis)."
irfftn = _nd("irfftn")
irfftn.__doc__ = "The inverse of ``rfftn``."


def _freq(name, n, d, dtype, device, half):
    _native._check_device(device)
    if isinstance(n, _builtins.bool) or not isinstance(n, int):
        raise TypeError(f"{name}: n must be an int")
    if n < 1:
        raise ValueError(f"{name}: n must be positive, got {n}")
    return _native._fftfreq(n, float(d), dtype, half)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``."""
    return _freq("fftfreq", n, d, dtype, device, False)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The non-negative sample frequencies of ``rfft`` of ``n`` points."""
    return _freq("rfftfreq", n, d, dtype, device, True)


def fftshift(x, /, *, axes=None):
    """The zero frequency moved to the centre of ``axes`` (all by default)."""
    return _native._fftshift(_array("fftshift", x), _seq(axes, "axes"), False)


def ifftshift(x, /, *, axes=None):
    """The inverse of ``fftshift``."""
    return _native._fftshift(_array("ifftshift", x), _seq(axes, "axes"), True)
