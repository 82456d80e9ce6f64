"""Optimisers over leaf tensors that require a gradient (docs/design.md G6), with PyTorch's
names: ``SGD(params, lr, momentum=0)`` and ``Adam(params, lr=1e-3, betas=(0.9, 0.999),
eps=1e-8)``, each with ``step()``, ``zero_grad()``, ``state_dict()`` and
``load_state_dict()``. The updates run in Rust with the GIL released. A ``row_sparse``
gradient (from ``ops.embedding`` or ``ops.dot(csr, W)``) updates only its rows, and for Adam
only their moments: MXNet's lazy update, as PyTorch's ``SparseAdam``::

    opt = ts.optim.Adam([w], lr=0.01)
    loss = ...; loss.backward(); opt.step(); opt.zero_grad()
"""

from ._native import SGD, Adam, Optimizer

__all__ = ["Adam", "Optimizer", "SGD"]
