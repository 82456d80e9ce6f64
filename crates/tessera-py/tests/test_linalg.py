"""`tessera.linalg` against `numpy.linalg` (the reference), with Hypothesis: batched and
broadcast shapes, empty and 1x1 matrices, non-contiguous inputs, every dtype the
factorizations compute in, and ill-conditioned matrices with tolerances scaled by the
condition number (docs/design.md L1-L7).

Factors that are unique (determinants, inverses, solutions, Cholesky factors, eigenvalues,
singular values, pseudo-inverses) are compared with NumPy's; eigenvectors, singular vectors
and QR factors are unique only up to signs (phases), so they are checked by what defines them:
they reconstruct the input, are orthonormal, and R is triangular."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tessera as ts

FLOATS = [np.float32, np.float64, np.complex64, np.complex128]


def eps(dtype):
    return float(np.finfo(dtype).eps)


@st.composite
def matrices(draw, square=True, min_n=0, max_n=6, dtypes=FLOATS, cond_digits=None):
    """A stack of matrices `[batch.., m, n]` (with its condition number), in `dtype`, as a
    non-contiguous view half the time. `cond_digits` bounds log10 of the condition number:
    the matrix is U diag(s) V^H with singular values spread over that many decades."""
    dtype = draw(st.sampled_from(dtypes))
    batch = draw(st.lists(st.integers(0 if min_n == 0 else 1, 3), max_size=2))
    n = draw(st.integers(min_n, max_n))
    m = n if square else draw(st.integers(min_n, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    complex_ = np.dtype(dtype).kind == "c"

    def gauss(*shape):
        g = rng.standard_normal(shape)
        return g + 1j * rng.standard_normal(shape) if complex_ else g

    a = gauss(*batch, m, n)
    if cond_digits is not None and min(m, n) > 0:
        digits = draw(st.floats(0, cond_digits))
        k = min(m, n)
        u = np.linalg.qr(gauss(*batch, m, m))[0][..., :, :k]
        v = np.linalg.qr(gauss(*batch, n, n))[0][..., :, :k]
        s = np.logspace(0, -digits, k)
        a = (u * s[None, :]) @ np.conj(np.swapaxes(v, -1, -2))
    a = a.astype(dtype)
    if draw(st.booleans()):
        # The same values as a transposed view of a contiguous buffer.
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
        t = ts.asarray(np.swapaxes(a, -1, -2)).mT
    else:
        t = ts.asarray(a)
    return a, t


def cond(a):
    """The 2-norm condition number of each matrix (inf when singular), at least 1."""
    if a.size == 0:
        return 1.0
    s = np.linalg.svd(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                      compute_uv=False)
    with np.errstate(divide="ignore"):
        c = s[..., 0] / s[..., -1]
    return float(np.max(c)) if c.size else 1.0


def amax(a):
    """The largest |element| (0 for an empty array)."""
    return float(np.max(np.abs(a))) if np.size(a) else 0.0


def close(got, want, tol, scale=None):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    if got.size == 0:
        return
    scale = amax(want) if scale is None else scale
    err = np.max(np.abs(got.astype(np.complex128) - np.asarray(want).astype(np.complex128)))
    assert err <= tol * max(scale, 1e-300), (err, tol, scale)


def recon_tol(a, n):
    return 50 * max(n, 1) * eps(a.dtype)


@given(matrices(cond_digits=6))
def test_det_slogdet_inv_match_numpy(at):
    a, t = at
    c = cond(a)
    n = a.shape[-1]
    assume(c < 1e3 / eps(a.dtype) ** 0.5)
    tol = 20 * (n + 1) * eps(a.dtype) * c
    d = ts.linalg.det(t)
    assert np.asarray(d).dtype == np.linalg.det(a).dtype
    want = np.linalg.det(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    close(d, want, tol)
    sign, logabs = ts.linalg.slogdet(t)
    ws, wl = np.linalg.slogdet(a.astype(want.dtype))
    assert np.asarray(logabs).dtype == np.linalg.slogdet(a)[1].dtype
    close(logabs, wl, tol, scale=1.0)
    close(sign, ws, tol, scale=1.0)
    if n > 0:
        inv = ts.linalg.inv(t)
        assert np.asarray(inv).dtype == a.dtype
        close(inv, np.linalg.inv(a.astype(want.dtype)), tol)


@given(matrices(cond_digits=6), st.integers(0, 3), st.booleans(), st.lists(st.integers(1, 2),
                                                                          max_size=1))
def test_solve_matches_numpy_with_broadcasting(at, k, vector, extra_batch):
    a, t = at
    n = a.shape[-1]
    c = cond(a)
    assume(c < 1e3 / eps(a.dtype) ** 0.5)
    rng = np.random.default_rng(k)
    if vector:
        b = rng.standard_normal(n)
    else:
        # b's batch dims: a's (or 1s), with extra leading dims that broadcast.
        bb = [1 if d and rng.integers(2) else d for d in a.shape[:-2]]
        b = rng.standard_normal((*extra_batch, *bb, n, k))
    b = b.astype(a.dtype)
    x = ts.linalg.solve(t, ts.asarray(b))
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    want = np.linalg.solve(a.astype(wide), b.astype(wide))
    assert np.asarray(x).shape == want.shape
    close(x, want, 20 * (n + 1) * eps(a.dtype) * c)


@given(matrices(cond_digits=4), st.booleans())
def test_cholesky_matches_numpy(at, upper):
    a, _ = at
    n = a.shape[-1]
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n, dtype=a.dtype)
    c = cond(spd)
    got = ts.linalg.cholesky(ts.asarray(spd), upper=upper)
    want = np.linalg.cholesky(spd.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                              upper=upper)
    assert np.asarray(got).dtype == spd.dtype
    close(got, want, 20 * (n + 1) * eps(a.dtype) * np.sqrt(c))


@given(matrices(cond_digits=6))
def test_eigh_values_match_numpy_and_vectors_diagonalise(at):
    a, _ = at
    n = a.shape[-1]
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    t = ts.asarray(h)
    w, v = ts.linalg.eigh(t)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    want = np.linalg.eigvalsh(h.astype(wide))
    assert np.asarray(w).dtype == np.linalg.eigvalsh(h).dtype
    norm = max(amax(h), 1e-30)
    close(w, want, recon_tol(h, n), scale=norm)
    close(ts.linalg.eigvalsh(t), want, recon_tol(h, n), scale=norm)
    v, w = np.asarray(v), np.asarray(w)
    close(h @ v, v * w[..., None, :], recon_tol(h, n), scale=norm)
    close(np.conj(np.swapaxes(v, -1, -2)) @ v, np.broadcast_to(np.eye(n), v.shape), recon_tol(h, n),
          scale=1.0)


@given(matrices(square=False, cond_digits=6), st.booleans())
def test_svd_values_match_numpy_and_factors_reconstruct(at, full):
    a, t = at
    m, n = a.shape[-2:]
    u, s, vh = ts.linalg.svd(t, full_matrices=full)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert (np.asarray(u).shape, np.asarray(s).shape, np.asarray(vh).shape) == (
        wu.shape, ws.shape, wvh.shape)
    assert np.asarray(s).dtype == ws.dtype and np.asarray(u).dtype == wu.dtype
    norm = max(amax(a), 1e-30)
    tol = recon_tol(a, max(m, n))
    close(s, ws, tol, scale=norm)
    close(ts.linalg.svdvals(t), ws, tol, scale=norm)
    u, s, vh = np.asarray(u), np.asarray(s), np.asarray(vh)
    k = min(m, n)
    close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, tol, scale=norm)
    close(np.conj(np.swapaxes(u, -1, -2)) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] +
                                                                (u.shape[-1],) * 2), tol, 1.0)


@given(matrices(square=False, cond_digits=6), st.sampled_from(["reduced", "complete"]))
def test_qr_reconstructs_with_numpys_shapes(at, mode):
    a, t = at
    m, n = a.shape[-2:]
    q, r = ts.linalg.qr(t, mode=mode)
    wq, wr = np.linalg.qr(a, mode=mode)
    q, r = np.asarray(q), np.asarray(r)
    assert (q.shape, r.shape, q.dtype) == (wq.shape, wr.shape, wq.dtype)
    norm = max(amax(a), 1e-30)
    tol = recon_tol(a, max(m, n))
    close(q @ r, a, tol, scale=norm)
    close(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] +
                                                                (q.shape[-1],) * 2), tol, 1.0)
    assert np.all(np.tril(r, -1) == 0)
    # |diag R| is unique: the norms of the orthogonal components of a's columns.
    close(np.abs(np.diagonal(r, axis1=-2, axis2=-1)), np.abs(np.diagonal(wr, axis1=-2, axis2=-1)),
          tol, scale=norm)


@given(matrices(square=False, cond_digits=5, dtypes=[np.float64, np.complex128]),
       st.integers(0, 3))
def test_pinv_rank_and_norms_match_numpy(at, drop):
    a, t = at
    m, n = a.shape[-2:]
    c = cond(a)
    close(ts.linalg.pinv(t), np.linalg.pinv(a), 100 * max(m, n, 1) * eps(a.dtype) * c)
    assert np.array_equal(np.asarray(ts.linalg.matrix_rank(t)), np.linalg.matrix_rank(a))
    # A matrix of rank min(m, n) - drop (its smallest singular values set to 0).
    k = min(m, n)
    if k:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        s[..., max(k - drop, 0):] = 0
        low = (u * s[..., None, :]) @ vh
        assert np.all(np.asarray(ts.linalg.matrix_rank(ts.asarray(low))) == max(k - drop, 0))
        sv = np.linalg.svd(a, compute_uv=False)
        ratios = sv / np.max(sv, axis=-1, keepdims=True)
        for rtol in (1e-3, 0.5):
            # A singular value at the threshold itself (the strategy makes s = [1, 1e-3])
            # counts either way after rounding, in NumPy as here: compare the clear cases.
            if np.any(np.abs(ratios - rtol) <= 1e-6 * rtol):
                continue
            assert np.array_equal(np.asarray(ts.linalg.matrix_rank(t, rtol=rtol)),
                                  np.linalg.matrix_rank(a, rtol=rtol))
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        if k == 0 and ord not in ("fro",):
            continue
        for keepdims in (False, True):
            close(ts.linalg.matrix_norm(t, ord=ord, keepdims=keepdims),
                  np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims),
                  100 * max(m, n, 1) * eps(a.dtype), scale=max(amax(a), 1e-30) * 10)


@given(matrices(min_n=1, cond_digits=2), st.integers(-3, 4))
def test_matrix_power_matches_numpy(at, p):
    a, t = at
    n = a.shape[-1]
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    want = np.linalg.matrix_power(a.astype(wide), p)
    close(ts.linalg.matrix_power(t, p), want, 200 * n * eps(a.dtype) * cond(a) ** 3)


@given(matrices(square=False, dtypes=[np.float32, np.float64, np.complex128]),
       st.sampled_from([1, 2, 3, 0.5, np.inf, -np.inf, 0, -1]), st.booleans())
def test_vector_norm_diagonal_and_trace_match_numpy(at, ord, keepdims):
    a, t = at
    axes = [None, -1, (-2, -1)]
    for axis in axes:
        if a.size == 0 and ord in (np.inf, -np.inf, -1):
            continue
        got = ts.linalg.vector_norm(t, axis=axis, ord=ord, keepdims=keepdims)
        with np.errstate(divide="ignore"):
            want = np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=keepdims)
        close(got, want, 50 * max(a.size, 1) * eps(a.dtype))
    for offset in (-1, 0, 2):
        assert np.array_equal(np.asarray(ts.linalg.diagonal(t, offset=offset)),
                              np.linalg.diagonal(a, offset=offset))
        close(ts.linalg.trace(t, offset=offset), np.linalg.trace(a, offset=offset),
              10 * eps(a.dtype) * max(a.shape[-1], 1), scale=max(amax(a), 1))


@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from([np.float32, np.float64]))
def test_det_of_small_integer_matrices_often_singular(seed, n, dtype):
    """Entries in {-1, 0, 1}: many matrices are exactly singular (a zero pivot), where the
    determinant is 0, not NaN."""
    a = np.random.default_rng(seed).integers(-1, 2, (4, n, n)).astype(dtype)
    got = np.asarray(ts.linalg.det(ts.asarray(a)))
    want = np.round(np.linalg.det(a.astype(np.float64)))
    assert np.array_equal(np.round(got), want), (got, want)
    sign, logabs = (np.asarray(v) for v in ts.linalg.slogdet(ts.asarray(a)))
    # Where the exact determinant is non-zero (an integer, so |det| >= 1); a singular one may
    # leave a rounding-sized pivot in float32 (NumPy's LAPACK too).
    ok = want != 0
    assert np.array_equal(sign[ok], np.sign(want[ok]))
    np.testing.assert_allclose(logabs[ok], np.log(np.abs(want[ok])), atol=1e-4)


def test_outer_cross_and_the_shared_products():
    x, y = np.arange(3.0), np.array([2.0, -1.0, 0.5])
    assert np.array_equal(np.asarray(ts.linalg.outer(ts.asarray(x), ts.asarray(y))),
                          np.linalg.outer(x, y))
    assert np.array_equal(np.asarray(ts.linalg.cross(ts.asarray(x), ts.asarray(y))),
                          np.linalg.cross(x, y))
    assert ts.linalg.matmul is ts.matmul and ts.linalg.tensordot is ts.tensordot
    assert ts.linalg.vecdot is ts.vecdot and ts.linalg.matrix_transpose is ts.matrix_transpose


def test_errors_are_numpys():
    singular = ts.asarray([[1.0, 2.0], [2.0, 4.0]])
    for f in (ts.linalg.inv, lambda a: ts.linalg.solve(a, ts.asarray([1.0, 1.0])),
              lambda a: ts.linalg.matrix_power(a, -1)):
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            f(singular)
    assert ts.linalg.LinAlgError is np.linalg.LinAlgError
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        ts.linalg.cholesky(ts.asarray([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(np.linalg.LinAlgError):
        ts.linalg.svd(ts.asarray([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError):
        ts.linalg.inv(ts.ones((2, 3)))
    with pytest.raises(ValueError):
        ts.linalg.det(ts.ones(3))
    with pytest.raises(ValueError):
        ts.linalg.solve(ts.eye(2), ts.ones(3))
    with pytest.raises(ValueError):
        ts.linalg.qr(ts.eye(2), mode="r")
    with pytest.raises(ValueError):
        ts.linalg.matrix_norm(ts.eye(2), ord=3)
    with pytest.raises(TypeError):
        ts.linalg.inv(3.0)
    with pytest.raises(TypeError):
        ts.linalg.svd(ts.eye(2), full_matrices=1)
    # Integers compute in float64, as NumPy.
    i = ts.asarray([[2, 0], [0, 4]])
    assert ts.linalg.inv(i).dtype == ts.float64
    assert float(ts.linalg.det(i)) == 8.0
    # float16 computes in float32 and keeps its dtype.
    h = ts.asarray(np.array([[2, 1], [1, 2]], np.float16))
    assert ts.linalg.inv(h).dtype == ts.float16


@settings(max_examples=12)
@given(st.sampled_from(FLOATS), st.integers(20, 90), st.integers(20, 90), st.integers(0, 2**32 - 1))
def test_larger_matrices_take_the_blocked_paths(dtype, m, n, seed):
    """Sizes past faer's block sizes (its blocked LU, QR and divide-and-conquer SVD/EVD)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((m, n))
    a = a.astype(dtype)
    t = ts.asarray(a)
    tol = 200 * max(m, n) * eps(dtype)
    close(ts.linalg.svdvals(t), np.linalg.svd(a, compute_uv=False), tol, scale=amax(a) * max(m, n))
    u, s, vh = (np.asarray(f) for f in ts.linalg.svd(t, full_matrices=False))
    close((u * s[None, :]) @ vh, a, tol, scale=amax(a) * max(m, n))
    q, r = (np.asarray(f) for f in ts.linalg.qr(t))
    close(q @ r, a, tol, scale=amax(a) * max(m, n))
    sq = a[:n, :n] if m >= n else a[:, :m]
    k = sq.shape[0]
    h = sq @ np.conj(sq.T) + k * np.eye(k, dtype=dtype)
    close(ts.linalg.eigvalsh(ts.asarray(h)), np.linalg.eigvalsh(h), tol, scale=amax(h) * k)
    c = cond(sq)
    close(ts.linalg.inv(ts.asarray(sq)), np.linalg.inv(sq), tol * c)
    close(ts.linalg.solve(ts.asarray(sq), ts.asarray(sq[:, :3])), np.linalg.solve(sq, sq[:, :3]),
          tol * c)
    close(ts.linalg.cholesky(ts.asarray(h)), np.linalg.cholesky(h), tol * cond(h))


