"""Matrix products and factorizations: Tessera against NumPy (OpenBLAS's GEMM and LAPACK) in
one process, at 1 and then 2 threads on both sides: each thread count runs in its own child
process with ``RAYON_NUM_THREADS`` (Tessera's pool, which faer and gemm use) and
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` (NumPy's) set to it before either library is
imported. Each case rotates among three random inputs (the same for both sides; each result is
checked against NumPy's first), alternates the libraries call by call, and compares best times.
Prints a table, then ``ratio NAME VALUE`` lines (Tessera time / NumPy time; below 1 is faster).

Goals (issue 18): matmul_f32_2048 and matmul_f64_2048 <= 1.0 at 1 and 2 threads,
batched_matmul_f32_1024x64x64 <= 1.0, solve_f64_1024 <= 1.2, svd_f64_512 <= 1.5,
eigh_f64_512 <= 1.5. The fraction of the peak FMA rate is printed by the Rust bench
(``cargo bench -p tessera --bench matmul``), which can measure the peak.

Run: ``python crates/tessera-py/bench/bench_linalg.py [--threads N]`` after
``pip install ./crates/tessera-py``.
"""

import os
import subprocess
import sys
import time


def cases(np, ts, rng):
    def mat(*shape, dtype=np.float64):
        return rng.standard_normal(shape).astype(dtype)

    def spd(n):
        a = mat(n, n)
        return a @ a.T + n * np.eye(n)

    return [
        ("matmul_f32_2048", lambda: (mat(2048, 2048, dtype=np.float32),
                                     mat(2048, 2048, dtype=np.float32)),
         np.matmul, ts.matmul, 1e-3),
        ("matmul_f64_2048", lambda: (mat(2048, 2048), mat(2048, 2048)), np.matmul, ts.matmul,
         1e-10),
        ("batched_matmul_f32_1024x64x64", lambda: (mat(1024, 64, 64, dtype=np.float32),
                                                   mat(1024, 64, 64, dtype=np.float32)),
         np.matmul, ts.matmul, 1e-4),
        ("solve_f64_1024", lambda: (mat(1024, 1024), mat(1024)), np.linalg.solve,
         ts.linalg.solve, 1e-8),
        ("svd_f64_512", lambda: (mat(512, 512),), lambda a: np.linalg.svd(a)[1],
         lambda a: ts.linalg.svd(a)[1], 1e-10),
        ("eigh_f64_512", lambda: (spd(512),), lambda a: np.linalg.eigh(a)[0],
         lambda a: ts.linalg.eigh(a)[0], 1e-10),
        ("cholesky_f64_1024", lambda: (spd(1024),), np.linalg.cholesky, ts.linalg.cholesky,
         1e-10),
        ("inv_f64_512", lambda: (mat(512, 512),), np.linalg.inv, ts.linalg.inv, 1e-8),
        ("qr_f64_512", lambda: (mat(512, 512),), lambda a: np.linalg.qr(a)[1],
         lambda a: ts.linalg.qr(a)[1], None),
        ("det_f64_batch_4096x8x8", lambda: (mat(4096, 8, 8),), np.linalg.det, ts.linalg.det,
         1e-10),
    ]


def table(threads):
    import numpy as np

    import tessera as ts

    rng = np.random.default_rng(0)
    print(f"threads: {threads} (RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')})")
    print(f"{'case':32} {'numpy':>10} {'tessera':>10} {'ratio':>7}")
    lines = []
    for name, make, f_np, f_ts, rtol in cases(np, ts, rng):
        inputs = [make() for _ in range(3)]
        tensors = [tuple(ts.asarray(x) for x in args) for args in inputs]
        for args, targs in zip(inputs, tensors):
            got, want = np.asarray(f_ts(*targs)), f_np(*args)
            if rtol is not None:
                scale = np.max(np.abs(want))
                assert np.max(np.abs(got - want)) <= rtol * scale * 10, name
        best_np = best_ts = float("inf")
        start, i = time.perf_counter(), 0
        while i < 6 or (time.perf_counter() - start < 3.0 and i < 200):
            t = time.perf_counter()
            f_np(*inputs[i % 3])
            best_np = min(best_np, time.perf_counter() - t)
            t = time.perf_counter()
            f_ts(*tensors[i % 3])
            best_ts = min(best_ts, time.perf_counter() - t)
            i += 1
        r = best_ts / best_np
        print(f"{name:32} {best_np * 1e3:8.2f}ms {best_ts * 1e3:8.2f}ms {r:7.3f}")
        lines.append(f"ratio {name}_t{threads}_time_vs_numpy {r:.3f}")
    print("\n".join(lines))


def main():
    if "--threads" in sys.argv:
        table(int(sys.argv[sys.argv.index("--threads") + 1]))
        return
    for threads in (1, 2):
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   OMP_NUM_THREADS=str(threads))
        subprocess.run([sys.executable, __file__, "--threads", str(threads)], env=env, check=True)
        print()


if __name__ == "__main__":
    main()
