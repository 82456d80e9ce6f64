"""Real clients of the Array API run on Tessera arrays, with NumPy as the reference:
array-api-compat finds the namespace, array-api-extra's functions run, and scikit-learn's
array-API estimators and metrics fit with `array_api_dispatch=True` (docs/design.md N1).
LinearDiscriminantAnalysis and PCA run on `tessera.linalg`."""

import numpy as np
import pytest

import tessera as ts

compat = pytest.importorskip("array_api_compat")
xpx = pytest.importorskip("array_api_extra")


def close(got, want):
    assert isinstance(got, ts.Tensor), type(got)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 5))
    x[3, 2] = np.nan
    return x


def test_compat_helpers_see_tessera(data):
    t = ts.asarray(data)
    assert compat.array_namespace(t) is ts
    assert compat.is_array_api_obj(t)
    assert compat.size(t) == data.size
    assert compat.device(t) == ts.Device()
    assert compat.to_device(t, ts.Device()) is t


EXTRA = [
    ("atleast_nd", lambda xp, a: xpx.atleast_nd(a[0], ndim=3, xp=xp)),
    ("cov", lambda xp, a: xpx.cov(xp.where(xp.isnan(a), 0.0, a).T, xp=xp)),
    ("kron", lambda xp, a: xpx.kron(a[:3, :2], a[:2, :3], xp=xp)),
    ("nunique", lambda xp, a: xpx.nunique(xp.round(a), xp=xp)),
    ("pad", lambda xp, a: xpx.pad(a, 2, xp=xp)),
    ("setdiff1d", lambda xp, a: xpx.setdiff1d(xp.round(a[0]), xp.round(a[1]), xp=xp)),
    ("sinc", lambda xp, a: xpx.sinc(a, xp=xp)),
    ("create_diagonal", lambda xp, a: xpx.create_diagonal(a[1], xp=xp)),
    ("isclose", lambda xp, a: xpx.isclose(a, a + 1e-9, xp=xp)),
    ("one_hot", lambda xp, a: xpx.one_hot(xp.astype(xp.abs(xp.round(a[1])), xp.int64), 4, xp=xp)),
    ("nan_to_num", lambda xp, a: xpx.nan_to_num(a, xp=xp)),
    ("nanmax", lambda xp, a: xpx.nanmax(a, axis=0, xp=xp)),
    ("nansum", lambda xp, a: xpx.nansum(a, axis=1, xp=xp)),
    ("nanmean", lambda xp, a: xpx.nanmean(a, xp=xp)),
    ("union1d", lambda xp, a: xpx.union1d(xp.round(a[0]), xp.round(a[5]), xp=xp)),
    ("partition", lambda xp, a: xpx.sort(xpx.partition(a[0], 2, xp=xp)) if hasattr(xpx, "sort")
     else xp.sort(xpx.partition(a[0], 2, xp=xp))),
    ("apply_where", lambda xp, a: xpx.apply_where(a > 0, a, xp.sqrt, fill_value=-1.0, xp=xp)),
    ("unravel_index", lambda xp, a: xp.stack(xpx.unravel_index(xp.asarray([0, 5, 7]), (2, 4), xp=xp))),
]


@pytest.mark.parametrize("name,f", EXTRA, ids=[n for n, _ in EXTRA])
def test_array_api_extra_matches_numpy(name, f, data):
    import numpy as xnp

    want = f(xnp, data)
    got = f(ts, ts.asarray(data))
    if name == "nunique":
        assert int(got) == int(want)
    else:
        close(got, want)


def test_at_updates_a_copy_or_in_place_like_numpy(data):
    a, t = data.copy(), ts.asarray(data)
    got = xpx.at(t)[0, 1:3].add(5.0, copy=True)
    want = xpx.at(a)[0, 1:3].add(5.0, copy=True)
    close(got, want)
    close(t, data)  # copy=True left the input alone


sklearn = pytest.importorskip("sklearn")


@pytest.fixture
def xy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(80, 4)) * [1.0, 10.0, 0.1, 3.0]
    y = (x[:, 0] + 0.5 * rng.normal(size=80) > 0).astype(np.int64)
    return x, y


def run_both(f, x, y):
    from sklearn import config_context

    want = f(x, y)
    with config_context(array_api_dispatch=True):
        got = f(ts.asarray(x), ts.asarray(y))
    return got, want


def transform(est):
    return lambda x, y: est().fit_transform(x)


@pytest.mark.parametrize("name", ["StandardScaler", "MinMaxScaler", "MaxAbsScaler",
                                  "Normalizer", "Binarizer"])
def test_sklearn_preprocessing_fits_on_tessera(name, xy):
    import sklearn.preprocessing as pre

    got, want = run_both(transform(getattr(pre, name)), *xy)
    close(got, want)


def test_sklearn_metrics_on_tessera(xy):
    from sklearn import metrics

    x, y = xy
    for f in (lambda a, b: metrics.r2_score(a[:, 0], a[:, 1]),
              lambda a, b: metrics.mean_squared_error(a[:, 0], a[:, 3]),
              lambda a, b: metrics.accuracy_score(b, b[::-1])):
        got, want = run_both(f, x, y)
        assert float(got) == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("which", ["lda", "pca"])
def test_sklearn_estimators_needing_linalg(which, xy):
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    def f(x, y):
        if which == "lda":
            return LinearDiscriminantAnalysis().fit(x, y).predict_proba(x)
        return PCA(n_components=2, svd_solver="full").fit_transform(x)

    got, want = run_both(f, *xy)
    np.testing.assert_allclose(np.abs(np.asarray(got)), np.abs(want), rtol=1e-8, atol=1e-10)
