#!/usr/bin/env python3
"""Prints the tables of the `f64` table methods (docs/design.md P2): the natural logarithm's
(crates/tessera/src/kernels/vmath/ln_table64.rs) and the exponential's (exp_table64.rs).

For each `c_i` of `log_table.rs`'s `INVC` (an `f32`, so exact in `f64`), `T_i = -ln(c_i)`
is computed with Python's `decimal` to 50 digits and split into `hi`, the nearest multiple
of `2^-42` (so that `k ln2_hi + T_i,hi` is exact for `|k| < 2^11`), and `lo`, the rest
rounded to `f64`. `ln 2` is split the same way. For `exp`, `2^(j/16)` for `j < 16`, to
50 digits, as the nearest `f64` (`hi`) and the rest rounded (`lo`).
Run: `python3 scripts/tables64.py`.
"""

from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 50

# log_table.rs's INVC, as f32 bit patterns (its test recomputes them).
INVC = [
    1.398_907_1, 1.340_314_1, 1.286_432_1, 1.236_715, 1.190_697_7, 1.147_982_1,
    1.108_225_1, 1.071_129_7, 1.036_437_3, 1.0, 0.948_148_13, 0.895_104_9,
    0.847_682_1, 0.805_031_4, 0.766_467_1, 0.731_428_56,
]


def f32(x):
    import struct
    return struct.unpack("f", struct.pack("f", x))[0]


def split(t):
    """`t` (a Decimal) as (hi: a multiple of 2^-42, as its numerator; lo: the rest, f64)."""
    num = int((t * (1 << 42)).to_integral_value())
    lo = float(Fraction(t) - Fraction(num, 1 << 42))
    return num, lo


def main():
    his, los = [], []
    for c in INVC:
        c = f32(c)
        t = -Decimal(Fraction(c).numerator) .ln() + Decimal(Fraction(c).denominator).ln()
        num, lo = split(t)
        his.append(num)
        los.append(lo)
    print("const HI_2_42THS: [i64; 16] = [" + ", ".join(str(h) for h in his) + "];")
    print("const LO: [f64; 16] = [" + ", ".join(repr(l) for l in los) + "];")
    num, lo = split(Decimal(2).ln())
    print(f"const LN2_HI: f64 = {num}.0 / (1u64 << 42) as f64;")
    print(f"const LN2_LO: f64 = {lo!r};")
    his, los = [], []
    for j in range(16):
        t = Decimal(2) ** (Decimal(j) / 16)
        hi = float(t)
        his.append(hi)
        los.append(float(Fraction(t) - Fraction(hi)))
    print("const T_HI: [f64; 16] = [" + ", ".join(repr(h) for h in his) + "];")
    print("const T_LO: [f64; 16] = [" + ", ".join(repr(l) for l in los) + "];")


main()
