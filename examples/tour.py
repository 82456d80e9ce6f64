"""The Tessera tour from Python: the counterpart of `crates/tessera/examples/tour.rs`.

Run after `pip install ./crates/tessera-py`: `python examples/tour.py`.
"""

import warnings

import numpy as np

import tessera as ts


def section(title):
    print(f"\n=== {title} ===")


def main():
    section("tensors and printing")
    for d in [ts.bool, ts.uint8, ts.int8, ts.int32, ts.int64, ts.float16, ts.bfloat16, ts.float32, ts.float64]:
        print(f"{d.name:<9}", repr(ts.arange(6, dtype=d)))
    grid = ts.asarray(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5)
    print("asarray of a 3x4 float32 NumPy array:")
    print(grid)
    print("shape", grid.shape, "strides (bytes)", grid.strides, "dtype", grid.dtype)
    print("a large tensor prints summarised like NumPy:", ts.arange(5000))

    section("views and zero-copy NumPy interop (seed 002)")
    t = ts.arange(24).reshape(2, 3, 4)
    v = t[1, ::-1, None, 1:3]
    print("t[1, ::-1, None, 1:3] =")
    print(v)
    print("view shape", v.shape, "strides", v.strides, "shares storage:", v.shares_storage(t))
    a = np.asarray(v)
    print("np.asarray(view) shares memory with np.asarray(t):", np.shares_memory(a, np.asarray(t)))
    a[0, 0, 0] = -1
    print("a NumPy write through the export reaches t[1, 2, 1]:", t[1, 2, 1].item())
    print("t.T.contiguous() is a blocked-transpose copy:", t.T.contiguous().is_contiguous())

    section("the INT64 index encoding (CreateView)")
    key = (slice(None, None, -2), Ellipsis, None, 0)
    code = ts.encode_index(key)
    print("key (::-2, ..., None, 0) encodes as", code)
    cv = ts.create_view(t, np.array(code, dtype=np.int64))
    print("create_view(t, code) == t[key]:", np.array_equal(np.asarray(cv), np.asarray(t[key])))

    section("expand / repeat / tile (seed 001)")
    col = ts.asarray([[1], [2], [3]])
    e = col.expand(2, 3, 4)
    print("expand((3,1) -> (2,3,4)): strides", e.strides, "(stride 0 = no copy)")
    print("repeat(2, 2):")
    print(col.repeat(2, 2))
    print("tile([1, 2], (2, 3)):")
    print(ts.tile(ts.asarray([1, 2]), (2, 3)))
    try:
        col.repeat(-1, 1)
    except ValueError as err:
        print("negative repeat count -> ValueError:", err)

    section("in-place writes through a view")
    m = ts.zeros((3, 4), dtype=ts.float32)
    inner = m[1:, ::2]
    inner += 5
    m[0] = ts.asarray([1, 2, 3, 4])
    m[:, -1] *= 10
    print(m)
    try:
        m.expand(2, 3, 4)[:] = 1
    except ValueError as err:
        print("writing into an expanded view -> ValueError:", err)

    section("arithmetic, promotion, reductions")
    i = ts.arange(4, dtype=ts.int32)
    f = ts.asarray(np.array([0.5, 1.5, 2.5, 3.5], np.float32))
    print("int32 + float32 ->", (i + f).dtype, "(NumPy 2 rules)")
    print("float32 * 2.5 ->", (f * 2.5).dtype, "(Python scalars are weak)")
    print("2 - i =", 2 - i, "; i > 1 =", i > 1)
    print("sum over axis 1 of arange(6).reshape(2, 3):", ts.sum(ts.arange(6).reshape(2, 3), axis=1))

    section("linear algebra and Fourier transforms (the Array API extensions)")
    a = ts.asarray([[4.0, 2.0], [2.0, 3.0]])
    print("solve([[4, 2], [2, 3]], [2, 1]) =", ts.linalg.solve(a, ts.asarray([2.0, 1.0])))
    w, v = ts.linalg.eigh(a)
    print("eigenvalues", w, "; det", float(ts.linalg.det(a)), "; cholesky", ts.linalg.cholesky(a))
    try:
        ts.linalg.inv(ts.asarray([[1.0, 2.0], [2.0, 4.0]]))
    except np.linalg.LinAlgError as e:
        print("inv of a singular matrix raises numpy.linalg.LinAlgError:", e)
    spectrum = ts.fft.rfft(ts.cos(2 * ts.pi * 3 * ts.arange(16) / 16))
    print("rfft of a 3-cycle cosine over 16 samples: |X| peaks at bin",
          int(ts.argmax(ts.abs(spectrum))))

    section("ops by name (registry)")
    names = [op["name"] for op in ts.list_ops()]
    print(len(names), "ops:", ", ".join(names))
    x = ts.asarray(np.array([0.0, 1.0, 2.0], np.float32))
    print("tessera.ops.quadratic(x, a=1, b=2, c=3) =", ts.ops.quadratic(x, a=1, b=2, c=3))
    print("tessera.invoke('tile', [1, 2], reps=(2,)) =", ts.invoke("tile", [1, 2], reps=(2,)))
    print("docstring:", ts.ops.quadratic.__doc__.splitlines()[0])

    section("the storage-fallback warning (seed 003)")
    sparse_like = x[None, :].tostype("csr")  # c != 0 has no csr kernel: the fallback runs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ts.ops.quadratic(sparse_like, a=1, b=2, c=3)
    for w in caught:
        print(f"{w.category.__name__}: {str(w.message).splitlines()[0]} (op quadratic)")
    print("fallbacks so far:", ts.fallback_count())

    section("sparse tensors: csr, row_sparse, SciPy interop (seed 003)")
    import scipy.sparse as sp

    c = ts.asarray(np.array([[0.0, 1.0], [2.0, 0.0]])).tostype("csr")
    q = ts.ops.quadratic(c, a=1, b=2, c=0)
    print(f"quadratic(csr, a=1, b=2, c=0) -> {q.stype}: {np.asarray(q).tolist()}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = ts.ops.quadratic(c, a=1, b=2, c=3)
    print(f"quadratic(csr, a=1, b=2, c=3) -> {d.stype} (warned: {len(caught)})")
    m = sp.random(4, 3, density=0.5, format="csr", random_state=0)
    t = ts.sparse.from_scipy(m)
    v = np.ones(3)
    print("dot(csr, ones) matches SciPy:", np.allclose(np.asarray(ts.sparse.dot(t, v)), m @ v))
    print("dot(csr.T, ...) ->", ts.sparse.dot(t, np.ones((4, 2)), transpose_a=True).stype)
    print("round trip to SciPy:", (t.to_scipy() != m).nnz == 0)
    try:
        ts.sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 3))
    except ValueError as e:
        print("ValueError:", e)

    section("a ring buffer (seed 000)")
    rb = ts.RingBuffer((1, 2), axis=0, length=3, dtype=ts.int64)
    for rows in [[[1, 1], [2, 2]], [[3, 3]], [[4, 4], [5, 5]]]:
        w = rb.push(rows)
        print(f"push {rows} -> window {w.tolist()}")
    print(rb)

    section("gradients and training (autograd, row_sparse gradients, lazy Adam)")
    x = ts.asarray([1.0, 2.0, 3.0]).requires_grad_()
    y = (x * x).sum()
    y.backward()
    print(f"y = sum(x*x) = {float(y)}, grad_fn {y.grad_fn!r}, x.grad = {x.grad.tolist()}")
    with ts.no_grad():
        print("under no_grad, (x * 2).requires_grad =", (x * 2).requires_grad)
    train_sparse_logreg()
    train_mlp()


