"""`tessera` as an Array API namespace (revision 2024.12): every name of the standard's main
namespace exists, signatures have the standard's positional-only and keyword-only parameters
(checked against array-api-strict, an independent implementation), and the glue (device,
`mT`, `__array_namespace_info__`, `astype`, products, `isin`) matches NumPy."""

import inspect

import array_api_strict as xps
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts

# Names array-api-strict adds for itself.
STRICT_ONLY = {
    "ArrayAPIStrictFlags", "Device", "get_array_api_strict_flags", "reset_array_api_strict_flags",
    "set_array_api_strict_flags", "__version__",
}
# Functions added to the standard after 2024.12 (array-api-strict defaults to a later
# revision); Tessera implements 2024.12.
LATER_REVISIONS = {"__array_api_version__"}


def standard_names():
    return sorted(n for n in xps.__all__ if n not in STRICT_ONLY)


def test_every_name_of_the_main_namespace_exists():
    missing = [n for n in standard_names() if not hasattr(ts, n)]
    assert missing == []
    assert ts.__array_api_version__ == "2024.12"


def test_array_namespace_and_api_versions():
    x = ts.asarray([1.0, 2.0])
    assert x.__array_namespace__() is ts
    assert x.__array_namespace__(api_version="2023.12") is ts
    assert x.__array_namespace__(api_version=None) is ts
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2099.12")
    with pytest.raises(TypeError):
        x.__array_namespace__(api_version=2024)


def test_array_api_compat_finds_the_namespace():
    compat = pytest.importorskip("array_api_compat")
    x = ts.zeros((2, 3))
    assert compat.array_namespace(x) is ts
    assert compat.array_namespace(x, ts.ones(3)) is ts
    assert compat.device(x) == ts.Device()


def kinds(sig):
    return [(p.name, p.kind) for p in sig.parameters.values()]


def mandatory_positional(sig):
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]


@pytest.mark.parametrize("name", [n for n in standard_names()
                                  if callable(getattr(xps, n)) and not isinstance(getattr(xps, n), type)
                                  and not n.startswith("__")])
def test_signature_matches_the_standard(name):
    """Positional-only parameters stay positional-only, keyword-only ones keyword-only,
    under the standard's names (a parameter array-api-strict lacks is allowed only with a
    default)."""
    check_signature(getattr(xps, name), getattr(ts, name), name)


@pytest.mark.parametrize("name", xps.linalg.__all__)
def test_linalg_signature_matches_the_standard(name):
    assert hasattr(ts.linalg, name)
    check_signature(getattr(xps.linalg, name), getattr(ts.linalg, name), f"linalg.{name}")


@pytest.mark.parametrize("name", xps.fft.__all__)
def test_fft_signature_matches_the_standard(name):
    assert hasattr(ts.fft, name)
    check_signature(getattr(xps.fft, name), getattr(ts.fft, name), f"fft.{name}")


