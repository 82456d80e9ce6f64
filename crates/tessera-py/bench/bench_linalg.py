"""Matrix products and factorizations: Tessera against NumPy (OpenBLAS's GEMM and LAPACK), at
1 and then 2 threads on both sides. Each library runs in its own child process per thread
count, with ``RAYON_NUM_THREADS`` (Tessera's pool, which faer uses) or ``OPENBLAS_NUM_THREADS``
/ ``OMP_NUM_THREADS`` (NumPy's) set before import: OpenBLAS's threads spin-wait after each call
and took a core from Tessera's pool when the two alternated in one process (2-thread matmul
1.3 there, 0.95 apart). Inputs come from the same seed in both children; the Tessera child
checks each result against NumPy's (its NumPy limited to one thread) before timing. Each case
rotates among three inputs and keeps the best time. Prints a table, then ``ratio NAME VALUE``
lines (Tessera time / NumPy time; below 1 is faster).

Goals (issue 18): matmul_f32_2048 and matmul_f64_2048 <= 1.0 at 1 and 2 threads,
batched_matmul_f32_1024x64x64 <= 1.0, solve_f64_1024 <= 1.2, svd_f64_512 <= 1.5,
eigh_f64_512 <= 1.5. The fraction of the peak FMA rate is printed by the Rust bench
(``cargo bench -p tessera --bench matmul``), which can measure the peak.

Run: ``python crates/tessera-py/bench/bench_linalg.py`` after ``pip install ./crates/tessera-py``.
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


def child(threads, lib):
    """Times every case with one library; prints ``time NAME SECONDS`` lines."""
    import numpy as np

    ts = None
    if lib == "tessera":
        import tessera as ts
    rng = np.random.default_rng(0)
    names = []
    for name, make, f_np, f_ts, rtol in cases(np, ts or _NoTessera(), rng):
        inputs = [make() for _ in range(3)]
        if lib == "tessera":
            args = [tuple(ts.asarray(x) for x in a) for a in inputs]
            for a, t in zip(inputs, args):
                got, want = np.asarray(f_ts(*t)), f_np(*a)
                if rtol is not None:
                    assert np.max(np.abs(got - want)) <= rtol * np.max(np.abs(want)) * 10, name
            f = f_ts
        else:
            args, f = inputs, f_np
        best, start, i = float("inf"), time.perf_counter(), 0
        while i < 6 or (time.perf_counter() - start < 2.0 and i < 200):
            t = time.perf_counter()
            f(*args[i % 3])
            best = min(best, time.perf_counter() - t)
            i += 1
        print(f"time {name} {best!r}", flush=True)
        names.append(name)


class _NoTessera:
    """Stands in for the module in the NumPy child (the Tessera functions are never called)."""

    def __getattr__(self, name):
        return self


def run(threads, lib):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads if lib == "numpy" else 1),
               OMP_NUM_THREADS=str(threads if lib == "numpy" else 1))
    out = subprocess.run([sys.executable, __file__, "--child", str(threads), lib], env=env,
                         check=True, capture_output=True, text=True).stdout
    return {line.split()[1]: float(line.split()[2]) for line in out.splitlines()
            if line.startswith("time ")}


def main():
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        child(int(sys.argv[i + 1]), sys.argv[i + 2])
        return
    lines = []
    for threads in (1, 2):
        t_np, t_ts = run(threads, "numpy"), run(threads, "tessera")
        print(f"threads: {threads} (each library in its own process)")
        print(f"{'case':32} {'numpy':>10} {'tessera':>10} {'ratio':>7}")
        for name in t_np:
            r = t_ts[name] / t_np[name]
            print(f"{name:32} {t_np[name] * 1e3:8.2f}ms {t_ts[name] * 1e3:8.2f}ms {r:7.3f}")
            lines.append(f"ratio {name}_t{threads}_time_vs_numpy {r:.3f}")
        print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
