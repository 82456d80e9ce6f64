"""Sparse tensors from Python: constructors and their errors, tostype, SciPy interop, and the
sparse ops against SciPy / NumPy on random inputs (Hypothesis)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import tessera as ts

DENSITIES = [0.0, 0.01, 0.5, 1.0]


@st.composite
def csr_inputs(draw):
    rows = draw(st.integers(0, 6))
    cols = draw(st.integers(0, 6))
    density = draw(st.sampled_from(DENSITIES))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=density, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.integers(-4, 5, n).astype(np.float64))
    if draw(st.booleans()) and m.nnz:
        m.data[0] = 0.0  # an explicitly stored zero
    return m


@settings(max_examples=60, deadline=None)
@given(csr_inputs())
def test_scipy_round_trip_and_ops_match_scipy(m):
    t = ts.sparse.from_scipy(m)
    assert t.stype == "csr" and t.shape == m.shape
    back = t.to_scipy()
    np.testing.assert_array_equal(back.toarray(), m.toarray())
    dense = m.toarray()
    np.testing.assert_array_equal(np.asarray(t), dense)
    # quadratic with c = 0 keeps csr.
    q = ts.ops.quadratic(t, a=2.0, b=-1.0, c=0.0)
    assert q.stype == "csr"
    ref = m.copy()
    ref.data = 2.0 * ref.data**2 - ref.data
    np.testing.assert_allclose(q.to_scipy().toarray(), ref.toarray())
    # unary zero-preserving ops, scalar ops.
    np.testing.assert_allclose(np.asarray(-t), (-m).toarray())
    assert (-t).stype == "csr"
    np.testing.assert_allclose(np.asarray(abs(t)), abs(m).toarray())
    np.testing.assert_allclose(np.asarray(ts.ops.sqrt(abs(t))), np.sqrt(abs(m)).toarray())
    assert (t * 3).stype == "csr"
    np.testing.assert_allclose(np.asarray(t * 3), (m * 3).toarray())
    # add / sub / masked multiply.
    other = sp.random(*m.shape, density=0.5, format="csr", random_state=1)
    o = ts.sparse.from_scipy(other)
    s = t + o
    assert s.stype == "csr"
    np.testing.assert_allclose(np.asarray(s), (m + other).toarray())
    np.testing.assert_allclose(np.asarray(t - o), (m - other).toarray())
    od = ts.asarray(other.toarray())
    assert (t + od).stype == "default"
    np.testing.assert_allclose(np.asarray(t + od), (m + other).toarray())
    prod = t * od
    assert prod.stype == "csr"
    np.testing.assert_allclose(np.asarray(prod), m.multiply(other.toarray()).toarray())
    # dot: SpMV, SpMM, transposed.
    v = np.arange(m.shape[1], dtype=np.float64)
    np.testing.assert_allclose(np.asarray(ts.sparse.dot(t, v)), m @ v)
    b = np.arange(m.shape[0] * 3, dtype=np.float64).reshape(m.shape[0], 3)
    r = ts.sparse.dot(t, b, transpose_a=True)
    assert r.stype == "row_sparse"
    np.testing.assert_allclose(np.asarray(r), m.T @ b)
    # sums are dense.
    np.testing.assert_allclose(np.asarray(t.sum(axis=0)), np.asarray(m.sum(axis=0)).ravel())
    np.testing.assert_allclose(np.asarray(t.sum(axis=1)), np.asarray(m.sum(axis=1)).ravel())
    assert float(np.asarray(t.sum())) == pytest.approx(m.sum())


def test_tostype_and_row_sparse():
    a = np.array([[0.0, 1.0], [0.0, 0.0], [2.0, 3.0]])
    t = ts.asarray(a)
    assert t.stype == "default"
    c = t.tostype("csr")
    assert c.stype == "csr"
    r = c.tostype("row_sparse")
    assert r.stype == "row_sparse"
    data, idx = r.sparse_parts()
    np.testing.assert_array_equal(np.asarray(idx), [0, 2])
    np.testing.assert_array_equal(np.asarray(r.tostype("default")), a)
    rs = ts.sparse.row_sparse_array((np.ones((1, 2)), [1]), shape=(3, 2))
    np.testing.assert_array_equal(np.asarray(rs), [[0, 0], [1, 1], [0, 0]])
    np.testing.assert_array_equal(np.asarray(rs.retain([0])), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="unknown storage type"):
        t.tostype("coo")
    np.testing.assert_array_equal(np.asarray(c.csr_rows(1, 3)), a[1:3])


@pytest.mark.parametrize(
    "indptr,indices,n,msg",
    [
        ([0, 1], [0], 1, "indptr has 2 entries, expected rows \\+ 1 = 3"),
        ([1, 1, 1], [], 0, "must start at 0"),
        ([0, 2, 1], [0, 1], 2, "decreases at row 1"),
        ([0, 1, 1], [0, 1], 2, "ends at 1, expected nnz = 2"),
        ([0, 1, 2], [0, 1], 3, "2 indices but 3 data values"),
        ([0, 1, 1], [5], 1, "column index 5 in row 0 is out of range"),
        ([0, 2, 2], [2, 0], 2, "not sorted"),
        ([0, 2, 2], [1, 1], 2, "appears twice in row 0"),
    ],
)
def test_csr_errors(indptr, indices, n, msg):
    with pytest.raises(ValueError, match=msg):
        ts.sparse.csr_matrix((np.ones(n), indices, indptr), shape=(2, 3))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint8])
def test_csr_index_parts_are_int32_when_they_fit(index_dtype):
    m = sp.csr_matrix(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
    t = ts.sparse.csr_matrix(
        (m.data, m.indices.astype(index_dtype), m.indptr.astype(index_dtype)), shape=m.shape)
    data, indices, indptr = t.sparse_parts()
    assert indices.dtype == ts.int32 and indptr.dtype == ts.int32
    np.testing.assert_array_equal(np.asarray(indices), m.indices)
    np.testing.assert_array_equal(np.asarray(indptr), m.indptr)
    back = t.to_scipy()
    assert back.indices.dtype == np.int32 and back.indptr.dtype == np.int32
    np.testing.assert_array_equal(back.toarray(), m.toarray())
    assert ts.sparse.from_scipy(m).sparse_parts()[1].dtype == ts.int32


def test_csr_float_index_arrays_are_a_type_error():
    with pytest.raises(TypeError, match="must be integers"):
        ts.sparse.csr_matrix((np.ones(1), np.array([0.0]), [0, 1]), shape=(1, 2))


@pytest.mark.parametrize("pattern", ["banded", "scattered", "ragged"])
@pytest.mark.parametrize("parallel", [False, True])
def test_spmv_matches_scipy_on_large_patterns(pattern, parallel):
    # Large enough for many row blocks, the threaded split and, for scattered columns,
    # the prefetching loop; ragged rows (0 to 9 entries, some empty) cover odd lengths.
    rng = np.random.default_rng(3)
    rows, cols = 5000, 200_000
    if pattern == "banded":
        m = sp.diags([rng.standard_normal(rows) for _ in range(5)], [-2, -1, 0, 1, 2],
                     shape=(rows, cols), format="csr")
    else:
        per_row = rng.integers(0, 10, rows) if pattern == "ragged" else np.full(rows, 8)
        r = np.repeat(np.arange(rows), per_row)
        c = rng.integers(0, cols, r.size)
        m = sp.csr_matrix((rng.standard_normal(r.size), (r, c)), shape=(rows, cols))
    m.sum_duplicates()
    v = rng.standard_normal(cols)
    t = ts.sparse.from_scipy(m)
    got = np.asarray(ts.invoke("dot", t, ts.asarray(v), parallel=parallel))
    np.testing.assert_allclose(got, m @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "indices,k,msg",
    [
        ([2, 1], 2, "not sorted"),
        ([1, 1], 2, "appears twice"),
        ([4], 1, "out of range for 4 rows"),
        ([0, 1], 1, "data block has shape"),
    ],
)
def test_row_sparse_errors(indices, k, msg):
    with pytest.raises(ValueError, match=msg):
        ts.sparse.row_sparse_array((np.ones((k, 2)), indices), shape=(4, 2))


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_subtracting_int64_min_from_sparse_matches_numpy(dtype):
    # s - i64::MIN cannot be s + (-i64::MIN): the sign was lost (float) or the dtype (int).
    a = np.array([[0, 2], [3, 0]], dtype)
    s = ts.asarray(a).tostype("csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = s - (-(2**63))
    want = a - np.array(-(2**63), dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_fallback_and_masked_semantics():
    c = ts.asarray(np.array([[0.0, 2.0]])).tostype("csr")
    with pytest.warns(RuntimeWarning, match="operator = add_scalar"):
        y = c + 1.0
    assert y.stype == "default"
    np.testing.assert_array_equal(np.asarray(y), [[1.0, 3.0]])
    z = c * ts.asarray(np.array([[np.nan, np.inf]]))
    assert z.stype == "csr"
    np.testing.assert_array_equal(np.asarray(z), [[0.0, np.inf]])


# Parts written after construction through NumPy views of sparse_parts(): every kernel that
# reads them raises ValueError (ErrorKind::Sparse), never panics or reads out of bounds.
CSR_DENSE = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 4.0]])
# (what, part, position, value) on indptr [0, 2, 2, 4], indices [0, 2, 1, 3].
CSR_WRITES = [
    ("column out of range", "indices", 3, 4),
    ("negative column", "indices", 2, -1),
    ("columns unsorted", "indices", 0, 3),
    ("indptr decreasing", "indptr", 1, 3),
    ("indptr past nnz", "indptr", 3, 9),
    ("indptr negative", "indptr", 0, -1),
]


def _csr_kernels(t):
    v = np.arange(4, dtype=np.float64)
    b = np.arange(6, dtype=np.float64).reshape(3, 2)
    other = ts.sparse.from_scipy(sp.csr_matrix(CSR_DENSE))
    return {
        "todense": t.todense,
        "asarray": lambda: np.asarray(t),
        "to_scipy": t.to_scipy,
        "tostype(row_sparse)": lambda: t.tostype("row_sparse"),
        "csr_rows": lambda: t.csr_rows(0, 3),
        "sum(axis=0)": lambda: t.sum(axis=0),
        "sum(axis=1)": lambda: t.sum(axis=1),
        "add": lambda: t + other,
        "multiply dense": lambda: t * ts.asarray(CSR_DENSE),
        "dot": lambda: ts.sparse.dot(t, v),
        "dot transpose_a": lambda: ts.sparse.dot(t, b, transpose_a=True),
        "exp (fallback)": lambda: ts.ops.exp(t),
    }


def test_csr_kernels_on_intact_parts_match_scipy():
    m = sp.csr_matrix(CSR_DENSE)
    t = ts.sparse.from_scipy(m)
    for name, f in _csr_kernels(t).items():
        out = f()
        if name == "to_scipy":
            out = out.toarray()
        elif name in ("dot", "dot transpose_a", "sum(axis=0)", "sum(axis=1)"):
            continue  # compared in test_scipy_round_trip_and_ops_match_scipy
        np.testing.assert_allclose(
            np.asarray(out), {"add": 2 * CSR_DENSE, "multiply dense": CSR_DENSE**2,
                              "exp (fallback)": np.exp(CSR_DENSE)}.get(name, CSR_DENSE),
            err_msg=name)


@pytest.mark.parametrize("what,part,pos,value", CSR_WRITES)
def test_csr_parts_written_through_numpy_raise_value_error(what, part, pos, value):
    t = ts.sparse.from_scipy(sp.csr_matrix(CSR_DENSE))
    data, indices, indptr = t.sparse_parts()
    view = np.asarray({"indices": indices, "indptr": indptr}[part])
    view[pos] = value  # zero-copy: writes the tensor's shared part
    assert int(np.asarray(t.sparse_parts()[1 if part == "indices" else 2])[pos]) == value
    for name, f in _csr_kernels(t).items():
        if what == "columns unsorted" and name in ("dot", "dot transpose_a"):
            # The products check bounds as they read, not the column order: they return the
            # product of the written pattern (checked in Rust, tests/sparse_tampered.rs).
            continue
        with pytest.raises(ValueError, match="no longer valid"):
            f()
            pytest.fail(f"{name} on {what} did not raise")
    assert "no longer valid" in str(t) and "no longer valid" in repr(t)


@pytest.mark.parametrize("ids", [[0, 4], [-1, 2], [2, 0], [2, 2]])
def test_row_sparse_ids_written_through_numpy_raise_value_error(ids):
    a = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
    r = ts.asarray(a).tostype("row_sparse")
    np.asarray(r.sparse_parts()[1])[:] = ids
    kernels = {
        "todense": r.todense,
        "tostype(csr)": lambda: r.tostype("csr"),
        "retain": lambda: r.retain([0, 2]),
        "sum(axis=1)": lambda: r.sum(axis=1),
        "add": lambda: r + ts.asarray(a).tostype("row_sparse"),
        "multiply dense": lambda: r * ts.asarray(a),
    }
    for name, f in kernels.items():
        with pytest.raises(ValueError, match="no longer valid"):
            f()
            pytest.fail(f"{name} on row ids {ids} did not raise")
