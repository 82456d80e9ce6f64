"""Fourier transforms: ``tessera.fft`` against ``numpy.fft`` (pocketfft) in one process, one
thread each (Tessera's pool capped with RAYON_NUM_THREADS=1 before import; NumPy's FFT is
single-threaded). Inputs are fresh random arrays per repeat (the same ones for both sides).
Prints a table, then ``ratio NAME VALUE`` lines (Tessera time / NumPy time; below 1 is faster).

Run: ``python crates/tessera-py/bench/bench_fft.py`` after ``pip install ./crates/tessera-py``.
"""

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

import tessera as ts  # noqa: E402


def timed(make, f, repeat=7):
    best = float("inf")
    for i in range(repeat):
        x = make(i)
        t = time.perf_counter()
        f(x)
        best = min(best, time.perf_counter() - t)
    return best


def main():
    rng = np.random.default_rng(0)
    cases = [
        ("fft_c128_1M", lambda: rng.random(1 << 20) + 1j * rng.random(1 << 20), "fft"),
        ("rfft_f64_1M", lambda: rng.random(1 << 20), "rfft"),
        ("fft_c128_prime_100003", lambda: rng.random(100003) + 1j * rng.random(100003), "fft"),
        ("ifft_c64_3x5x7_65536", lambda: (rng.random(3 * 5 * 7 * 4096 * 4) + 1j).astype(np.complex64), "ifft"),
        ("fftn_c128_512x512", lambda: rng.random((512, 512)) + 1j * rng.random((512, 512)), "fftn"),
    ]
    print(f"{'transform':28} {'numpy':>10} {'tessera':>10}")
    ratios = []
    for name, make, fn in cases:
        arrays = [make() for _ in range(3)]
        tensors = [ts.asarray(a) for a in arrays]
        for a, t in zip(arrays, tensors):
            np.testing.assert_allclose(np.asarray(getattr(ts.fft, fn)(t)), getattr(np.fft, fn)(a),
                                       rtol=1e-3, atol=1e-3 * np.abs(a).max() * a.size ** 0.5)
        tn = timed(lambda i: arrays[i % 3], getattr(np.fft, fn))
        tt = timed(lambda i: tensors[i % 3], getattr(ts.fft, fn))
        print(f"{name:28} {tn * 1e3:8.2f}ms {tt * 1e3:8.2f}ms")
        ratios.append((name, tt / tn))
    for name, r in ratios:
        print(f"ratio {name}_time_vs_numpy {r:.3f}")


if __name__ == "__main__":
    main()
