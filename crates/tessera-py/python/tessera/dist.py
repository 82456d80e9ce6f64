"""Global tensors across ranks, their gradients, and parallel training (docs/design.md
D10-D12): OneFlow's SBP (split ``'S(k)'``, broadcast ``'B'``, partial ``'P'``) from Python.

The ranks are MPI processes: ``mpirun -np 4 python script.py`` with a wheel built with the
``mpi`` feature (``MATURIN_PEP517_ARGS="--features mpi" pip install ./crates/tessera-py``);
MPI starts through the Rust backend on first use and finalises at exit. Without ``mpirun``
the process is a world of one rank, so the same script runs alone::

    import numpy as np, tessera as ts, tessera.dist as dist
    mesh = dist.Mesh()                                    # a line of every rank
    w = dist.GlobalTensor.from_logical(np.ones((4, 2)), "B", mesh).requires_grad_()
    x = dist.GlobalTensor.from_logical(np.ones((8, 4)), "S(0)", mesh)   # the batch, split
    loss = dist.sum(x @ w)
    opt = dist.DistOptimizer([w], "sgd", lr=0.1)
    opt.backward(loss)        # w.grad is P(sum) until reduced; backward all-reduces it
    opt.step()

Gradients follow the dual placement: a ``'B'`` tensor's gradient is ``'P(sum)'``, an
``'S(k)'`` one's ``'S(k)'``, a ``'P(sum)'`` one's ``'B'``.
"""

import atexit

from . import _native
from ._native import DistOptimizer, GlobalTensor, Mesh

__all__ = [
    "DistOptimizer",
    "GlobalTensor",
    "Mesh",
    "add",
    "backward",
    "cross_entropy",
    "divide",
    "exp",
    "expand",
    "invoke",
    "log",
    "matmul",
    "max",
    "mean",
    "min",
    "mpi_available",
    "multiply",
    "negative",
    "rank",
    "relu",
    "reshape",
    "size",
    "subtract",
    "sum",
    "tanh",
]

atexit.register(_native.dist_finalize)


def rank():
    """This process's rank in the world (0 without ``mpirun``)."""
    return _native.dist_world_info()[0]


def size():
    """The number of ranks (1 without ``mpirun``)."""
    return _native.dist_world_info()[1]


def mpi_available():
    """Whether this build runs under ``mpirun`` (the wheel's ``mpi`` feature)."""
    return _native.dist_mpi_available()


def _render(v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        items = [str(int(x)) for x in v]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return str(v)


def invoke(name, inputs, **params):
    """Global op ``name`` (an op of ``tessera.ops``) on global tensors, with its parameters:
    the shards are boxed to the cheapest SBP signature and the local op runs on each rank."""
    return _native.dist_invoke(name, list(inputs), {k: _render(v) for k, v in params.items()})


def _unary(name):
    def f(x):
        return invoke(name, [x])

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` of a global tensor."
    return f


def _binary(name):
    def f(a, b):
        return invoke(name, [a, b])

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` of two global tensors, broadcasting."
    return f


exp, log, relu, negative, tanh = (_unary(n) for n in ("exp", "log", "relu", "negative", "tanh"))
add, subtract, multiply, divide = (
    _binary(n) for n in ("add", "subtract", "multiply", "divide")
)


def matmul(a, b):
    """The matrix product of two 2-D global tensors."""
    return invoke("matmul", [a, b])


def _reduction(name):
    def f(x, axis=None, keepdims=False):
        if isinstance(axis, int):
            axis = (axis,)
        return invoke(name, [x], axis=axis, keepdims=keepdims)

    f.__name__ = name
    f.__doc__ = f"``{name}`` over ``axis`` (all axes when None) of a global tensor."
    return f


sum, mean, max, min = (_reduction(n) for n in ("sum", "mean", "max", "min"))  # noqa: A001


def reshape(x, shape):
    """The logical tensor reshaped (splits survive where the layout allows)."""
    return invoke("reshape", [x], shape=tuple(shape))


def expand(x, sizes):
    """PyTorch's ``expand`` of the logical tensor (a stride-0 view on each rank)."""
    return invoke("expand", [x], sizes=tuple(sizes))


def backward(loss):
    """Backward from a one-element global loss (collective)."""
    loss.backward()


def cross_entropy(logits, one_hot):
    """Mean softmax cross-entropy of ``[batch, classes]`` logits against one-hot targets."""
    return _native.dist_cross_entropy(logits, one_hot)
