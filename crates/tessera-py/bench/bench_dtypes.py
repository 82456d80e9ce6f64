"""Tessera vs NumPy on the dtypes of issue 17 (docs/performance.md: ratios, not absolute times).

One process, both libraries on one thread (run with RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1
OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1), inputs that vary between calls, median of repeats.
Prints a table and ``ratio NAME VALUE`` lines (Tessera time / NumPy time; goal <= 1.0).
Run: ``python crates/tessera-py/bench/bench_dtypes.py`` after ``pip install ./crates/tessera-py``.
"""

import statistics
import time

import numpy as np

import tessera as ts


def median_time(fn, inputs, repeat=9):
    """Median seconds per call of ``fn(x, y)`` over ``repeat`` calls, cycling ``inputs``."""
    times = []
    for k in range(repeat):
        x, y = inputs[k % len(inputs)]
        t0 = time.perf_counter()
        fn(x, y)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def complex_pairs(n, count, rng):
    def one():
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)

    return [(one(), one()) for _ in range(count)]


def main():
    rng = np.random.default_rng(0)
    rows, ratios = [], []

    # complex64 multiply, 16M elements (num-complex's (ac - bd, ad + bc), as NumPy's).
    n = 16 * 1024 * 1024
    pairs = complex_pairs(n, 3, rng)
    tpairs = [(ts.asarray(a), ts.asarray(b)) for a, b in pairs]
    got = np.asarray(tpairs[0][0] * tpairs[0][1])
    want = pairs[0][0] * pairs[0][1]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    tn = median_time(lambda a, b: a * b, pairs)
    tt = median_time(lambda a, b: a * b, tpairs)
    rows.append(("complex64 a * b, 16M", tn, tt))
    ratios.append(("complex_mul_c64_16M_time_vs_numpy", tt / tn))

    print(f"{'case':40} {'numpy':>12} {'tessera':>12}")
    for name, tn, tt in rows:
        print(f"{name:40} {tn * 1e3:9.2f} ms {tt * 1e3:9.2f} ms")
    for name, r in ratios:
        print(f"ratio {name} {r:.3f}")


if __name__ == "__main__":
    main()
