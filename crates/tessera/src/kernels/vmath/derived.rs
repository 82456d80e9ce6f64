//! The functions built from the core ones of [`vmath`](super) (docs/design.md P2), as
//! branch-free code that vectorises in the same way:
//! - `log1p`, `asinh` and `atanh` are the table method of `ln_table.rs` (`f32`) and
//!   `ln_table64.rs` (`f64`); `acosh` uses `log1p`'s older form here,
//!   `log(u) + (x - (u - 1)) / u` with `u = 1 + x` rounded: the second term is the rounding
//!   error of `u` carried through `log`'s derivative, so the result keeps the accuracy of
//!   `log` near 0. One division serves `log`'s reduction and `1/u` (`log_corrected` in
//!   `vmath`).
//! - `atan(y/x)` of a ratio of non-negative numbers, with one division: reduced to
//!   `|t| <= tan(π/8)` as `t = -x/y` (plus π/2) above `tan(3π/8)` and `(y - x)/(y + x)`
//!   (plus π/4) above `tan(π/8)`, then `t - t³/3 + t⁵/5 - ...` with enough terms that the
//!   truncation is far below half an ulp (π/2 and π/4 in two parts). `atan(a)` is the ratio
//!   `a/1`.
//! - `atan2(y, x)`: the ratio `min/max` of the magnitudes (halved above `MAX/4`, so `y + x`
//!   cannot overflow), reflected into the right octant (`π/2 - r`, `π - r`), with the C99 special
//!   values (`atan2(±0, -0) = ±π`, `atan2(±inf, ±inf)` the diagonals). It divided twice
//!   before (the ratio, then the reduction).
//! - `asin(x)`: a minimax polynomial `x + x z P(z)` (`z = x²`) on `|x| <= 1/2`, and
//!   `π/2 - 2 asin(s)` with `s = sqrt((1 - |x|)/2)` above (`s`'s rounding carried to second
//!   order). `acos(x)`: `π/2 - asin(x)` for `|x| <= 1/2`, and `2 asin(s)` or `π - 2 asin(s)`
//!   above, which keeps its relative accuracy near `x = 1` where `π/2 - asin(x)` would cancel.
//! - `acosh(x) = log1p(t + sqrt(t (t + 2)))` with `t = x - 1`, `log(x) + ln 2` once the
//!   rest is below half an ulp (one logarithm serves both); `asinh` and `atanh` (in the
//!   table modules) are `log1p(a + a²/(1 + sqrt(1 + a²)))` and `log1p(2a + 2a²/(1 - a))/2`.
//! - `logaddexp(x, y) = max(x, y) + log1p(exp(-|x - y|))`, `x + ln 2` where `x == y`;
//! - `hypot(x, y) = hi sqrt(1 + (lo/hi)²)` over the magnitudes (no overflow, no underflow);
//!   `log2` and `log10` are the table methods of `log_table.rs` (`f32`) and `ln_table64.rs`
//!   (`f64`: `ln(x)` before its last rounding, times `log2(e)` or `log10(e)` in two parts, so
//!   `log2(2^k) = k` and `log10(10^k) = k` exactly).
//!
//! The tangents are in `tangent.rs`.
//!
//! Signed zeros are kept (`atan(-0) = -0`, ...), and the results at `±inf`, `±1` and NaN
//! are C99's. The maximum errors are measured and asserted by `tests/vector_math.rs`.

/// `[-1/3, 1/5, -1/7, ...]`: `atan(t) = t + t z (c0 + c1 z + ...)`, `z = t²`.
const fn atan_coeffs<const N: usize>() -> [f64; N] {
    let (mut c, mut k) = ([0.0; N], 0);
    while k < N {
        let sign = if k % 2 == 0 { -1.0 } else { 1.0 };
        c[k] = sign / (2 * k + 3) as f64;
        k += 1;
    }
    c
}

