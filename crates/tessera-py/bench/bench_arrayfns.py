"""Array API sorting, searching, set and cumulative functions: Tessera vs NumPy, one process.

Each case draws a few random inputs up front and cycles through them, so no call sees the
input of the call before (caches and branch predictors warm only as in real use); the time is
the median of single calls. Prints a table and ``ratio NAME VALUE`` lines (Tessera time /
NumPy time; below 1 is faster). Run with one thread each, e.g.

    RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python crates/tessera-py/bench/bench_arrayfns.py

``sort_f64_16M`` is also measured with Tessera on 2 threads (a child process with
``RAYON_NUM_THREADS=2``; NumPy's sort is single-threaded).
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np

import tessera as ts

VARIANTS = 3


def median_time(fn, inputs, repeat):
    """Median seconds of ``fn(x)`` over ``repeat`` calls cycling through ``inputs``."""
    times = []
    for k in range(repeat):
        x = inputs[k % len(inputs)]
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def case(name, make, np_fn, ts_fn, check, repeat=7):
    """Times one case; ``make(rng)`` gives a NumPy input (a tuple for several arguments)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    np_in = [make(rng) for _ in range(VARIANTS)]
    ts_in = [tuple(ts.asarray(a) for a in x) if isinstance(x, tuple) else ts.asarray(x) for x in np_in]
    check(ts_fn(ts_in[0]), np_fn(np_in[0]))
    tn = median_time(np_fn, np_in, repeat)
    tt = median_time(ts_fn, ts_in, repeat)
    return name, tn, tt


def same(got, want):
    assert np.array_equal(np.asarray(got), want, equal_nan=True)


def sort_case():
    return case(
        "sort_f64_16M",
        lambda r: r.standard_normal(16 << 20),
        lambda a: np.sort(a),
        lambda t: ts.sort(t),
        same,
    )


def main():
    if "--sort-only" in sys.argv:
        name, tn, tt = sort_case()
        print(f"{tt!r} {tn!r}")
        return
    rows = [
        sort_case(),
        case(
            "argsort_f32_4M",
            lambda r: r.standard_normal(4 << 20).astype(np.float32),
            lambda a: np.argsort(a, kind="stable"),
            lambda t: ts.argsort(t),
            same,
        ),
        case(
            "unique_i64_4M",
            lambda r: r.integers(0, 1 << 20, 4 << 20),
            lambda a: np.unique_values(a),
            lambda t: ts.unique_values(t),
            # The standard leaves the order unspecified (NumPy >= 2.3 hashes: unsorted).
            lambda got, want: same(got, np.sort(want)),
        ),
        case(
            "where_f32_16M",
            lambda r: (r.random(16 << 20) < 0.5, r.random(16 << 20, dtype=np.float32), r.random(16 << 20, dtype=np.float32)),
            lambda x: np.where(*x),
            lambda x: ts.where(*x),
            same,
        ),
        case(
            "cumulative_sum_f64_16M",
            lambda r: r.standard_normal(16 << 20),
            lambda a: np.cumulative_sum(a),
            lambda t: ts.cumulative_sum(t),
            same,
        ),
    ]
    env = dict(os.environ, RAYON_NUM_THREADS="2", TESSERA_NUM_THREADS="2")
    out = subprocess.run([sys.executable, __file__, "--sort-only"], env=env, capture_output=True, text=True, check=True)
    tt2, tn2 = map(float, out.stdout.split())
    print(f"{'case':28} {'numpy':>10} {'tessera':>10} {'ratio':>7}")
    for name, tn, tt in rows:
        print(f"{name:28} {tn * 1e3:8.1f}ms {tt * 1e3:8.1f}ms {tt / tn:7.3f}")
    print(f"{'sort_f64_16M (2 threads)':28} {tn2 * 1e3:8.1f}ms {tt2 * 1e3:8.1f}ms {tt2 / tn2:7.3f}")
    for name, tn, tt in rows:
        print(f"ratio {name}_time_vs_numpy {tt / tn:.3f}")
    print(f"ratio sort_f64_16M_2threads_time_vs_numpy {tt2 / tn2:.3f}")


if __name__ == "__main__":
    main()
