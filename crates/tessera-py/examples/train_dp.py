"""Data-parallel training from Python (docs/design.md D12): an MLP on two interleaved
spirals, the batch split over the ranks (``'S(0)'``) and the parameters broadcast (``'B'``);
``DistOptimizer.backward`` all-reduces the gradients during backward. Prints the loss every
few steps and each rank's throughput.

    mpirun -np 4 python crates/tessera-py/examples/train_dp.py     # 4 MPI processes
    python crates/tessera-py/examples/train_dp.py                  # alone (1 rank)

The wheel must be built with the ``mpi`` feature to run under ``mpirun``:
``MATURIN_PEP517_ARGS="--features mpi" pip install ./crates/tessera-py``.
"""

import sys
import time

import numpy as np

import tessera.dist as dist


def spirals(n, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.25, 3.0 * np.pi, n)
    label = rng.integers(0, 2, n)
    r = t / (3.0 * np.pi)
    angle = t + np.pi * label
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1) + rng.normal(0, 0.02, (n, 2))
    return x.astype(np.float32), np.eye(2, dtype=np.float32)[label]


def main(steps=60, batch=256, hidden=32):
    mesh = dist.Mesh()
    rng = np.random.default_rng(1)  # the same initial weights on every rank
    dims = [2, hidden, hidden, 2]
    params = []
    for a, b in zip(dims, dims[1:]):
        w = rng.normal(0, np.sqrt(2.0 / a), (a, b)).astype(np.float32)
        params.append(dist.GlobalTensor.from_logical(w, "B", mesh).requires_grad_())
        params.append(dist.GlobalTensor.from_logical(np.zeros(b, np.float32), "B", mesh).requires_grad_())
    opt = dist.DistOptimizer(params, "adam", lr=0.02)
    losses = []
    start = None
    for step in range(steps):
        if step == 1:
            start = time.perf_counter()
        x, t = spirals(batch, seed=step)  # every rank draws the step's batch, keeps its rows
        x = dist.GlobalTensor.from_logical(x, "S(0)", mesh)
        t = dist.GlobalTensor.from_logical(t, "S(0)", mesh)
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = dist.relu(h)
        loss = dist.cross_entropy(h, t)
        opt.zero_grad()
        opt.backward(loss)
        opt.step()
        losses.append(float(np.asarray(loss.to_full()).reshape(())))
    secs = time.perf_counter() - start
    if dist.rank() == 0:
        print(f"data-parallel MLP 2-{hidden}-{hidden}-2 on {dist.size()} ranks")
        for s in range(0, steps, max(1, steps // 6)):
            print(f"  step {s:>4}  loss {losses[s]:.4f}")
        print(f"  step {steps - 1:>4}  loss {losses[-1]:.4f}")
    per_rank = (steps - 1) * batch / secs / dist.size()
    print(f"rank {dist.rank()}: {per_rank:.0f} samples/s, {secs / (steps - 1) * 1e3:.2f} ms a step")
    if not losses[-1] < losses[0]:
        print("the loss did not fall", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(steps=int(sys.argv[1]) if len(sys.argv) > 1 else 60)
