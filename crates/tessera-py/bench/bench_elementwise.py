"""The Array API's elementwise functions, Tessera vs NumPy in one process (no goal in issue 17;
kept visible). Inputs vary between calls (two arrays alternate); median of repeats, per call.
Run with one thread each: ``RAYON_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``.
Prints a table and ``ratio NAME VALUE`` lines (Tessera time / NumPy time).
"""

import statistics
import timeit

import numpy as np

import tessera as ts

N = 1 << 22


def median_time(f, number=5, repeat=9):
    return statistics.median(timeit.repeat(f, number=number, repeat=repeat)) / number


def main():
    rng = np.random.default_rng(0)
    f32 = [rng.uniform(-3, 3, N).astype(np.float32) for _ in range(2)]
    f64 = [rng.uniform(-3, 3, N) for _ in range(2)]
    i64 = [rng.integers(-1000, 1000, N) for _ in range(2)]
    nz = [np.where(a == 0, 7, a) for a in i64]
    cases = [
        ("cos_f32_4M", np.cos, ts.cos, [(a,) for a in f32]),
        ("floor_f64_4M", np.floor, ts.floor, [(a,) for a in f64]),
        ("atan2_f64_4M", np.arctan2, ts.atan2, [(a, b) for a, b in zip(f64, f64[::-1])]),
        ("floor_divide_i64_4M", np.floor_divide, ts.floor_divide, [(a, b) for a, b in zip(i64, nz)]),
        ("bitwise_and_i64_4M", np.bitwise_and, ts.bitwise_and, [(a, b) for a, b in zip(i64, nz)]),
        ("isnan_f32_4M", np.isnan, ts.isnan, [(a,) for a in f32]),
    ]
    print(f"{'case':<24} {'numpy':>10} {'tessera':>10} {'ratio':>8}")
    ratios = []
    for name, npf, tsf, inputs in cases:
        t_inputs = [tuple(ts.asarray(x) for x in args) for args in inputs]
        k = [0]

        def run_np():
            k[0] ^= 1
            npf(*inputs[k[0]])

        def run_ts():
            k[0] ^= 1
            tsf(*t_inputs[k[0]])

        tn, tt = median_time(run_np), median_time(run_ts)
        print(f"{name:<24} {tn * 1e3:8.2f}ms {tt * 1e3:8.2f}ms {tt / tn:8.3f}")
        ratios.append((name, tt / tn))
    for name, r in ratios:
        print(f"ratio {name}_time_vs_numpy {r:.3f}")


if __name__ == "__main__":
    main()
