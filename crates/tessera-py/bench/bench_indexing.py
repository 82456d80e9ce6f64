"""Advanced indexing, Tessera vs NumPy in one process (docs/performance.md: ratios).

Row gathers (``t[idx]`` and ``take(t, idx, axis=0)``: 100 000 random rows of a 1M x 64 f32
array) and a boolean-mask getitem (16M f32, half the mask true). The index arrays and masks
change between calls (several drawn up front, used in turn); each number is the median of
the repeats. Run on one thread for the ratio lines:

    RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python crates/tessera-py/bench/bench_indexing.py
"""

import statistics
import time

import numpy as np

import tessera as ts

VARIANTS = 4
REPEATS = 11


def median_time(fn, inputs):
    """Median seconds of ``fn(inputs[i % len(inputs)])`` over ``REPEATS`` calls (one warm-up)."""
    fn(inputs[0])
    times = []
    for i in range(REPEATS):
        x = inputs[i % len(inputs)]
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    return f"{seconds * 1e3:8.2f} ms"


def main():
    rng = np.random.default_rng(0)
    rows, ratios = [], []

    a = rng.standard_normal((1_000_000, 64), dtype=np.float32)
    t = ts.asarray(a)
    idx_np = [rng.integers(0, a.shape[0], 100_000) for _ in range(VARIANTS)]
    idx_ts = [ts.asarray(i) for i in idx_np]
    assert np.array_equal(np.asarray(t[idx_ts[0]]), a[idx_np[0]])
    assert np.array_equal(np.asarray(ts.take(t, idx_ts[1], axis=0)), np.take(a, idx_np[1], axis=0))
    tn = median_time(lambda i: a[i], idx_np)
    tt = median_time(lambda i: t[i], idx_ts)
    rows.append(("t[idx] 100k rows of 1M x 64 f32", tn, tt))
    ratios.append(("take_rows_time_vs_numpy", tt / tn))
    tn = median_time(lambda i: np.take(a, i, axis=0), idx_np)
    tt = median_time(lambda i: ts.take(t, i, axis=0), idx_ts)
    rows.append(("take(t, idx, axis=0) same", tn, tt))
    ratios.append(("take_rows_take_time_vs_numpy", tt / tn))
    tt = median_time(lambda i: t[i], idx_np)
    rows.append(("t[idx] with a NumPy idx (converted)", tn, tt))
    del a, t

    x = rng.standard_normal(16_000_000, dtype=np.float32)
    tx = ts.asarray(x)
    masks_np = [rng.random(x.shape) < 0.5 for _ in range(VARIANTS)]
    masks_ts = [ts.asarray(m) for m in masks_np]
    assert np.array_equal(np.asarray(tx[masks_ts[0]]), x[masks_np[0]])
    tn = median_time(lambda m: x[m], masks_np)
    tt = median_time(lambda m: tx[m], masks_ts)
    rows.append(("x[mask] 16M f32, half true", tn, tt))
    ratios.append(("mask_getitem_time_vs_numpy", tt / tn))
    tt = median_time(lambda m: tx[m], masks_np)
    rows.append(("x[mask] with a NumPy mask (converted)", tn, tt))

    print(f"{'benchmark':<44} {'numpy':>11} {'tessera':>11} {'ours/numpy':>10}")
    for name, tn, tt in rows:
        print(f"{name:<44} {fmt(tn):>11} {fmt(tt):>11} {tt / tn:10.3f}")
    print()
    for name, value in ratios:
        print(f"ratio {name} {value:.3f}")


if __name__ == "__main__":
    main()