/// `π/2 - FRAC_PI_2`: the part of π/2 below `f64` precision.
const PIO2_TAIL: f64 = 6.123_233_995_736_766e-17;

/// `log2`, `log10`, `log1p`, `asinh` and `atanh`: the table methods of `log_table.rs` and
/// `ln_table.rs` (`f32`) and of `ln_table64.rs` (`f64`).
macro_rules! table_logs {
    (f32) => {
        pub use super::super::ln_table::{asinh, atanh, log1p};
        pub use super::super::log_table::{log10, log10_normal, log2, log2_normal};
    };
    (f64) => {
        pub use super::super::ln_table64::{asinh, atanh, log10, log1p, log2};
    };
}

/// One width's derived functions: `$na` terms of the `atan` series, `$large` the magnitude
/// from which `acosh` (and `f64`'s `asinh`) are `log(x) + ln 2`.
macro_rules! derived {
    ($t:ident, $i:ident, atan: $na:expr, atan2: $atan2_c:ident, asin: $asin_c:ident,
     large: $large:expr) => {
        /// The derived functions for this width.
        pub mod $t {
            use super::super::$t::{cast, horner, log_corrected, log_special};
            use super::{atan_coeffs, PIO2_TAIL};
            use std::f64::consts::{FRAC_PI_2, SQRT_2};

            const ATAN_C: [$t; $na] = cast(atan_coeffs::<$na>());
            const ATAN2_C: [$t; super::$atan2_c.len()] = super::$atan2_c;
            const ASIN_C: [$t; super::$asin_c.len()] = super::$asin_c;
            const PIO2_HI: $t = FRAC_PI_2 as $t;
            const PIO2_LO: $t = ((FRAC_PI_2 - PIO2_HI as f64) + PIO2_TAIL) as $t;
            const PIO4_HI: $t = PIO2_HI * 0.5;
            const PIO4_LO: $t = PIO2_LO * 0.5;
            const TAN_PI_8: $t = (SQRT_2 - 1.0) as $t;
            const TAN_3PI_8: $t = (SQRT_2 + 1.0) as $t;
            const LARGE: $t = $large;

            table_logs!($t);

            /// `atan(y / x)` for `y, x >= 0` (not both zero, not both infinite; NaN passes
            /// through), in `[0, π/2]`, with one division: the ratio is reduced to
            /// `|t| <= tan(π/8)` as `-x / y` (plus π/2) above `tan(3π/8)` and
            /// `(y - x) / (y + x)` (plus π/4) above `tan(π/8)`, where `y + x` stays finite
            /// (`x, y <= MAX / 2`).
            #[inline(always)]
            fn atan_ratio(y: $t, x: $t) -> $t {
                let big = y > TAN_3PI_8 * x;
                let mid = y > TAN_PI_8 * x;
                let num = if big {
                    -x
                } else if mid {
                    y - x
                } else {
                    y
                };
                let den = if big {
                    y
                } else if mid {
                    y + x
                } else {
                    x
                };
                let (hi, lo) = if big {
                    (PIO2_HI, PIO2_LO)
                } else if mid {
                    (PIO4_HI, PIO4_LO)
                } else {
                    (0.0, 0.0)
                };
                let t = num / den;
                let z = t * t;
                hi + (t + (t * z * horner(z, &ATAN_C) + lo))
            }

            /// Arctangent.
            #[inline(always)]
            pub fn atan(x: $t) -> $t {
                atan_ratio(x.abs(), 1.0).copysign(x)
            }

            /// The angle of the point `(x, y)`, in `[-π, π]`: `k π/4 ± atan(t)`, where
            /// `atan(t)` is a polynomial (`ATAN2_F32`, `ATAN2_F64`) on the ratio of the smaller
            /// magnitude to the larger one (reduced by `π/4` above `tan(π/8)`), and `k` and the
            /// sign count the octant's reflections. The multiple of `π/4` is added last, in
            /// one fused multiply-add: the dependent chain after the division is the
            /// polynomial and three additions (it was the polynomial, then the `π/4`, `π/2`
            /// and `π` reflections one after another, and latency set the loop's speed).
            #[inline(always)]
            pub fn atan2(y: $t, x: $t) -> $t {
                let (a, b) = (y.abs(), x.abs());
                let steep = a > b;
                let (lo, hi) = if steep { (b, a) } else { (a, b) };
                // Halved (exactly) only where `lo + hi` could overflow: halving a subnormal `lo`
                // next to a moderate `hi` would round it.
                let half = if hi > <$t>::MAX * 0.25 { 0.5 } else { 1.0 };
                // Both zero: the angle of the signs; both infinite: a diagonal.
                let (lo, hi) = if hi == 0.0 {
                    (0.0, 1.0)
                } else if lo == <$t>::INFINITY {
                    (1.0, 1.0)
                } else {
                    (lo * half, hi * half)
                };
                let mid = lo > TAN_PI_8 * hi;
                // One branch on `mid`: the octant's `k` below is made from `m`. With a second
                // `if mid` there, LLVM threaded that branch through the division and the
                // polynomial, and the loop ran both twice (64 Ki `f64` 174 -> 112 us, `f32`
                // 43 -> 35 us).
                let m: $t = if mid { 1.0 } else { 0.0 };
                let (num, den) = if mid { (lo - hi, lo + hi) } else { (lo, hi) };
                let t = num / den;
                let z = t * t;
                let p = (t * z).mul_add(horner(z, &ATAN2_C), t);
                // The octant: `k π/4 + s p`, after the reflections `π/2 - r` (steep) and
                // `π - r` (x negative, -0 included).
                let (k, s) = if steep { (2.0 - m, -1.0) } else { (m, 1.0) };
                let (k, s): ($t, $t) = if x.is_sign_negative() {
                    (4.0 - k, -s)
                } else {
                    (k, s)
                };
                let r = k.mul_add(PIO4_HI, s.mul_add(p, k * PIO4_LO));
                if x.is_nan() || y.is_nan() {
                    x + y
                } else {
                    r.copysign(y)
                }
            }

            /// `1/d` within 1.6% for a positive normal `d`, without the divider: the
            /// bit-pattern estimate `2 bits(1) - bits(d)` (exact at powers of 2, at most 12.5%
            /// high between them) and one Newton step (which squares the relative error).
            /// Enough for a correction term such as `asin`'s `s_lo`, which is below half an
            /// ulp of the result, so its error stays below a sixtieth of one: with a division
            /// there, `asin` waited on the divider its square root already occupies (f64, 64
            /// Ki: 112 us against `acos`'s 71).
            #[inline(always)]
            fn rough_recip(d: $t) -> $t {
                let one = (1.0 as $t).to_bits();
                let r = <$t>::from_bits((one + one).wrapping_sub(d.to_bits()));
                r * (-d).mul_add(r, 2.0)
            }

            /// Arcsine, from [`acos`]'s polynomial: `x + x z P(z)` for `|x| <= 1/2`; above,
            /// `π/2 - 2 asin(s)` with `s = sqrt((1 - |x|)/2)`. There `π/2 - 2s` is exact
            /// where the two are close (Sterbenz), and `s`'s rounding is carried as
            /// `s_lo = (z - s²)/(2s)` (`rough_recip`), so no cancellation shows near
            /// `|x| = 1/2`. (It was
            /// `atan(x / sqrt(1 - x²))`: the same square root, a division, and the 8- or
            /// 19-term `atan` series with its reduction.)
            #[inline(always)]
            pub fn asin(x: $t) -> $t {
                let a = x.abs();
                let small = a <= 0.5;
                let z = if small { a * a } else { (1.0 - a) * 0.5 };
                let s = if small { a } else { z.sqrt() };
                let p = (s * z) * horner(z, &ASIN_C);
                let s_lo = (-s).mul_add(s, z) * rough_recip((s + s).max(<$t>::MIN_POSITIVE));
                let big = (PIO2_HI - 2.0 * s) + (PIO2_LO - 2.0 * (s_lo + p));
                let y = if small { s + p } else { big };
                y.copysign(x)
            }

            /// Arccosine, from `asin(s) = s + s z P(z)` (`z = s²`, `0 <= |s| <= 1/2`,
            /// `P` = `ASIN_F32`/`ASIN_F64`): `π/2 - asin(x)` for `|x| <= 1/2`; above,
            /// `s = sqrt((1 - |x|)/2)` (exact up to the square root's rounding) and
            /// `2 asin(s)` for `x > 0`, `π - 2 asin(s)` for `x < 0`. One square root and no
            /// division (`2 atan(sqrt((1 - x)/(1 + x)))` took a division, a square root, a
            /// second division and a longer series).
            #[inline(always)]
            pub fn acos(x: $t) -> $t {
                let a = x.abs();
                let small = a <= 0.5;
                let z = if small { x * x } else { (1.0 - a) * 0.5 };
                let s = if small { x } else { z.sqrt() };
                let p = (s * z) * horner(z, &ASIN_C);
                // `π/2 - asin(s)`, with π/2 in two parts.
                let rest = PIO2_HI - (s + (p - PIO2_LO));
                if small {
                    rest
                } else if x > 0.0 {
                    2.0 * (s + p)
                } else {
                    2.0 * rest
                }
            }

            /// `log1p(w)`, or `log(2a)` where `large` (`w` finite either way): one logarithm
            /// for both branches of `asinh` and `acosh` (computing `log(a) + ln 2` beside
            /// `log1p` and selecting took a second logarithm's time). The logarithm's operand
            /// is blended by products with `large`'s 0 or 1, which are exact: through selects,
            /// LLVM computed the logarithm of both operands and selected after.
            #[inline(always)]
            fn log1p_or_log2x(w: $t, a: $t, large: bool) -> $t {
                let l: $t = if large { 1.0 } else { 0.0 };
                let u1 = 1.0 + w;
                let u = a.mul_add(l, u1 * (1.0 - l));
                let c = (w - (u1 - 1.0)) * (1.0 - l);
                log_special(u, log_corrected(u, c, large as $i))
            }

            /// Inverse hyperbolic cosine (NaN below 1).
            #[inline(always)]
            pub fn acosh(x: $t) -> $t {
                let t = x.min(LARGE) - 1.0;
                let y = log1p_or_log2x(t + (t * (t + 2.0)).sqrt(), x, x > LARGE);
                if x < 1.0 {
                    <$t>::NAN
                } else {
                    y
                }
            }

            /// `sqrt(x² + y²)` without undue overflow or underflow, as
            /// `hi sqrt(1 + (lo/hi)²)`; infinite when either is infinite, even with a NaN.
            #[inline(always)]
            pub fn hypot(x: $t, y: $t) -> $t {
                let (a, b) = (x.abs(), y.abs());
                let (lo, hi) = if a > b { (b, a) } else { (a, b) };
                let r = lo / hi;
                let h = hi * (1.0 + r * r).sqrt();
                let h = if hi == 0.0 && lo == 0.0 { 0.0 } else { h };
                if a == <$t>::INFINITY || b == <$t>::INFINITY {
                    <$t>::INFINITY
                } else {
                    h
                }
            }
        }
    };
}

