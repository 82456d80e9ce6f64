"""Autograd from Python against NumPy: gradients written out by hand in NumPy (the analytic
derivative, reduced over broadcast dims) and central finite differences; grad mode scopes,
autograd.grad, optimisers against NumPy's update written naively, and the errors."""

import copy
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tessera as ts
from conftest import shapes


def unbroadcast(g, shape):
    """Sums ``g`` down to ``shape`` (the reference for a broadcast input's gradient)."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast together (dims dropped or set to 1 on either side)."""
    out = draw(shapes(0, 3, 1, 4))
    def side():
        k = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else d for d in out[len(out) - k:])
    return side(), side()


def leaf(a):
    return ts.asarray(a).requires_grad_()


BINARY = {
    "add": (lambda x, y: x + y, lambda a, b, g: (g, g)),
    "sub": (lambda x, y: x - y, lambda a, b, g: (g, -g)),
    "mul": (lambda x, y: x * y, lambda a, b, g: (g * b, g * a)),
    "div": (lambda x, y: x / y, lambda a, b, g: (g / b, -g * a / b**2)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(pair=broadcast_pair(), seed=st.integers(0, 2**31 - 1))
def test_binary_gradients_reduce_over_broadcast_dims(name, pair, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, pair[0])
    b = rng.uniform(0.5, 2.0, pair[1])
    w = rng.standard_normal(np.broadcast_shapes(a.shape, b.shape))
    f, df = BINARY[name]
    x, y = leaf(a), leaf(b)
    (f(x, y) * ts.asarray(w)).sum().backward()
    ga, gb = df(np.broadcast_to(a, w.shape), np.broadcast_to(b, w.shape), w)
    np.testing.assert_allclose(np.asarray(x.grad), unbroadcast(ga, a.shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(y.grad), unbroadcast(gb, b.shape), rtol=1e-12, atol=1e-12)


UNARY = {
    "exp": (np.exp, np.exp),
    "log": (np.log, lambda a: 1 / a),
    "tanh": (np.tanh, lambda a: 1 - np.tanh(a) ** 2),
    "sin": (np.sin, np.cos),
    "sqrt": (np.sqrt, lambda a: 0.5 / np.sqrt(a)),
    "square": (np.square, lambda a: 2 * a),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(shape=shapes(0, 3, 0, 4), seed=st.integers(0, 2**31 - 1))
def test_unary_gradients_match_the_derivative(name, shape, seed):
    a = np.random.default_rng(seed).uniform(0.2, 3.0, shape)
    x = leaf(a)
    y = getattr(ts.ops, name)(x)
    np.testing.assert_allclose(np.asarray(y.detach()), UNARY[name][0](a), rtol=1e-12)
    if a.size:
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), UNARY[name][1](a), rtol=1e-12)


@given(m=st.integers(1, 5), k=st.integers(1, 5), n=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_matmul_gradients(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a, b, w = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
    x, y = leaf(a), leaf(b)
    (ts.ops.matmul(x, y) * ts.asarray(w)).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), w @ b.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(y.grad), a.T @ w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("red", ["sum", "mean"])
@given(shape=shapes(1, 3, 1, 4), data=st.data())
def test_sum_mean_gradients_over_axes(red, shape, data):
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    keep = data.draw(st.booleans())
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    x = leaf(a)
    y = getattr(x, red)(axis=axis, keepdims=keep)
    w = np.random.default_rng(0).standard_normal(y.shape)
    (y * ts.asarray(w)).sum().backward()
    ref = np.broadcast_to(np.asarray(w).reshape(np.asarray(getattr(a, red)(axis=axis, keepdims=True)).shape), shape)
    if red == "mean":
        ref = ref * (np.asarray(a.mean(axis=axis, keepdims=True)).size / a.size)
    np.testing.assert_allclose(np.asarray(x.grad), ref, rtol=1e-12)


def test_max_shares_the_gradient_among_ties():
    x = leaf([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    x.max(axis=1).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [[0, 0.5, 0.5], [0.5, 0, 0.5]])
    y = leaf([1.0, 1.0])
    ts.ops.maximum(y, ts.asarray([1.0, 0.0])).sum().backward()
    np.testing.assert_allclose(np.asarray(y.grad), [0.5, 1.0])


@given(shape=shapes(1, 3, 1, 5), data=st.data())
def test_view_gradients_scatter_into_the_base(shape, data):
    from conftest import basic_keys

    key = data.draw(basic_keys(shape))
    a = np.random.default_rng(1).standard_normal(shape)
    x = leaf(a)
    v = x[key]
    w = np.random.default_rng(2).standard_normal(v.shape)
    if v.size == 0:
        return
    (v * ts.asarray(w)).sum().backward()
    ref = np.zeros(shape)
    ref[key] += w  # basic indexing never repeats an element, so this add is exact
    np.testing.assert_allclose(np.asarray(x.grad), ref, rtol=1e-12)


def test_view_op_gradients():
    a = np.arange(6.0).reshape(2, 3)
    cases = [
        (lambda t: t.expand(4, 2, 3), np.full((2, 3), 4.0)),
        (lambda t: t.T, np.ones((2, 3))),
        (lambda t: t.flip(1) * ts.asarray([1.0, 2.0, 3.0]), np.array([[3.0, 2, 1]] * 2)),
        (lambda t: t.reshape(3, 2), np.ones((2, 3))),
        (lambda t: t.repeat(2, 3), np.full((2, 3), 6.0)),
        (lambda t: t.tile((1, 2)), np.full((2, 3), 2.0)),
        (lambda t: t.unsqueeze(0).squeeze(0), np.ones((2, 3))),
        (lambda t: t.permute(1, 0)[0], np.array([[1.0, 0, 0], [1, 0, 0]])),
        (lambda t: t.broadcast_to((5, 2, 3)), np.full((2, 3), 5.0)),
    ]
    for f, ref in cases:
        x = leaf(a)
        f(x).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), ref)


def test_astype_between_floats_casts_the_gradient_back():
    x = leaf(np.array([1.0, 2.0], np.float32))
    (x.astype(ts.float64) * 3.0).sum().backward()
    assert x.grad.dtype == ts.float32
    np.testing.assert_array_equal(np.asarray(x.grad), [3.0, 3.0])


def test_finite_differences_of_a_composed_function():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 1.5, (3, 4))

    def f(t):
        return ts.ops.exp(ts.ops.tanh(ts.ops.matmul(t, ts.asarray(a.T)))).mean() * 2.0

    x = leaf(a)
    f(x).backward()
    eps, num = 1e-6, np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = (float(f(ts.asarray(hi))) - float(f(ts.asarray(lo)))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(x.grad), num, rtol=1e-6, atol=1e-8)


def test_gradients_accumulate_and_clear():
    x = leaf([1.0, 2.0])
    (x * 2.0).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [5.0, 5.0])
    x.grad = None
    assert x.grad is None
    x.grad = [1.0, 1.0]
    np.testing.assert_array_equal(np.asarray(x.grad), [1.0, 1.0])
    with pytest.raises(RuntimeError):
        x.grad = [1.0, 1.0, 1.0]


