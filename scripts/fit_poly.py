#!/usr/bin/env python3
"""Fits the minimax polynomials of the vectorised math functions (docs/design.md P2).

For a problem `g(x) ~ c0 + c1 x + ... + cN x^N` on `[a, b]` with an error weight `w(x)` (the
factor that turns an error in the polynomial into a relative error of the function), the fit
minimises `max |w(x) (p(x) - g(x))|`: least squares on Chebyshev points, reweighted towards
minimax by Lawson's rule (each point's weight times its error, renormalised). The coefficients
are then rounded to the target float, and the function's relative error with the rounded
coefficients is reported in units of the target's half ulp (`2^-24` for f32, `2^-53` for f64).

Run with NumPy (`.venv/bin/python scripts/fit_poly.py [name ...]`); with no name, every
problem below is fitted. It prints the coefficients as Rust array literals.
"""

import sys

import numpy as np

# name: (target width, degree N, interval, g, w, full): `full(x, p)` is the function computed
# from the polynomial values `p` (to measure its relative error against `ref(x)`).
PROBLEMS = {
    # atan(t) = t + t z P(z), z = t^2, |t| <= tan(pi/8) (derived.rs, atan_ratio).
    "atan_f32": dict(
        width="f32", deg=4, lo=0.0, hi=float(np.tan(np.pi / 8)) ** 2,
        g=lambda z: (np.arctan(np.sqrt(z)) / np.sqrt(z) - 1.0) / z,
        w=lambda z: z,
        full=lambda z, p: np.sqrt(z) + np.sqrt(z) * z * p,
        ref=lambda z: np.arctan(np.sqrt(z)),
    ),
    # tan(r) = r + r^3 P(r^2), |r| <= 0.8105 (derived.rs, TAN_F32): the f32 reduction's n is
    # x 2/pi rounded with 2/pi's f32 error, so |r| goes a little past pi/4 (mod.rs,
    # reduce_pio2_f32_split).
    "tan_f32": dict(
        width="f32", deg=6, lo=0.0, hi=0.8105 ** 2,
        g=lambda z: (np.tan(np.sqrt(z)) / np.sqrt(z) - 1.0) / z,
        w=lambda z: z * np.sqrt(z) / np.tan(np.sqrt(z)),
        full=lambda z, p: np.sqrt(z) + np.sqrt(z) * z * p,
        ref=lambda z: np.tan(np.sqrt(z)),
    ),
    # expm1(r) = r + r^2 P(r), |r| <= ln2/2 (mod.rs, reduce_exp).
    "expm1_f32": dict(
        width="f32", deg=5, lo=-np.log(2) / 2, hi=np.log(2) / 2,
        g=lambda r: (np.expm1(r) - r) / (r * r),
        w=lambda r: r * r / np.abs(np.expm1(r)),
        full=lambda r, p: r + r * r * p,
        ref=np.expm1,
    ),
    # asin(y) = y + y z P(z), z = y^2, 0 <= y <= 1/2 (derived.rs, acos): `g` from the series
    # (no cancellation near 0).
    "asin_f32": dict(
        width="f32", deg=4, lo=0.0, hi=0.25,
        g=lambda z: asin_series_tail(z),
        w=lambda z: z * np.sqrt(z) / np.arcsin(np.sqrt(z)),
        full=lambda z, p: np.sqrt(z) + np.sqrt(z) * z * p,
        ref=lambda z: np.arcsin(np.sqrt(z)),
    ),
    "asin_f64": dict(
        width="f64", deg=11, lo=0.0, hi=0.25, lawson=dict(rounds=60, keep_best=True),
        g=lambda z: asin_series_tail(z),
        w=lambda z: z * np.sqrt(z) / np.arcsin(np.sqrt(z)),
        full=lambda z, p: np.sqrt(z) + np.sqrt(z) * z * p,
        ref=lambda z: np.arcsin(np.sqrt(z)),
    ),
    # cosh(r) = 1 + z P(z) and sinh(r) = r + r z P(z), z = r^2, |r| <= 1 (hyperbolic.rs: the
    # reduction leaves r = |x| below 1, |r| <= ln2/2 above).
    "cosh_f32": dict(
        width="f32", deg=3, lo=0.0, hi=1.0,
        g=lambda z: hyp_series_tail(z, 2),
        w=lambda z: z / np.cosh(np.sqrt(z)),
        full=lambda z, p: 1.0 + z * p,
        ref=lambda z: np.cosh(np.sqrt(z)),
    ),
    "sinh_f32": dict(
        width="f32", deg=3, lo=0.0, hi=1.0,
        g=lambda z: hyp_series_tail(z, 3),
        w=lambda z: z * np.sqrt(z) / np.sinh(np.sqrt(z)),
        full=lambda z, p: np.sqrt(z) + np.sqrt(z) * z * p,
        ref=lambda z: np.sinh(np.sqrt(z)),
    ),
}