/// The `f32` polynomial `P` of `atan2`'s `atan(t) ≈ t + t z P(z)` on `|t| <= tan(π/8)`:
/// minimax for the relative error (`scripts/fit_poly.py atan_f32`), whose own error is below
/// 0.05 of a half ulp; five terms where the Taylor series needs eight. `atan_ratio` (`atan`)
/// keeps the eight Taylor terms (with these five, the `acos` built on it until 2026-12-02
/// reached 3 ulp).
const ATAN2_F32: [f32; 5] = [
    -0.333_333_16,
    0.199_984_9,
    -0.142_438_49,
    0.105_960_01,
    -0.060_834_53,
];

/// The `f64` polynomial of `atan2`: the Taylor series, as `atan_ratio`'s.
const ATAN2_F64: [f64; 19] = atan_coeffs::<19>();

/// The `f32` polynomial `P` of `acos`'s and `asin`'s `asin(s) ≈ s + s z P(z)` on `|s| <= 1/2`: minimax for
/// the relative error (`scripts/fit_poly.py asin_f32`), its own error 0.1 of a half ulp.
const ASIN_F32: [f32; 5] = [
    0.166_667_52,
    0.074_952_975,
    0.045_470_376,
    0.024_179_516,
    0.042_166_308,
];

/// The `f64` polynomial of `acos` and `asin` (`scripts/fit_poly.py asin_f64`), its own error
/// 0.51 of a half ulp in exact arithmetic (at `s ≈ 0.125`; the script, measuring in `f64`
/// against NumPy's `arcsin`, reports 0.36): the Taylor series would need twice the terms.
const ASIN_F64: [f64; 12] = [
    0.166_666_666_666_636_46,
    0.075_000_000_007_531_99,
    0.044_642_856_508_775_61,
    0.030_381_971_292_750_838,
    0.022_371_488_393_681_25,
    0.017_363_486_633_713_326,
    0.013_850_306_212_294_996,
    0.012_384_746_928_689_724,
    0.005_647_868_065_010_764,
    0.021_811_672_668_841_72,
    -0.019_633_692_907_472_12,
    0.034_143_245_872_157_53,
];