def test_leaf_flags_and_detach():
    x = ts.asarray([1.0, 2.0])
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf and y.grad_fn == "multiply"
    d = y.detach()
    assert not d.requires_grad and d.shares_storage(y)
    x.requires_grad = False
    assert not x.requires_grad and not (x * 2.0).requires_grad
    x.requires_grad_(True)
    assert (x * 2.0).requires_grad
    with pytest.raises(RuntimeError, match="detach"):
        y.requires_grad_(False)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating-point"):
        ts.asarray([1, 2]).requires_grad_()


def test_backward_errors():
    x = leaf([1.0, 2.0])
    y = x * x
    with pytest.raises(ValueError, match=r"\(2,\)|\[2\]"):
        y.backward()
    with pytest.raises(ValueError, match="shape"):
        y.backward(ts.ones(3))
    with pytest.raises(ValueError, match="dtype"):
        y.backward(ts.ones(2, dtype=ts.float32))
    assert x.grad is None  # nothing half-updated
    y.backward([1.0, 1.0])  # a list takes y's dtype
    np.testing.assert_array_equal(np.asarray(x.grad), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="retain"):
        y.backward([1.0, 1.0])
    with pytest.raises(RuntimeError):
        ts.ones(2).backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([3.0])
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [12.0])


def test_modified_saved_tensor_is_an_error_at_backward():
    x = leaf([1.0, 2.0])
    h = x * 1.0
    y = (h * h).sum()
    d = h.detach()
    d += 1.0  # writes the storage h saved
    with pytest.raises(RuntimeError, match="modified|version|in place"):
        y.backward()
    assert x.grad is None


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="in-place"):
        x += 1.0
    with pytest.raises(RuntimeError):
        x[0] = 5.0
    with ts.no_grad():
        x += 1.0
    np.testing.assert_array_equal(np.asarray(x.detach()), [2.0, 3.0])


def test_ring_buffer_is_forward_only():
    rb = ts.RingBuffer((2,), axis=0, length=2, dtype=ts.float64)
    x = leaf([1.0, 2.0])
    w = rb.push(x * 1.0)
    with pytest.raises(RuntimeError, match="ring_buffer"):
        w.sum().backward()


def test_numpy_export_of_a_tensor_that_requires_grad_is_read_only():
    x = leaf([1.0, 2.0])
    a = np.asarray(x)
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, [1.0, 2.0])
    assert np.asarray(x.detach()).flags.writeable


