"""Files and pickling (docs/design.md F1-F6): tessera.save/load against the `safetensors`
package's NumPy reader and writer, save_npy/load_npy against np.load/np.save, errors, and
pickle / copy / deepcopy / multiprocessing (spawn) round trips, dense and sparse."""

import copy
import errno
import multiprocessing
import operator
import pathlib
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import tessera as ts
from conftest import NUMPY_DTYPES, basic_keys

ARRAYS = hnp.arrays(
    st.sampled_from(NUMPY_DTYPES),
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
)


@st.composite
def views(draw):
    """A NumPy array and a Tessera view of it (basic indexing, transpose or broadcast)."""
    a = draw(ARRAYS)
    t = ts.asarray(a)
    kind = draw(st.sampled_from(["index", "T", "broadcast", "none"]))
    if kind == "index":
        key = draw(basic_keys(a.shape))
        return a[key], t[key]
    if kind == "T":
        return a.T, t.T
    if kind == "broadcast":
        shape = (2,) + a.shape
        return np.broadcast_to(a, shape), t.broadcast_to(shape)
    return a, t


def same(expected, got):
    """Same dtype, shape and bytes (NaN payloads included) of the logical elements."""
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes()


def random_csr(seed, rows=5, cols=7, density=0.4, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return sp.random(rows, cols, density=density, format="csr", random_state=rng,
                     dtype=dtype, data_rvs=lambda n: rng.integers(-9, 10, n))


# --- safetensors -------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(views(), ARRAYS)
def test_safetensors_package_reads_what_tessera_saves(tmp_path_factory, av, other):
    a, t = av
    path = tmp_path_factory.mktemp("st") / "ck.safetensors"
    ts.save(path, {"x": t, "other": other}, metadata={"epoch": "3"})
    got = load_file(str(path))
    assert sorted(got) == ["other", "x"]
    same(a, got["x"])
    same(other, got["other"])
    with safe_open(str(path), framework="numpy") as f:
        assert f.metadata()["epoch"] == "3"
    tensors, meta = ts.load(path, with_metadata=True)
    assert list(tensors) == ["x", "other"] and meta == {"epoch": "3"}
    same(a, tensors["x"])
    assert tensors["x"].is_contiguous()


@settings(max_examples=60, deadline=None)
@given(st.lists(ARRAYS, min_size=0, max_size=4))
def test_tessera_reads_what_the_safetensors_package_saves(tmp_path_factory, arrays):
    path = str(tmp_path_factory.mktemp("st") / "np.safetensors")
    named = {f"t{i}": np.ascontiguousarray(a) for i, a in enumerate(arrays)}
    save_file(named, path, metadata={"format": "np", "k": "v"})
    tensors, meta = ts.load(path, with_metadata=True)
    assert meta == {"format": "np", "k": "v"}
    assert sorted(tensors) == sorted(named)
    for name, a in named.items():
        same(a, tensors[name])


def test_every_dtype_round_trips_bfloat16_included(tmp_path):
    path = tmp_path / "all.safetensors"
    src = {d.name: ts.arange(-3, 3, dtype=d) for d in
           [ts.bool, ts.uint8, ts.int8, ts.int32, ts.int64, ts.float16, ts.bfloat16,
            ts.float32, ts.float64]}
    ts.save(str(path), src)
    back = ts.load(path)
    assert list(back) == list(src)
    for name, t in src.items():
        assert back[name].dtype == t.dtype and back[name].shape == t.shape
        assert back[name].astype("float64").tolist() == t.astype("float64").tolist()
    with safe_open(str(path), framework="numpy") as f:
        assert set(f.keys()) == set(src)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from([np.float32, np.float64, np.int64]))
