"""Training steps: Tessera against PyTorch CPU eager, in one process (issue 16's last two
benchmark lines). Prints a table, then ``ratio NAME VALUE`` lines (Tessera time / PyTorch
time; below 1 is faster):

- ``sparse_logreg_step_time_vs_torch``: one step of logistic regression on CSR features
  (1 000 000 features, batch 512, 50 non-zeros a row, float32): Tessera's ``dot(csr, w) + b``
  with a row_sparse gradient and lazy Adam, against PyTorch's usual sparse path,
  ``EmbeddingBag(sparse=True, mode="sum")`` with per-sample weights and ``SparseAdam`` (the
  bias with ``Adam``). Loss: mean logistic loss. One thread.
- ``mlp_train_step_time_vs_torch``: one step of an MLP 784-512-512-10 with ReLU (batch 256,
  float32): forward, softmax cross-entropy, backward, SGD with momentum. At one thread and at
  two (``..._1t``, ``..._2t``).

Thread counts: the script runs itself once per row and library in a child process with
``RAYON_NUM_THREADS`` (Tessera's pool, fixed at import) and ``torch.set_num_threads`` set to
the same number (one library per process: PyTorch's OpenMP workers spin after its ops and
would take a core from Tessera's pool). Batches vary between steps (8 different ones, in turn). Each figure is the
median of the timed steps after warm-up.

PyTorch is not a dependency of Tessera: without it the script prints one line saying so and
exits 0. Install it in a separate environment with the Tessera wheel
(``pip install torch numpy scipy ./crates/tessera-py``).

Run: ``python crates/tessera-py/bench/bench_training.py``
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

FEATURES, BATCH, NNZ = 1_000_000, 512, 50
MLP_DIMS, MLP_BATCH = [784, 512, 512, 10], 256


def median_time(step, reps):
    for i in range(3):
        step(i)
    times = []
    for i in range(reps):
        t0 = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def sparse_batches(rng, n=8):
    out = []
    for _ in range(n):
        cols = rng.integers(0, FEATURES, (BATCH, NNZ))
        cols.sort(axis=1)
        vals = rng.random((BATCH, NNZ), dtype=np.float32) + 0.5
        m = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, BATCH * NNZ + 1, NNZ)),
                          shape=(BATCH, FEATURES))
        m.sum_duplicates()
        y = np.where(rng.random(BATCH) < 0.5, 1.0, -1.0).astype(np.float32)
        out.append((m, y))
    return out


def tessera_sparse_step(batches):
    import tessera as ts

    data = [(ts.sparse.from_scipy(m), ts.asarray(y[:, None])) for m, y in batches]
    w = ts.zeros((FEATURES, 1), dtype=ts.float32).requires_grad_()
    b = ts.zeros(1, dtype=ts.float32).requires_grad_()
    opt = ts.optim.Adam([w, b], lr=0.01)
    zero = ts.zeros(1, dtype=ts.float32)

    def step(i):
        x, y = data[i % len(data)]
        u = -(y * (ts.ops.dot(x, w) + b))
        loss = (ts.ops.maximum(u, zero) + ts.ops.log(ts.ops.exp(-abs(u)) + 1.0)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def torch_sparse_step(batches):
    import torch

    data = []
    for m, y in batches:
        data.append((torch.from_numpy(m.indices.astype(np.int64)),
                     torch.from_numpy(m.indptr[:-1].astype(np.int64)),
                     torch.from_numpy(m.data.astype(np.float32)),
                     torch.from_numpy(y)))
    emb = torch.nn.EmbeddingBag(FEATURES, 1, mode="sum", sparse=True)
    torch.nn.init.zeros_(emb.weight)
    b = torch.zeros(1, requires_grad=True)
    opt_w = torch.optim.SparseAdam(list(emb.parameters()), lr=0.01)
    opt_b = torch.optim.Adam([b], lr=0.01)

    def step(i):
        idx, offsets, vals, y = data[i % len(data)]
        z = emb(idx, offsets, per_sample_weights=vals)[:, 0] + b
        loss = torch.nn.functional.softplus(-y * z).mean()
        opt_w.zero_grad()
        opt_b.zero_grad()
        loss.backward()
        opt_w.step()
        opt_b.step()

    return step


def mlp_batches(rng, n=8):
    out = []
    for _ in range(n):
        x = rng.standard_normal((MLP_BATCH, MLP_DIMS[0]), dtype=np.float32)
        labels = rng.integers(0, MLP_DIMS[-1], MLP_BATCH)
        out.append((x, labels))
    return out


def mlp_weights(rng):
    ws = []
    for a, b in zip(MLP_DIMS, MLP_DIMS[1:]):
        ws.append((rng.standard_normal((a, b), dtype=np.float32) * np.float32(np.sqrt(2 / a)),
                   np.zeros(b, np.float32)))
    return ws


def tessera_mlp_step(batches, weights):
    import tessera as ts

    eye = np.eye(MLP_DIMS[-1], dtype=np.float32)
    data = [(ts.asarray(x), ts.asarray(eye[t])) for x, t in batches]
    params = []
    for w, b in weights:
        params += [ts.asarray(w).requires_grad_(), ts.asarray(b).requires_grad_()]
    opt = ts.optim.SGD(params, lr=0.01, momentum=0.9)

    def step(i):
        x, onehot = data[i % len(data)]
        for k in range(0, len(params), 2):
            x = ts.ops.matmul(x, params[k]) + params[k + 1]
            if k + 2 < len(params):
                x = ts.ops.relu(x)
        shifted = x - x.detach().max(axis=1, keepdims=True)
        logp = shifted - ts.ops.log(ts.ops.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(onehot * logp).sum(axis=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def torch_mlp_step(batches, weights):
    import torch

    data = [(torch.from_numpy(x), torch.from_numpy(t)) for x, t in batches]
    layers = []
    for k, (w, b) in enumerate(weights):
        lin = torch.nn.Linear(*w.shape)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        layers.append(lin)
        if k + 1 < len(weights):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(i):
        x, t = data[i % len(data)]
        loss = loss_fn(model(x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def child(threads, bench, lib):
    """Prints the median step time of ``lib`` on ``bench`` at ``threads`` threads. Each library
    runs in a process of its own: PyTorch's OpenMP workers keep spinning after its ops and
    would take the second core from Tessera's pool if both ran in one process."""
    rng = np.random.default_rng(0)
    if lib == "torch":
        import torch

        torch.set_num_threads(threads)
    if bench == "sparse":
        make = tessera_sparse_step if lib == "tessera" else torch_sparse_step
        step = make(sparse_batches(rng))
    else:
        batches, weights = mlp_batches(rng), mlp_weights(rng)
        make = tessera_mlp_step if lib == "tessera" else torch_mlp_step
        step = make(batches, weights)
    print(f"time {median_time(step, 15)}")


def measure(threads, bench, lib):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--child", str(threads), bench, lib],
                         env=env, check=True, capture_output=True, text=True).stdout
    return float(next(line.split()[1] for line in out.splitlines() if line.startswith("time ")))


def main():
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: skipping the sparse_logreg_step_time_vs_torch and "
              "mlp_train_step_time_vs_torch lines (pip install torch to run them)")
        return
    rows = []
    for name, threads, bench in [
        ("sparse_logreg_step_time_vs_torch", 1, "sparse"),
        ("mlp_train_step_time_vs_torch_1t", 1, "mlp"),
        ("mlp_train_step_time_vs_torch_2t", 2, "mlp"),
    ]:
        rows.append((name, measure(threads, bench, "tessera"), measure(threads, bench, "torch")))
    print(f"PyTorch {torch.__version__}; each row: both libraries on the same thread count, "
          "each in its own process")
    print(f"{'benchmark':<40} {'tessera ms':>11} {'torch ms':>10} {'ratio':>7}")
    for name, a, b in rows:
        print(f"{name:<40} {a * 1e3:>11.2f} {b * 1e3:>10.2f} {a / b:>7.2f}")
    for name, a, b in rows:
        print(f"ratio {name} {a / b:.3f}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        main()