def test_no_grad_scopes_nest_and_decorate():
    x = leaf([1.0])
    assert ts.is_grad_enabled()
    with ts.no_grad():
        assert not ts.is_grad_enabled() and not (x * 2.0).requires_grad
        with ts.enable_grad():
            assert (x * 2.0).requires_grad
        assert not ts.is_grad_enabled()
    assert ts.is_grad_enabled()

    @ts.no_grad()
    def evaluate():
        return x * 2.0

    assert not evaluate().requires_grad and ts.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):
        with ts.no_grad():
            1 / 0
    assert ts.is_grad_enabled()
    with ts.set_grad_enabled(False):
        assert not ts.is_grad_enabled()
    assert ts.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with ts.no_grad():
        t = threading.Thread(target=lambda: seen.append(ts.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_autograd_grad_leaves_dot_grad_alone():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    z = (x * y).sum()
    gx, gy = ts.autograd.grad(z, [x, y], retain_graph=True)
    np.testing.assert_array_equal(np.asarray(gx), [3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(gy), [1.0, 2.0])
    assert x.grad is None
    u = leaf([0.0])
    with pytest.raises(RuntimeError, match="allow_unused"):
        ts.autograd.grad(z, [x, u], retain_graph=True)
    gx, gu = ts.autograd.grad([z], [x, u], allow_unused=True)
    assert gu is None
    with pytest.raises(TypeError):
        ts.autograd.grad(z, [1.0])


def test_a_chain_of_100000_ops_backpropagates():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [1.0])


def test_row_sparse_gradient_of_embedding_and_csr_dot():
    table = leaf(np.arange(12.0).reshape(6, 2))
    out = ts.ops.embedding(table, ts.asarray([4, 1, 4]))
    out.sum().backward()
    g = table.grad
    assert g.stype == "row_sparse"
    ref = np.zeros((6, 2))
    ref[[1, 4]] = [[1, 1], [2, 2]]
    np.testing.assert_array_equal(np.asarray(g), ref)

    import scipy.sparse as sp

    m = sp.csr_matrix(np.array([[0, 2.0, 0, 0], [1.0, 0, 0, 3.0]]))
    w = leaf(np.ones((4, 3)))
    ts.ops.dot(ts.sparse.from_scipy(m), w).sum().backward()
    assert w.grad.stype == "row_sparse"
    np.testing.assert_array_equal(np.asarray(w.grad), m.T @ np.ones((2, 3)))


def sgd_reference(p, grads, lr, mu):
    v = np.zeros_like(p)
    for g in grads:
        v = mu * v + g
        p = p - lr * v
    return p


def adam_reference(p, grads, lr, b1, b2, eps):
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return p


@given(seed=st.integers(0, 2**31 - 1), steps=st.integers(1, 4))
def test_optimisers_match_their_update_rules(seed, steps):
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) for _ in range(steps)]
    for make, ref in [
        (lambda w: ts.optim.SGD([w], lr=0.1, momentum=0.9), lambda: sgd_reference(p0, grads, 0.1, 0.9)),
        (lambda w: ts.optim.Adam([w], lr=0.01), lambda: adam_reference(p0, grads, 0.01, 0.9, 0.999, 1e-8)),
    ]:
        w = leaf(p0.copy())
        opt = make(w)
        for g in grads:
            opt.zero_grad()
            (w * ts.asarray(g)).sum().backward()
            opt.step()
        np.testing.assert_allclose(np.asarray(w.detach()), ref(), rtol=1e-10, atol=1e-12)


def test_optimiser_state_round_trips_and_resumes(tmp_path):
    rng = np.random.default_rng(5)
    grads = [rng.standard_normal(3) for _ in range(6)]

    def run(ws, opt, gs):
        for g in gs:
            opt.zero_grad()
            (ws * ts.asarray(g)).sum().backward()
            opt.step()

    w = leaf(np.ones(3))
    opt = ts.optim.Adam([w], lr=0.1)
    run(w, opt, grads)
    w2 = leaf(np.ones(3))
    opt2 = ts.optim.Adam([w2], lr=0.1)
    run(w2, opt2, grads[:3])
    ts.save(tmp_path / "ck.safetensors", {"w": w2.detach(), **opt2.state_dict()})
    ck = ts.load(tmp_path / "ck.safetensors")
    w3 = leaf(np.asarray(ck.pop("w")))
    opt3 = ts.optim.Adam([w3], lr=0.1)
    opt3.load_state_dict(ck)
    run(w3, opt3, grads[3:])
    np.testing.assert_array_equal(np.asarray(w3.detach()), np.asarray(w.detach()))


