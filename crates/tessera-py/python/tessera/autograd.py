"""Reverse-mode autodiff with PyTorch's names (docs/design.md G1-G5).

Mark parameters with ``t.requires_grad_()``; every op on them records the graph (in Rust,
at the registry's one dispatch); ``loss.backward()`` accumulates ``.grad`` into the leaves.
``tessera.no_grad()`` turns recording off for a scope, and ``grad`` returns gradients
without touching ``.grad``::

    import tessera as ts
    x = ts.asarray([1.0, 2.0, 3.0]).requires_grad_()
    (x * x).sum().backward()
    x.grad            # tensor([2., 4., 6.])

Gradients are not themselves differentiable (no ``create_graph``).
"""

import contextlib
import functools

from ._native import _autograd_grad, _set_grad_enabled, is_grad_enabled

__all__ = ["backward", "enable_grad", "grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]


class _GradMode(contextlib.ContextDecorator):
    """Sets this thread's grad mode inside a ``with`` block or a decorated function."""

    _on = False

    def __enter__(self):
        self._prev = _set_grad_enabled(self._on)
        return self

    def __exit__(self, *exc):
        _set_grad_enabled(self._prev)
        return False

    def __call__(self, func):
        # A fresh context per call, so that nested and recursive calls restore correctly.
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with type(self)():
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Ops inside do not record the graph (evaluation, optimiser updates)::

        with ts.no_grad():
            y = w * 2        # y.requires_grad is False
    """

    _on = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Turns recording back on inside a ``no_grad`` scope."""

    _on = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Sets the grad mode: as a call (``set_grad_enabled(False)``) it takes effect at once;
    as a context manager it restores the previous mode on exit."""

    def __init__(self, mode):
        self._on = bool(mode)
        self._prev = _set_grad_enabled(self._on)

    def __enter__(self):
        return self

    def __call__(self, func):
        mode = self._on
        _set_grad_enabled(self._prev)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return func(*args, **kwargs)

        return wrapper


def backward(tensors, grad_tensors=None, retain_graph=False):
    """``torch.autograd.backward``: ``backward`` of each tensor, seeded with its entry of
    ``grad_tensors`` (None for one-element tensors)."""
    from ._native import Tensor

    if isinstance(tensors, Tensor):
        tensors, grad_tensors = [tensors], [grad_tensors]
    tensors = list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    grad_tensors = list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"grad_tensors has {len(grad_tensors)} entries for {len(tensors)} tensors")
    last = len(tensors) - 1
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        t.backward(g, retain_graph=retain_graph or i < last)


def grad(outputs, inputs, grad_outputs=None, retain_graph=False, allow_unused=False):
    """``torch.autograd.grad``: a tuple of the gradients of ``outputs`` with respect to
    ``inputs`` (``.grad`` is left alone). An input that the outputs do not reach raises
    RuntimeError unless ``allow_unused=True``, which gives None for it."""
    return tuple(
        _autograd_grad(outputs, inputs, grad_outputs, retain_graph=retain_graph,
                       allow_unused=allow_unused)
    )