def check_signature(theirs_f, ours_f, name):
    try:
        want = inspect.signature(theirs_f)
    except (TypeError, ValueError):
        pytest.skip("array-api-strict exposes no signature")
    got = inspect.signature(ours_f)
    theirs = {p.name: p for p in want.parameters.values()}
    ours = {p.name: p for p in got.parameters.values()}
    P = inspect.Parameter
    for p in want.parameters.values():
        if p.kind == P.POSITIONAL_ONLY:
            continue  # names of positional-only parameters are not part of the API
        if p.kind == P.VAR_POSITIONAL:
            assert any(q.kind == P.VAR_POSITIONAL for q in got.parameters.values()), name
            continue
        assert p.name in ours, f"{name}: no parameter {p.name}"
        if p.kind == P.KEYWORD_ONLY:
            assert ours[p.name].kind == P.KEYWORD_ONLY, f"{name}: {p.name} must be keyword-only"
    positional_only = [p for p in want.parameters.values() if p.kind == P.POSITIONAL_ONLY]
    ours_positional = [q for q in got.parameters.values()
                       if q.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    assert len(ours_positional) >= len(positional_only), name
    for q in ours_positional[:len(positional_only)]:
        assert q.kind == P.POSITIONAL_ONLY, f"{name}: {q.name} must be positional-only"
    for q in got.parameters.values():
        if q.name not in theirs and q.kind not in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert q.default is not q.empty, f"{name}: extra parameter {q.name} needs a default"


def test_device_and_to_device():
    x = ts.arange(6).reshape((2, 3))
    assert x.device == ts.Device() and hash(x.device) == hash(ts.Device())
    assert repr(x.device) == "Device('cpu')"
    assert x.to_device(x.device) is x
    assert x.to_device("cpu") is x
    with pytest.raises(ValueError):
        x.to_device("cuda")
    with pytest.raises(ValueError):
        ts.zeros(3, device="cuda:0")
    for make in (lambda d: ts.zeros(2, device=d), lambda d: ts.ones(2, device=d),
                 lambda d: ts.empty(2, device=d), lambda d: ts.full(2, 1.5, device=d),
                 lambda d: ts.arange(3, device=d), lambda d: ts.asarray([1], device=d),
                 lambda d: ts.eye(2, device=d), lambda d: ts.zeros_like(x, device=d)):
        assert make(ts.Device()).device == ts.Device()
        with pytest.raises(ValueError):
            make("gpu")


def test_creation_dtype_is_keyword_only():
    with pytest.raises(TypeError):
        ts.zeros((2,), ts.float32)
    assert ts.zeros((2,), dtype=ts.float32).dtype == ts.float32
    assert ts.zeros_like(ts.ones(3, dtype=ts.int16)).dtype == ts.int16
    assert ts.ones_like(ts.ones(3), dtype=ts.uint8).tolist() == [1, 1, 1]


def test_namespace_info_matches_array_api_strict():
    info, theirs = ts.__array_namespace_info__(), xps.__array_namespace_info__()
    assert info.default_device() == ts.Device()
    assert info.devices() == [ts.Device()]
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert set(info.default_dtypes()) == set(theirs.default_dtypes())
    assert info.default_dtypes()["integral"] == ts.int64
    for kind in (None, "bool", "signed integer", "unsigned integer", "integral",
                 "real floating", "complex floating", "numeric", ("bool", "integral")):
        assert set(info.dtypes(kind=kind)) == set(theirs.dtypes(kind=kind)), kind
    with pytest.raises(ValueError):
        info.dtypes(kind="quaternion")
    with pytest.raises(ValueError):
        info.dtypes(device="tpu")
    assert hasattr(ts, "linalg") and hasattr(ts, "fft")


def test_constants():
    assert ts.e == np.e and ts.pi == np.pi and ts.inf == np.inf and np.isnan(ts.nan)
    assert ts.newaxis is None
    x = ts.arange(3)
    assert x[ts.newaxis, :].shape == (1, 3)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=4, max_side=4)))
def test_mT_and_matrix_transpose_are_views_like_numpy(a):
    x = ts.asarray(a)
    np.testing.assert_array_equal(np.asarray(x.mT), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(np.asarray(ts.matrix_transpose(x)), np.swapaxes(a, -1, -2))
    if a.size:
        x.mT[..., 0, 0] = 42.0  # a view: the write reaches x
        assert float(np.asarray(x)[(0,) * (a.ndim - 2) + (0, 0)]) == 42.0
    with pytest.raises(ValueError):
        ts.asarray([1.0, 2.0]).mT


def test_astype_function():
    x = ts.asarray([1.5, -2.5, 3.0])
    assert ts.astype(x, ts.float64, copy=False) is x
    y = ts.astype(x, ts.float64)
    assert y is not x and y.tolist() == x.tolist()
    assert ts.astype(x, ts.int32).tolist() == [1, -2, 3]
    assert ts.astype(x, ts.complex64).dtype == ts.complex64
    with pytest.raises(TypeError):
        ts.astype(ts.asarray([1 + 2j]), ts.float64)
    assert ts.astype(ts.asarray([1 + 2j]), ts.complex64).tolist() == [1 + 2j]


shape_lists = st.lists(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
                       min_size=0, max_size=4)


@given(shape_lists)
def test_broadcast_shapes_matches_numpy(shapes):
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError):
            ts.broadcast_shapes(*shapes)
        return
    assert ts.broadcast_shapes(*shapes) == want


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
               elements=st.sampled_from([0.0, -0.0, 1.0, 2.0, np.nan, np.inf])),
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4),
               elements=st.sampled_from([0.0, 1.0, 3.0, np.nan, -np.inf])),
    st.booleans(),
)
def test_isin_matches_numpy(a, b, invert):
    got = ts.isin(ts.asarray(a), ts.asarray(b), invert=invert)
    assert got.dtype == ts.bool
    np.testing.assert_array_equal(np.asarray(got), np.isin(a, b, invert=invert))