def test_gradients_through_linalg_match_finite_differences():
    """d/dA of a loss through inv, slogdet, solve, eigvalsh and svdvals (design.md G9),
    against central differences computed with NumPy."""
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal((3, 3)) + 4 * np.eye(3)
    w, b = rng.standard_normal((3, 3)), rng.standard_normal(3)

    def loss_np(a):
        sym = np.tril(a) + np.tril(a, -1).T
        return (np.sum(np.linalg.inv(a) * w) + np.linalg.slogdet(a)[1]
                + np.sum(np.linalg.solve(a, b) ** 2) + np.sum(np.linalg.eigvalsh(sym) ** 2)
                + np.sum(np.linalg.svd(a, compute_uv=False)))

    x = ts.asarray(a0).requires_grad_()
    loss = (ts.sum(ts.linalg.inv(x) * ts.asarray(w)) + ts.linalg.slogdet(x).logabsdet
            + ts.sum(ts.linalg.solve(x, ts.asarray(b)) ** 2)
            + ts.sum(ts.linalg.eigvalsh(x) ** 2) + ts.sum(ts.linalg.svdvals(x)))
    loss.backward()
    h = 1e-6
    numeric = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = h
            numeric[i, j] = (loss_np(a0 + e) - loss_np(a0 - e)) / (2 * h)
    np.testing.assert_allclose(np.asarray(x.grad), numeric, rtol=1e-5, atol=1e-6)