def bag_of_words(rng, docs, features, words):
    """CSR documents of word counts (a heavy head of frequent words) and ±1 labels from a
    hidden linear rule on the 5 000 most frequent words, 5% flipped."""
    import scipy.sparse as sp

    hidden = np.where(rng.random(5000) < 0.5, rng.uniform(-1, 1, 5000), 0.0)
    ids = np.minimum(rng.zipf(1.3, (docs, words)) - 1, features - 1)
    rows = np.repeat(np.arange(docs), words)
    m = sp.csr_matrix((np.ones(docs * words, np.float32), (rows, ids.ravel())), shape=(docs, features))
    m.sum_duplicates()
    score = m[:, :5000] @ hidden
    labels = np.where(score > np.median(score), 1.0, -1.0).astype(np.float32)
    labels[rng.random(docs) < 0.05] *= -1
    return m, labels


def train_sparse_logreg(docs=20_000, features=100_000, batch=256):
    """Logistic regression on CSR features: dot(csr, w) gives w a row_sparse gradient, which
    Adam applies lazily (only the rows the batch touched)."""
    import time

    rng = np.random.default_rng(0)
    m, labels = bag_of_words(rng, docs, features, 40)
    test, train = np.arange(docs // 5), np.arange(docs // 5, docs)
    w = ts.zeros((features, 1), dtype=ts.float32).requires_grad_()
    b = ts.zeros(1, dtype=ts.float32).requires_grad_()
    opt = ts.optim.Adam([w, b], lr=0.02)
    zero = ts.zeros(1, dtype=ts.float32)

    def accuracy():
        with ts.no_grad():
            z = np.asarray(ts.ops.dot(ts.sparse.from_scipy(m[test]), w) + b)[:, 0]
        return float(((z >= 0) == (labels[test] > 0)).mean())

    start, losses = time.perf_counter(), []
    print(f"sparse logistic regression: {features} features, {len(train)} training docs, "
          f"batch {batch}; held-out accuracy before: {accuracy():.3f}")
    for step, lo in enumerate(range(0, len(train), batch), 1):
        rows = train[lo:lo + batch]
        x = ts.sparse.from_scipy(m[rows])
        y = ts.asarray(labels[rows][:, None])
        u = -(y * (ts.ops.dot(x, w) + b))
        loss = (ts.ops.maximum(u, zero) + ts.ops.log(ts.ops.exp(-abs(u)) + 1.0)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step == 1:
            print(f"  step 1: w.grad is {w.grad.stype} with {w.grad.sparse_parts()[0].size} "
                  f"stored rows of {features}")
        if step % 20 == 0:
            print(f"  step {step:3d}: loss {np.mean(losses[-20:]):.4f}")
    chance = max((labels[test] > 0).mean(), (labels[test] < 0).mean())
    print(f"  held-out accuracy {accuracy():.3f} (chance {chance:.3f}), "
          f"{time.perf_counter() - start:.2f} s")


def spirals(rng, per_class, classes):
    """Interleaved noisy spirals, one per class."""
    t = np.linspace(0.0, 1.0, per_class)
    xs, ys = [], []
    for c in range(classes):
        angle = 4.0 * t + 2 * np.pi * c / classes + rng.normal(0, 0.2, per_class)
        xs.append(np.stack([t * np.sin(angle), t * np.cos(angle)], axis=1))
        ys.append(np.full(per_class, c))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys)


def train_mlp(per_class=300, classes=3, hidden=64, steps=400):
    """A 2-64-64-3 MLP with ReLU and softmax cross-entropy, trained with SGD and momentum."""
    rng = np.random.default_rng(1)
    xs, ys = spirals(rng, per_class, classes)
    order = rng.permutation(len(ys))
    test, train = order[: len(ys) // 5], order[len(ys) // 5:]
    dims = [2, hidden, hidden, classes]
    params = []
    for a, b in zip(dims, dims[1:]):
        params.append(ts.asarray(rng.normal(0, np.sqrt(2 / a), (a, b)).astype(np.float32)).requires_grad_())
        params.append(ts.zeros(b, dtype=ts.float32).requires_grad_())
    opt = ts.optim.SGD(params, lr=0.1, momentum=0.9)

    def forward(x):
        for i in range(0, len(params), 2):
            x = ts.ops.matmul(x, params[i]) + params[i + 1]
            if i + 2 < len(params):
                x = ts.ops.relu(x)
        return x

    def accuracy():
        with ts.no_grad():
            logits = np.asarray(forward(ts.asarray(xs[test])))
        return float((logits.argmax(axis=1) == ys[test]).mean())

    onehot = np.eye(classes, dtype=np.float32)
    print(f"MLP {dims} on {classes} spirals ({len(train)} training points); "
          f"held-out accuracy before: {accuracy():.3f}")
    for step in range(1, steps + 1):
        rows = rng.choice(train, 128)
        logits = forward(ts.asarray(xs[rows]))
        shifted = logits - logits.detach().max(axis=1, keepdims=True)
        logp = shifted - ts.ops.log(ts.ops.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(ts.asarray(onehot[ys[rows]]) * logp).sum(axis=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(f"  step {step}: loss {float(loss):.4f}, held-out accuracy {accuracy():.3f}")
    print(f"  held-out accuracy {accuracy():.3f} (chance {1 / classes:.3f})")


if __name__ == "__main__":
    main()