def test_sparse_tensors_round_trip_and_stay_readable_as_parts(tmp_path_factory, seed, density, dtype):
    m = random_csr(seed, density=density, dtype=dtype)
    csr = ts.sparse.from_scipy(m)
    rsp = ts.asarray(m.toarray()).tostype("row_sparse")
    path = tmp_path_factory.mktemp("sp") / "sparse.safetensors"
    ts.save(path, {"m": csr, "r": rsp})
    back = ts.load(path)
    assert list(back) == ["m", "r"]
    assert back["m"].stype == "csr" and back["r"].stype == "row_sparse"
    same(m.toarray(), back["m"])
    same(m.toarray(), back["r"])
    # Another reader sees the parts as plain arrays: SciPy's data/indices/indptr.
    parts = load_file(str(path))
    assert sorted(parts) == ["m.data", "m.indices", "m.indptr", "r.data", "r.indices"]
    rebuilt = sp.csr_matrix((parts["m.data"], parts["m.indices"], parts["m.indptr"]),
                            shape=m.shape)
    np.testing.assert_array_equal(rebuilt.toarray(), m.toarray())
    rows = np.flatnonzero(np.any(m.toarray() != 0, axis=1))
    np.testing.assert_array_equal(parts["r.indices"], rows)


def test_save_takes_paths_arrays_and_mappings(tmp_path):
    path = pathlib.Path(tmp_path) / "p.safetensors"
    ts.save(path, {"a": np.arange(3, dtype=np.int32), "b": [[1.5]]}, metadata=None)
    back = ts.load(str(path))
    assert back["a"].dtype == ts.int32 and back["b"].tolist() == [[1.5]]
    assert ts.load(path, with_metadata=True)[1] == {}


# --- .npy ----------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(views())
def test_np_load_reads_what_tessera_saves(tmp_path_factory, av):
    a, t = av
    path = tmp_path_factory.mktemp("npy") / "a.npy"
    ts.save_npy(path, t)
    same(a, np.load(path))
    same(a, ts.load_npy(path))


@settings(max_examples=80, deadline=None)
@given(ARRAYS, st.sampled_from(["C", "F", "swapped"]))
def test_tessera_reads_what_np_save_writes(tmp_path_factory, a, layout):
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "swapped":
        a = a.astype(a.dtype.newbyteorder(">"))
    path = tmp_path_factory.mktemp("npy") / "a.npy"
    np.save(path, a)
    t = ts.load_npy(str(path))
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.asarray(t).dtype == a.dtype.newbyteorder("=")