def hyp_series_tail(z, first, terms=20):
    """`sum_k z^k / (first + 2k)!`: `(cosh(r) - 1)/z` for `first = 2`, `(sinh(r)/r - 1)/z` for
    `first = 3` (`z = r^2`), without the cancellation of those formulas near 0."""
    from math import factorial
    total = np.zeros_like(z)
    for k in reversed(range(terms)):
        total = total * z + 1.0 / factorial(first + 2 * k)
    return total


def asin_series_tail(z, terms=60):
    """`(asin(y)/y - 1)/z` for `z = y^2`: the sum of `a_k z^(k-1)` from `k = 1`, with
    `a_k = (2k)! / (4^k (k!)^2 (2k + 1))`, added from the smallest term up."""
    a, coeffs = 1.0, []
    for k in range(1, terms + 1):
        a *= (2 * k - 1) / (2 * k)  # (2k)! / (4^k (k!)^2)
        coeffs.append(a / (2 * k + 1))
    total = np.zeros_like(z)
    for c in reversed(coeffs):
        total = total * z + c
    return total


HALF_ULP = {"f32": 2.0**-24, "f64": 2.0**-53}
CAST = {"f32": np.float32, "f64": np.float64}


def chebyshev_points(lo, hi, n):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def lawson(x, g, w, deg, rounds=200, keep_best=False):
    """Coefficients of the degree-`deg` polynomial minimising max |w (p - g)| on points `x`.

    With `keep_best`, the round with the smallest maximum error is kept and each point's
    error is floored at 1e-19: near `f64`'s rounding level the weights otherwise collapse onto
    a few points and the rounds diverge."""
    scale = np.max(np.abs(x))  # fit in x/scale for conditioning
    v = np.vander(x / scale, deg + 1, increasing=True)
    lw = np.full(len(x), 1.0 / len(x))
    best = (np.inf, None)
    for _ in range(rounds):
        sw = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(v * sw[:, None], g * sw, rcond=None)
        err = np.abs(w * (v @ c - g))
        if err.max() < best[0]:
            best = (err.max(), c)
        if keep_best:
            err = err + 1e-19
        lw = lw * err
        lw /= lw.sum()
    if keep_best:
        c = best[1]
    return c / scale ** np.arange(deg + 1)


def horner(c, x):
    p = np.zeros_like(x) + c[-1]
    for ck in c[-2::-1]:
        p = p * x + ck
    return p


def fit(name, prob):
    x = chebyshev_points(prob["lo"], prob["hi"], 4000)
    c = lawson(x, prob["g"](x), prob["w"](x), prob["deg"], **prob.get("lawson", {}))
    rounded = CAST[prob["width"]](c).astype(np.float64)
    dense = np.linspace(prob["lo"], prob["hi"], 200_001)[1:-1]
    dense = dense[dense != 0.0]
    ref = prob["ref"](dense)
    rel = np.abs(prob["full"](dense, horner(rounded, dense)) / ref - 1.0)
    print(f"// {name}: degree {prob['deg']}, max relative error "
          f"{rel.max() / HALF_ULP[prob['width']]:.3f} of a half ulp (coefficients rounded)")
    body = ", ".join(repr(float(v)) for v in CAST[prob["width"]](c))
    print(f"[{body}]")


def main():
    names = sys.argv[1:] or list(PROBLEMS)
    for name in names:
        fit(name, PROBLEMS[name])


if __name__ == "__main__":
    main()
