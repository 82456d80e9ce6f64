"""Tessera vs NumPy from Python, in one process (docs/performance.md: ratios, not absolute times).

Prints a table (best of several repeats, per call) and then ``ratio NAME VALUE`` lines.
Run: ``python crates/tessera-py/bench/bench.py`` after ``pip install ./crates/tessera-py``.
"""

import timeit

import numpy as np

import tessera as ts

from bench_ops import VIEW_KEYS  # same directory: the shared keys


def best(stmt, number, repeat=7):
    """Best time per call of ``stmt`` over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def fmt(seconds):
    if seconds < 1e-6:
        return f"{seconds * 1e9:8.1f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    return f"{seconds * 1e3:8.2f} ms"


def main():
    rows, ratios = [], []

    # 1. A 4-index view from Python: call overhead + key parsing + layout.
    a = np.zeros((64,) * 4, dtype=np.float32)
    t = ts.zeros((64,) * 4, dtype=ts.float32)
    key = (slice(1, 60, 2), Ellipsis, None, slice(None, None, -3))
    assert np.array_equal(np.asarray(t[key]), a[key])
    tn = best(lambda: a[1:60:2, ..., None, ::-3], 200_000)
    tt = best(lambda: t[1:60:2, ..., None, ::-3], 200_000)
    rows.append(("view t[1:60:2, ..., None, ::-3] 64^4 f32", tn, tt))
    ratios.append(("py_view_time_vs_numpy", tt / tn))

    # 1b. Not a goal, kept visible: a key that changes on every call. The core remembers each
    # thread's last (geometry, key) -> view, so 1. repeats hit that memo; here every call misses
    # it and pays the full walk plus the memo's check and store.
    keys = VIEW_KEYS
    for k in keys:
        assert np.array_equal(np.asarray(t[k]), a[k])

    def cycle(x):
        for k in keys:
            x[k]

    tn = best(lambda: cycle(a), 25_000) / len(keys)
    tt = best(lambda: cycle(t), 25_000) / len(keys)
    rows.append(("view, 8 keys in turn (memo misses)", tn, tt))
    ratios.append(("py_view_varying_keys_time_vs_numpy", tt / tn))

    # 2. Materialising a transpose: NumPy has no blocked transpose.
    rng = np.random.default_rng(0)
    a = rng.random((4096, 4096), dtype=np.float32)
    t = ts.asarray(a)
    assert np.array_equal(np.asarray(t.T.contiguous()), np.ascontiguousarray(a.T))
    tn = best(lambda: np.ascontiguousarray(a.T), 3, 5)
    tt = best(lambda: t.T.contiguous(), 3, 5)
    rows.append(("a.T contiguous copy 4096^2 f32", tn, tt))
    ratios.append(("py_transpose_copy_speedup_vs_numpy", tn / tt))
    del a, t

    # 3. tile: one strided copy into a fresh buffer.
    x = rng.random((512, 512), dtype=np.float32)
    tx = ts.asarray(x)
    assert np.array_equal(np.asarray(tx.tile((8, 8))), np.tile(x, (8, 8)))
    tn = best(lambda: np.tile(x, (8, 8)), 3, 7)
    tt = best(lambda: tx.tile((8, 8)), 3, 7)
    rows.append(("tile (8, 8) of 512^2 f32", tn, tt))
    ratios.append(("py_tile_time_vs_numpy", tt / tn))

    # 4. Elementwise add with one transposed operand.
    a = rng.random((2048, 2048), dtype=np.float32)
    b = rng.random((2048, 2048), dtype=np.float32)
    ta, tb = ts.asarray(a), ts.asarray(b)
    assert np.array_equal(np.asarray(ta.T + tb), a.T + b)
    tn = best(lambda: a.T + b, 5, 7)
    tt = best(lambda: ta.T + tb, 5, 7)
    rows.append(("a.T + b 2048^2 f32", tn, tt))
    ratios.append(("py_strided_add_time_vs_numpy", tt / tn))

    print(f"{'benchmark':<44} {'numpy':>11} {'tessera':>11} {'ours/numpy':>10}")
    for name, tn, tt in rows:
        print(f"{name:<44} {fmt(tn):>11} {fmt(tt):>11} {tt / tn:10.3f}")
    print()
    for name, value in ratios:
        print(f"ratio {name} {value:.3f}")


if __name__ == "__main__":
    main()