def test_npy_refuses_bfloat16_and_sparse(tmp_path):
    with pytest.raises(TypeError, match="bfloat16"):
        ts.save_npy(tmp_path / "b.npy", ts.ones(2, dtype=ts.bfloat16))
    with pytest.raises(ValueError, match="dense"):
        ts.save_npy(tmp_path / "s.npy", ts.sparse.from_scipy(random_csr(0)))
    np.save(tmp_path / "ld.npy", np.arange(3, dtype=np.longdouble))
    with pytest.raises(ValueError, match="longdouble"):
        ts.load_npy(tmp_path / "ld.npy")
    np.save(tmp_path / "obj.npy", np.array([{}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="object"):
        ts.load_npy(tmp_path / "obj.npy")


# --- errors --------------------------------------------------------------------------------


def test_os_errors_are_oserror_subclasses_with_errno_and_filename(tmp_path):
    missing = tmp_path / "missing.safetensors"
    for load in (ts.load, ts.load_npy):
        with pytest.raises(FileNotFoundError) as e:
            load(missing)
        assert e.value.errno == errno.ENOENT and e.value.filename == str(missing)
        with pytest.raises(IsADirectoryError):
            load(tmp_path)
    with pytest.raises(FileNotFoundError):
        ts.save(tmp_path / "no" / "dir.safetensors", {"a": ts.zeros(1)})
    with pytest.raises(FileNotFoundError):
        ts.save_npy(tmp_path / "no" / "dir.npy", ts.zeros(1))


def test_bad_contents_are_value_errors_and_leave_no_partial_files(tmp_path):
    good = tmp_path / "good.safetensors"
    ts.save(good, {"a": ts.arange(10.0), "m": ts.sparse.from_scipy(random_csr(1))})
    data = good.read_bytes()
    bad = tmp_path / "bad.safetensors"
    for cut in [0, 7, 8, 20, len(data) // 2, len(data) - 1]:
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError):
            ts.load(bad)
    bad.write_bytes(data + b"\0")
    with pytest.raises(ValueError, match="tensor data but"):
        ts.load(bad)
    bad.write_bytes(b"\xff" * 64)
    with pytest.raises(ValueError):
        ts.load(bad)
    np.save(tmp_path / "a.npy", np.arange(4.0))
    npy = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(npy[:-1])
    with pytest.raises(ValueError):
        ts.load_npy(tmp_path / "cut.npy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "bad.safetensors",
                                                          "cut.npy", "good.safetensors"]


def test_wrong_argument_types_are_type_errors(tmp_path):
    path = tmp_path / "x.safetensors"
    t = ts.zeros(2)
    for args, kwargs in [
        (([t],), {}),
        (({1: t},), {}),
        (({"a": t}, {"k": 1}), {}),
        (({"a": t}, {2: "v"}), {}),
        (({"a": t}, ["k"]), {}),
        (({"a": object()},), {}),
    ]:
        with pytest.raises(TypeError):
            ts.save(path, *args, **kwargs)
    with pytest.raises(TypeError):
        ts.load(123)
    with pytest.raises(TypeError):
        ts.load(path, True)  # with_metadata is keyword-only
    with pytest.raises(ValueError, match="reserved"):
        ts.save(path, {"a": t}, metadata={"tessera": "x"})
    with pytest.raises(ValueError, match="twice"):
        ts.save(path, {"s": ts.sparse.from_scipy(random_csr(2)), "s.data": t})
    assert not path.exists()


# --- pickle, copy, multiprocessing ----------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(views(), st.integers(0, pickle.HIGHEST_PROTOCOL))
def test_pickle_round_trips_the_logical_elements(av, protocol):
    a, t = av
    back = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert isinstance(back, ts.Tensor) and back.stype == "default"
    assert back.is_contiguous() and not back.shares_storage(t)
    same(a, back)


def sparse_and_odd_tensors():
    m = random_csr(3)
    return [
        ts.sparse.from_scipy(m),
        ts.asarray(m.toarray()).tostype("row_sparse"),
        ts.arange(6.0, dtype=ts.bfloat16).reshape(2, 3).T,
        ts.asarray(np.float32(2.5)),
        ts.zeros((0, 3), dtype=ts.int8),
        ts.asarray([True, False])[::-1],
    ]


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_sparse_bfloat16_and_empty_tensors_copy_and_pickle(how):
    for t in sparse_and_odd_tensors():
        if how == "pickle":
            back = pickle.loads(pickle.dumps(t))
        elif how == "copy":
            back = copy.copy(t)
        else:
            back = copy.deepcopy(t)
        assert (back.stype, back.dtype, back.shape) == (t.stype, t.dtype, t.shape)
        assert back.astype("float64").tolist() == t.astype("float64").tolist()
        assert not back.shares_storage(t)


def test_copies_own_their_storage():
    base = ts.arange(6.0).reshape(2, 3)
    view = base[:, 1]
    pair = copy.deepcopy([base, view])
    for c in (copy.copy(view), copy.deepcopy(view), pair[1]):
        assert not c.shares_storage(base) and c.tolist() == [1.0, 4.0]
    base[:] = 0.0
    assert copy.deepcopy(view).tolist() == [0.0, 0.0] and pair[1].tolist() == [1.0, 4.0]


def test_rebuild_rejects_bad_pickle_data():
    func, (data, requires_grad) = ts.zeros(2).__reduce__()
    assert requires_grad is False
    assert func(data).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError):
        func(data[:-1])
    with pytest.raises(ValueError):
        func(b"garbage")
    with pytest.raises(TypeError):
        func("not bytes")


def test_tensors_cross_spawned_processes():
    tensors = [ts.arange(12.0, dtype=ts.float32).reshape(3, 4)[::-1, 1:3]] + [
        t for t in sparse_and_odd_tensors() if t.dtype != ts.bool
    ]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        echoed = pool.map(copy.deepcopy, tensors)
        negated = pool.map(operator.neg, tensors[:3])
    for t, back in zip(tensors, echoed):
        assert (back.stype, back.dtype, back.shape) == (t.stype, t.dtype, t.shape)
        assert back.astype("float64").tolist() == t.astype("float64").tolist()
    for t, n in zip(tensors[:3], negated):
        assert n.astype("float64").tolist() == (-t).astype("float64").tolist()


# --- huge sizes, each in its own interpreter (an abort or a hang fails the case, H1/H6) -----

HUGE_CASES = [
    # (id, expected exception, snippet run with `path` a fresh file name)
    ("safetensors header of 4 TiB", "ValueError", """
        import struct
        h = b'{"a":{"dtype":"F32","shape":[1048576,1048576],"data_offsets":[0,4398046511104]}}'
        h += b" " * (-len(h) % 8)
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"\\0" * 4)
        ts.load(path)
    """),
    ("safetensors shape past usize", "ValueError", """
        import struct
        h = b'{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}}'
        h += b" " * (-len(h) % 8)
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"\\0" * 8)
        ts.load(path)
    """),
    ("npy header of 4 TiB", "ValueError", """
        d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }"
        d += b" " * (-(len(d) + 11) % 64) + b"\\n"
        open(path, "wb").write(b"\\x93NUMPY\\x01\\x00" + len(d).to_bytes(2, "little") + d + b"\\0" * 4)
        ts.load_npy(path)
    """),
    ("npy of 100000 dims", "ValueError", """
        d = b"{'descr': '|u1', 'fortran_order': False, 'shape': (" + b"1, " * 100000 + b"), }"
        d += b" " * (-(len(d) + 13) % 64) + b"\\n"
        open(path, "wb").write(b"\\x93NUMPY\\x02\\x00" + len(d).to_bytes(4, "little") + d + b"\\0")
        ts.load_npy(path)
    """),
    ("safetensors of 100000 dims", "ValueError", """
        import struct
        h = b'{"a":{"dtype":"U8","shape":[' + b"1," * 99999 + b'1],"data_offsets":[0,1]}}'
        h += b" " * (-len(h) % 8)
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"\\0")
        ts.load(path)
    """),
    ("save 65 dims", "ValueError", "ts.save(path, {'a': ts.zeros((1,) * 65)})"),
    ("save an 8 TiB broadcast", "MemoryError",
     "ts.save(path, {'a': ts.zeros(1).broadcast_to((2**20, 2**20))})"),
    ("save_npy an 8 TiB broadcast", "MemoryError",
     "ts.save_npy(path, ts.zeros(1).broadcast_to((2**20, 2**20)))"),
    ("pickle an 8 TiB broadcast", "MemoryError",
     "import pickle; pickle.dumps(ts.zeros(1).broadcast_to((2**20, 2**20)))"),
    ("deepcopy an 8 TiB broadcast", "MemoryError",
     "import copy; copy.deepcopy(ts.zeros(1).broadcast_to((2**20, 2**20)))"),
]

HUGE_HARNESS = """\
import sys
import tessera as ts
path = sys.argv[1]
try:
{body}
except BaseException as e:
    print("RAISED", " ".join(c.__name__ for c in type(e).__mro__), "|", str(e)[:300], flush=True)
else:
    print("RAISED none |", flush=True)
"""


@pytest.mark.parametrize("name,expected,snippet", HUGE_CASES, ids=[c[0] for c in HUGE_CASES])
def test_huge_sizes_are_errors_in_a_fresh_interpreter(tmp_path, name, expected, snippet):
    import subprocess
    import sys
    import textwrap

    body = textwrap.indent(textwrap.dedent(snippet).strip(), "    ")
    proc = subprocess.run(
        [sys.executable, "-c", HUGE_HARNESS.format(body=body), str(tmp_path / "f")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RAISED")][-1]
    assert expected in line.split("|")[0].split(), f"{name}: {line}"
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["f"]), "a temporary file was left"