def test_optimiser_errors():
    with pytest.raises(ValueError):
        ts.optim.SGD([ts.ones(2)], lr=0.1)  # does not require a gradient
    with pytest.raises(ValueError):
        ts.optim.Adam([leaf([1.0])], lr=-1.0)
    with pytest.raises(TypeError):
        ts.optim.SGD([1.0], lr=0.1)
    opt = ts.optim.SGD([leaf([1.0])], lr=0.1, momentum=0.5)
    with pytest.raises(ValueError):
        opt.load_state_dict({"nonsense": ts.ones(1)})
    assert isinstance(opt, ts.optim.Optimizer) and len(opt.params) == 1


def test_pickle_and_deepcopy_keep_requires_grad_of_leaves():
    x = leaf([1.0, 2.0])
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.requires_grad and y.is_leaf and not y.shares_storage(x)
        np.testing.assert_array_equal(np.asarray(y.detach()), [1.0, 2.0])
    z = pickle.loads(pickle.dumps(x * 2.0))
    assert not z.requires_grad


def test_logistic_regression_trains():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 5))
    labels = (a @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) > 0).astype(np.float64)
    w, b = leaf(np.zeros(5)), leaf(np.zeros(1))
    opt = ts.optim.SGD([w, b], lr=0.5)
    x, y = ts.asarray(a), ts.asarray(labels * 2 - 1)
    losses = []
    for _ in range(50):
        z = ts.ops.matmul(x, w.reshape(5, 1)).reshape(200) + b
        u = -(y * z)
        loss = (ts.ops.maximum(u, ts.zeros(1)) + ts.ops.log(ts.ops.exp(-abs(u)) + 1.0)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    with ts.no_grad():
        pred = np.asarray(ts.ops.matmul(x, w.reshape(5, 1)).reshape(200) + b) > 0
    assert (pred == (labels > 0)).mean() > 0.9


def test_repr_shows_requires_grad_and_grad_fn():
    x = leaf([1.0, 2.0])
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * x) == "tensor([1., 4.], grad_fn=<multiply>)"
    assert repr(x.detach()) == "tensor([1., 2.])"


def test_readme_gradient_example_runs_and_fits():
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme[readme.index("**Gradients.**"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    env = {"np": np, "ts": ts}
    exec(code, env)
    w = np.asarray(env["w"].detach())[:, 0]
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(x @ w, [1.0, -1.0], atol=0.05)


@st.composite
def matmul_shapes(draw):
    """Operand shapes NumPy's matmul accepts: broadcast batch dims (stretched and added), 1-D
    operands on either side."""
    batch = draw(st.lists(st.integers(1, 3), max_size=3))
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))

    def side(rows, cols):
        if draw(st.integers(0, 4)) == 0:
            return (cols if rows is None else rows,)
        cut = draw(st.integers(0, len(batch)))
        own = [d if draw(st.booleans()) else 1 for d in batch[cut:]]
        return tuple(own) + (rows, cols)

    a = side(m, k)
    b = side(k, n)
    if len(a) == 1:
        a = (k,)
    if len(b) == 1:
        b = (k,)
    return a, b


@given(shapes=matmul_shapes(), seed=st.integers(0, 2**31 - 1))
def test_batched_matmul_and_its_gradients_match_numpy(shapes, seed):
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    want = a @ b
    w = rng.standard_normal(want.shape)
    x, y = leaf(a), leaf(b)
    z = x @ y
    np.testing.assert_allclose(np.asarray(z.detach()), want, rtol=1e-12, atol=1e-12)
    (z * ts.asarray(w)).sum().backward()
    # NumPy's rule written out: per-matrix products, summed over broadcast batch dims.
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    w2 = w.reshape(np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2]) + (a2.shape[-2], b2.shape[-1]))
    da = w2 @ np.swapaxes(b2, -1, -2)
    db = np.swapaxes(a2, -1, -2) @ w2

    def summed(d, shape):
        lead = d.ndim - len(shape)
        d = d.sum(axis=tuple(range(lead)))
        axes = tuple(i for i, s in enumerate(shape) if s == 1 and d.shape[i] != 1)
        return d.sum(axis=axes, keepdims=True)

    np.testing.assert_allclose(np.asarray(x.grad), summed(da, a2.shape).reshape(sa), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(y.grad), summed(db, b2.shape).reshape(sb), rtol=1e-10, atol=1e-10)


def test_matmul_operator_errors_and_reflection():
    a = ts.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError):
        a @ 2.0
    with pytest.raises(ValueError):
        a @ ts.asarray(np.ones((2, 3)))
    # A NumPy array on the left: NumPy defers to the tensor's __rmatmul__ only when asked, so
    # the result is checked through a list operand instead.
    got = [[1.0, 0.0], [0.0, 1.0]] @ a
    np.testing.assert_array_equal(np.asarray(got), np.arange(6.0).reshape(2, 3))