derived!(f32, i32, atan: 8, atan2: ATAN2_F32, asin: ASIN_F32, large: 8192.0);
derived!(f64, i64, atan: 19, atan2: ATAN2_F64, asin: ASIN_F64, large: 268_435_456.0);

/// `logaddexp` of each width: `f64`'s, and `f32`'s computed in `f64` and rounded once
/// (within 1 ulp except for results under about `1e-9`, where the absolute error of the `f64`
/// formula's cancellation, about `2^-52 max(1, |x|, |y|)`, is more; `f32` arithmetic lost
/// thousands of ulp there).
pub mod logaddexp {
    use super::super::f64::{exp_series as exp, log_corrected, log_special};

    /// `log1p(e)` for `e = exp(-|x - y|)` in `[0, 1]` (or NaN) by the series method: it
    /// vectorises in the compiler's copies of the two-operand loop, where the table method's
    /// lookups (`ln_table64.rs`, the `log1p` of the one-operand loop) became scalar code and
    /// took `logaddexp` of 64 Ki `f64` from 0.36 to 2.4 ms.
    #[inline(always)]
    fn log1p(e: f64) -> f64 {
        let u = 1.0 + e;
        log_special(u, log_corrected(u, e - (u - 1.0), 0))
    }

    /// `log(exp(x) + exp(y))` without overflow, as `max(x, y) + log1p(exp(-|x - y|))`
    /// (NumPy's formula); `x + ln 2` where `x == y`, so equal infinities give that infinity
    /// (not `inf - inf`); NaN when either is NaN (through `x - y`). Where the sum is near 0
    /// (`e^x + e^y ≈ 1`) its two terms cancel, and the result keeps the absolute error of
    /// `log1p`, not a relative one.
    #[inline(always)]
    pub fn f64(x: f64, y: f64) -> f64 {
        let hi = if x > y { x } else { y };
        let r = hi + log1p(exp(-(x - y).abs()));
        if x == y {
            x + std::f64::consts::LN_2
        } else {
            r
        }
    }

    /// [`f64()`] of the widened operands, rounded to `f32` (in `f32` arithmetic the
    /// cancellation cost 7000 ulp).
    #[inline(always)]
    pub fn f32(x: f32, y: f32) -> f32 {
        f64(x as f64, y as f64) as f32
    }
}
