"""DLPack import: ``tessera.from_dlpack`` against ``numpy.from_dlpack`` on the same NumPy
arrays, in one process (issue 17's ``from_dlpack_time_vs_numpy``; docs/design.md I1-I3).

Both adopt the array's memory without a copy, so this measures the per-call cost of the
protocol: the producer's ``__dlpack__`` (NumPy's in both cases), reading the capsule, and
making the array or tensor. Eight arrays of different shapes, dtypes and strides are imported
in turn. One thread (nothing here runs in parallel). Prints a table, then
``ratio NAME VALUE`` lines (Tessera time / NumPy time; below 1 is faster).

Run: ``python crates/tessera-py/bench/bench_dlpack.py`` after
``pip install ./crates/tessera-py``.
"""

import timeit

import numpy as np

import tessera as ts


def best_pair(stmt_a, stmt_b, number, repeat=21):
    """The best time per call of each statement over `repeat` rounds, the two timed in turn
    within each round: a burst of load from elsewhere on the machine then slows both, not
    one side's whole series."""
    a = b = float("inf")
    for _ in range(repeat):
        a = min(a, timeit.timeit(stmt_a, number=number) / number)
        b = min(b, timeit.timeit(stmt_b, number=number) / number)
    return a, b


def main():
    rng = np.random.default_rng(0)
    base = rng.random((64, 64, 8))
    arrays = [
        base,
        base[::2],
        base.transpose(2, 0, 1),
        base[:, ::-1, 3],
        np.arange(1000, dtype=np.int32),
        rng.random((7, 9)).astype(np.float32),
        np.zeros((3, 4, 5, 6), dtype=np.int64)[..., 1:],
        rng.random(5).astype(np.float16),
    ]
    for a in arrays:
        np.testing.assert_array_equal(np.asarray(ts.from_dlpack(a)), np.from_dlpack(a))

    def cycle(f):
        for a in arrays:
            f(a)

    tn, tt = best_pair(lambda: cycle(np.from_dlpack), lambda: cycle(ts.from_dlpack), 5_000)
    tn, tt = tn / len(arrays), tt / len(arrays)
    print(f"{'operation':44} {'numpy':>10} {'tessera':>10}")
    print(f"{'from_dlpack, 8 NumPy arrays in turn':44} {tn * 1e6:8.2f}us {tt * 1e6:8.2f}us")
    print(f"ratio from_dlpack_time_vs_numpy {tt / tn:.3f}")


if __name__ == "__main__":
    main()