def test_isin_scalars_and_errors():
    x = ts.asarray([1, 2, 3], dtype=ts.int16)
    assert ts.isin(x, 2).tolist() == [False, True, False]
    assert bool(ts.isin(2, x)) and ts.isin(2, x).shape == ()
    with pytest.raises(TypeError):
        ts.isin(1, 2)
    with pytest.raises(TypeError):
        ts.isin(ts.asarray([1], dtype=ts.uint64), ts.asarray([1], dtype=ts.int64))


@given(st.data())
def test_products_match_numpy(data):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                             elements=st.integers(-4, 4).map(float)))
    k = a.shape[-1]
    b = data.draw(hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.just(k)),
                             elements=st.integers(-4, 4).map(float)))
    x, y = ts.asarray(a), ts.asarray(b)
    # vecdot over the last axis, the leading dims broadcast.
    try:
        want = np.sum(a * b, axis=-1)
    except ValueError:
        with pytest.raises(ValueError):
            ts.vecdot(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(ts.vecdot(x, y)), want)
    # matmul with the transpose, tensordot with the int and pair forms.
    np.testing.assert_array_equal(np.asarray(ts.matmul(x, y.mT)), np.matmul(a, b.T))
    np.testing.assert_array_equal(np.asarray(ts.tensordot(x, y, axes=([-1], [1]))),
                                  np.tensordot(a, b, axes=([-1], [1])))
    np.testing.assert_array_equal(np.asarray(ts.tensordot(x, y.mT, axes=1)),
                                  np.tensordot(a, b.T, axes=1))
    np.testing.assert_array_equal(np.asarray(ts.tensordot(x, x, axes=0)),
                                  np.tensordot(a, a, axes=0))


def test_vecdot_conjugates_the_first_operand():
    a = np.array([1 + 2j, 3 - 1j], dtype=np.complex128)
    b = np.array([2 - 1j, 1 + 1j], dtype=np.complex128)
    got = ts.vecdot(ts.asarray(a), ts.asarray(b))
    assert complex(got) == np.vecdot(a, b)
    with pytest.raises(TypeError):
        ts.tensordot(ts.ones(2), ts.ones(2), axes=True)
    with pytest.raises(ValueError):
        ts.tensordot(ts.ones(2), ts.ones(2), axes=3)


def test_complex_parts_and_sum_dtype():
    z = ts.asarray(np.array([1 + 2j, -3 - 4j], dtype=np.complex64))
    assert ts.real(z).dtype == ts.float32 and ts.real(z).tolist() == [1.0, -3.0]
    assert ts.imag(z).tolist() == [2.0, -4.0]
    assert ts.conj(z).tolist() == [1 - 2j, -3 + 4j]
    assert ts.conj(ts.asarray([1.5])).tolist() == [1.5]
    x = ts.asarray([1, 2, 3], dtype=ts.int8)
    assert ts.sum(x).dtype == ts.int64
    assert ts.sum(x, dtype=ts.float32).dtype == ts.float32
    assert float(ts.sum(x, dtype=ts.float32)) == 6.0
    assert ts.sum(ts.asarray([0.1] * 10, dtype=ts.float32), dtype=ts.float64).dtype == ts.float64
