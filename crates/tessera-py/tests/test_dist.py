"""``tessera.dist`` in one process (a world of one rank; ``scripts/test-mpi`` runs the
example under ``mpirun``): placements round-trip, SBP parsing errors, gradients with their
dual placements against NumPy's hand-written gradient, and data-parallel SGD against NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera.dist as dist


def test_a_process_alone_is_a_world_of_one():
    assert (dist.rank(), dist.size()) == (0, 1)
    mesh = dist.Mesh()
    assert mesh.shape == [1] and mesh.coords == [0]
    assert dist.Mesh([1, 1]).shape == [1, 1]
    with pytest.raises(ValueError):
        dist.Mesh([2, 2])  # 4 ranks asked of a world of 1


@pytest.mark.parametrize("sbp", ["S(0)", "S(1)", "B", "P", "P(max)", "P(min)"])
def test_placements_round_trip(sbp):
    a = np.arange(12.0).reshape(3, 4)
    g = dist.GlobalTensor.from_logical(a, sbp, dist.Mesh())
    assert g.shape == [3, 4]
    assert g.sbp == [{"P": "P(sum)"}.get(sbp, sbp)]
    np.testing.assert_array_equal(np.asarray(g.to_full()), a)
    np.testing.assert_array_equal(np.asarray(g.to_sbp("B").local), a)


def test_bad_placements_are_errors():
    mesh = dist.Mesh()
    for bad in ["S(x)", "Q", "S(", ""]:
        with pytest.raises(ValueError, match="SBP"):
            dist.GlobalTensor.from_logical(np.ones(3), bad, mesh)
    with pytest.raises(TypeError):
        dist.GlobalTensor.from_logical(np.ones(3), 3, mesh)
    with pytest.raises(ValueError):
        dist.GlobalTensor.from_logical(np.ones(3), "S(1)", mesh)  # no axis 1
    with pytest.raises(TypeError):
        dist.matmul(np.ones((2, 2)), np.ones((2, 2)))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 6),
    k=st.integers(1, 5),
    m=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_gradients_match_numpy_with_dual_placements(n, k, m, seed):
    rng = np.random.default_rng(seed)
    x, w, r = rng.normal(size=(n, k)), rng.normal(size=(k, m)), rng.normal(size=(n, m))
    mesh = dist.Mesh()
    gx = dist.GlobalTensor.from_logical(x, "S(0)", mesh).requires_grad_()
    gw = dist.GlobalTensor.from_logical(w, "B", mesh).requires_grad_()
    gr = dist.GlobalTensor.from_logical(r, "B", mesh)
    loss = dist.sum(dist.relu(gx @ gw) * gr)
    loss.backward()
    mask = (x @ w > 0) * r
    np.testing.assert_allclose(np.asarray(gw.grad.to_full()), x.T @ mask, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gx.grad.to_full()), mask @ w.T, rtol=1e-12, atol=1e-12)
    assert gw.grad.sbp == ["P(sum)"] and gx.grad.sbp == ["S(0)"]


def test_data_parallel_sgd_matches_numpy():
    rng = np.random.default_rng(3)
    x, y, w0 = rng.normal(size=(16, 3)), rng.normal(size=(16, 1)), rng.normal(size=(3, 1))
    mesh = dist.Mesh()
    w = dist.GlobalTensor.from_logical(w0, "B", mesh).requires_grad_()
    opt = dist.DistOptimizer([w], "sgd", lr=0.1)
    gx, gy = (dist.GlobalTensor.from_logical(a, "S(0)", mesh) for a in (x, y))
    want = w0.copy()
    for _ in range(3):
        err = gx @ w - gy
        loss = dist.mean(err * err)
        opt.zero_grad()
        opt.backward(loss)
        opt.step()
        want -= 0.1 * 2.0 / len(x) * x.T @ (x @ want - y)
    np.testing.assert_allclose(np.asarray(w.to_full()), want, rtol=1e-12)


def test_step_on_a_partial_gradient_is_refused():
    mesh = dist.Mesh()
    w = dist.GlobalTensor.from_logical(np.ones((2, 1)), "B", mesh).requires_grad_()
    x = dist.GlobalTensor.from_logical(np.ones((4, 2)), "S(0)", mesh)
    opt = dist.DistOptimizer([w], "adam", lr=0.1)
    dist.sum(x @ w).backward()
    with pytest.raises(ValueError, match="Partial"):
        opt.step()
    opt.reduce_gradients()
    opt.step()
    with pytest.raises(ValueError, match="one-element"):
        opt.backward(x @ w)
    with pytest.raises(ValueError):
        dist.DistOptimizer([w], "lbfgs")


def test_the_training_example_runs_alone():
    import runpy
    import sys
    from pathlib import Path

    example = Path(__file__).parents[1] / "examples" / "train_dp.py"
    argv = sys.argv
    sys.argv = [str(example), "12"]
    try:
        runpy.run_path(str(example), run_name="__main__")
    except SystemExit as e:
        assert e.code in (None, 0)
    finally:
        sys.argv = argv
