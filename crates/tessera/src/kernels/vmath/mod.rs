//! Vectorisable `exp`, `expm1`, `log`, `sin` and `cos` for `f32` and `f64`
//! (docs/design.md P2).
//!
//! Each function is branch-free scalar code: range reduction by integer and float bit
//! operations, a polynomial, and special values chosen by `select`s at the end. A loop that
//! applies one of them to a slice is vectorised by the compiler (and, through
//! [`with_simd`](super::simd::with_simd), 8 `f32` or 4 `f64` lanes wide on AVX2), where a
//! call to the C library's `expf` runs one element at a time.
//!
//! The methods are the textbook ones, with Taylor coefficients written as what they are
//! (`1/k!`, `2/(2k+1)`) and enough terms that the truncation is far below half an ulp:
//! - `exp`: `x = n ln2 + r` with `ln2` split in two (Cody–Waite, `n ln2_hi` exact),
//!   `|r| <= ln2/2`, `exp(r) = 1 + expm1(r)`, scaled by `2^n` in two halves so that results in
//!   the subnormal range round once (`exp_series`: `f32`'s `exp`; `f64`'s is the table method
//!   of `exp_table64.rs`, which falls back on this past its range).
//! - `expm1`: the same `r`; `2 (2^(n-1) expm1(r) + (2^(n-1) - 1/2))` in one fused
//!   multiply-add (`2^(n-1) - 1/2` exact while `|n| <= MANT + 1`), `-1` below
//!   `ln(ulp(1)/2)`; for `f32` `expm1(r)` is a minimax polynomial (`EXPM1_F32`).
//! - `log`: the table method of `ln_table.rs` (`f32`) and `ln_table64.rs` (`f64`). The
//!   series method stays for `f64`'s `log2`/`log10` and `acosh` (`derived.rs`):
//!   `x = 2^k m` with `m` in `[sqrt(1/2), sqrt(2))`, `f = m - 1`, `s = f / (2 + f)`,
//!   `log(1 + f) = f - (f²/2 - s (f²/2 + R(s²)))` (`R` the `atanh` series), subnormals
//!   scaled first.
//! - `sin`, `cos`: `x = n π/2 + r` (`f64`: π/2 in four parts, ~150 bits; `f32`: four `f32`
//!   parts with the steps kept exact, `reduce_pio2_f32_split`), `|r| <= π/4` (`f32`: a
//!   little over), the sine or cosine series by quadrant. Valid for `|x| <=`
//!   [`TRIG_LIMIT`]; callers send larger arguments (and infinities) to the C library.
//!
//! Polynomials are evaluated with fused multiply-adds (`mul_add`): one instruction in the
//! AVX2 and AVX-512 copies of the loops, and the same result (a library call) on a CPU
//! without FMA, so a value never depends on the path that computed it.
//!
//! `derived.rs` builds the inverse and logarithmic functions on these, `tangent.rs` the
//! tangents (on the `f32` reductions of `reduce_f32.rs`), and
//! `hyperbolic.rs` `sinh`, `cosh` and `tanh`; `log_table.rs` is `f32`'s `log2` and `log10`,
//! `ln_table.rs` its `log`, `log1p`, `asinh` and `atanh` by a 16-entry table, and
//! `ln_table64.rs` those four for `f64`, written once against `lanes`'s `Lanes` for one
//! lane and AVX2's and AVX-512's vectors (the table lookup is a register permute there,
//! which the compiler does not find by itself).
//!
//! NaN, infinities and signed zeros follow C99 Annex F (as NumPy): `exp(-inf) = 0`,
//! `log(0) = -inf`, `log(-1) = NaN`, `expm1(-0) = -0`, `tanh(-0) = -0`, `sin(-0) = -0`. The
//! measured maximum errors are in docs/design.md P2 and checked by `tests/vector_math.rs`
//! against `f64` (for `f32`) and the C library (for `f64`).

use std::f64::consts::LN_2;

mod derived;
pub(crate) mod exp_table64;
pub(crate) mod hyperbolic;
mod lanes;
pub(crate) mod ln_table;
pub(crate) mod ln_table64;
pub(crate) mod log_table;
mod reduce_f32;
pub(crate) mod tangent;

use reduce_f32::reduce_pio2_f32;

/// Largest `|x|` for which `sin` and `cos` here reduce their argument correctly.
pub const TRIG_LIMIT: f64 = 524_288.0;

/// `ln 2 - LN_2`: the part of `ln 2` below `f64` precision.
const LN2_TAIL: f64 = 2.319_046_813_846_299_6e-17;

/// `x` with the low `bits` bits of its significand cleared (so that products by integers
/// below `2^bits` are exact).
const fn chop(x: f64, bits: u32) -> f64 {
    f64::from_bits(x.to_bits() & !((1u64 << bits) - 1))
}

/// `[1/2!, 1/3!, ..., 1/(N+1)!]`: `expm1(r) = r + r² (c0 + c1 r + ...)`.
const fn expm1_coeffs<const N: usize>() -> [f64; N] {
    let (mut c, mut f, mut k) = ([0.0; N], 1.0, 0);
    while k < N {
        f *= (k + 2) as f64;
        c[k] = 1.0 / f;
        k += 1;
    }
    c
}

/// `[2/3, 2/5, ..., 2/(2N+1)]`: `2 atanh(s) = 2s + s (c0 z + c1 z² + ...)`, `z = s²`.
const fn log_coeffs<const N: usize>() -> [f64; N] {
    let (mut c, mut k) = ([0.0; N], 0);
    while k < N {
        c[k] = 2.0 / (2 * k + 3) as f64;
        k += 1;
    }
    c
}

/// `1/n!` (the factorial exact while it fits 53 bits, then rounded once per factor).
const fn inv_factorial(n: usize) -> f64 {
    let (mut f, mut j) = (1.0, 2);
    while j <= n {
        f *= j as f64;
        j += 1;
    }
    1.0 / f
}

/// `[-1/3!, 1/5!, ...]` (`first = 3`) or `[1/4!, -1/6!, ...]` (`first = 4`): the sine and
/// cosine series after their leading terms, in powers of `z = r²`.
const fn trig_coeffs<const N: usize>(first: usize) -> [f64; N] {
    let (mut c, mut k) = ([0.0; N], 0);
    while k < N {
        let sign = if (first == 3) == (k % 2 == 0) {
            -1.0
        } else {
            1.0
        };
        c[k] = sign * inv_factorial(first + 2 * k);
        k += 1;
    }
    c
}

/// The `f32` polynomial `P` of `expm1(r) ≈ r + r² P(r)` on `|r| <= ln2/2`: minimax for the
/// relative error (`scripts/fit_poly.py expm1_f32`), its own error 0.04 of a half ulp; six
/// terms where the Taylor series needed seven. (`exp` uses it too.)
const EXPM1_F32: [f32; 6] = [
    0.5,
    0.166_666_66,
    0.041_666_362,
    0.008_333_39,
    0.001_394_061_7,
    0.000_198_458_77,
];

/// The `f64` polynomial of `expm1`: the Taylor series, twelve terms.
const EXPM1_F64: [f64; 12] = expm1_coeffs::<12>();

/// `f64`'s `log` and `log_normal`: the table method of `ln_table64.rs`.
macro_rules! table_ln64 {
    ($t:ident, $i:ident) => {
        pub use super::ln_table64::{log, log_normal};
    };
}

/// `f32`'s `log` and `log_normal`: the table method of `ln_table.rs`.
macro_rules! table_ln {
    ($t:ident, $i:ident) => {
        pub use super::ln_table::{log, log_normal};
    };
}

/// `f32`'s `exp`: the series method of `vmath!`.
macro_rules! series_exp {
    () => {
        pub use self::exp_series as exp;
    };
}

/// `f64`'s `exp`: the table method of `exp_table64.rs`.
macro_rules! table_exp64 {
    () => {
        pub use super::exp_table64::exp;
    };
}

/// One width's functions: `$t` the float, `$u`/`$i` its bit-sized integers, `$ln` and `$exp`
/// the macros that give its natural logarithm and its `exp`.
macro_rules! vmath {
    ($t:ident, $u:ident, $i:ident, mant: $mant:expr, expm1: $ne:ident, log: $nl:expr,
     exp_range: ($lo:expr, $hi:expr), expm1_lo: $elo:expr, ln2_hi_bits: $lb:expr,
     trig: ($ns:expr, $nc:expr), reduce_pio2: $red:path, tan: ($tan:ident, $tan_any:ident), ln: $ln:ident,
     exp: $exp:ident) => {
        /// The functions for this width.
        pub mod $t {
            use super::*;

            pub(super) const MANT: u32 = $mant;
            const BIAS: $i = <$t>::MAX_EXP as $i - 1;
            /// `2^-(MANT+2)`: below it `expm1(x)` rounds to `x`.
            const TINY: $t = 1.0 / (1u64 << (MANT + 2)) as $t;
            /// `1.5 * 2^MANT`: adding and subtracting it rounds to an integer (`|x| < 2^(MANT-1)`).
            const MAGIC: $t = 1.5 * (1u64 << MANT) as $t;
            pub(super) const LN2_HI: $t = chop(LN_2, $lb) as $t;
            pub(super) const LN2_LO: $t = ((LN_2 - chop(LN_2, $lb)) + LN2_TAIL) as $t;
            const EXPM1_C: [$t; $ne.len()] = $ne;
            const LOG_C: [$t; $nl] = cast(log_coeffs::<$nl>());
            const SIN_C: [$t; $ns] = cast(trig_coeffs::<$ns>(3));
            const COS_C: [$t; $nc] = cast(trig_coeffs::<$nc>(4));

            pub(super) const fn cast<const N: usize>(c: [f64; N]) -> [$t; N] {
                let (mut o, mut k) = ([0.0; N], 0);
                while k < N {
                    o[k] = c[k] as $t;
                    k += 1;
                }
                o
            }

            /// `c[0] + c[1] x + c[2] x² + ...`, each step one fused multiply-add (a single
            /// instruction in the AVX2 and AVX-512 copies of the loops). From four terms on,
            /// the even and the odd coefficients are two independent chains in `x²`
            /// (second-order Horner), which halves the latency of the dependent steps.
            #[inline(always)]
            pub(super) fn horner<const N: usize>(x: $t, c: &[$t; N]) -> $t {
                if N < 4 {
                    let mut p = c[N - 1];
                    let mut k = N - 1;
                    while k > 0 {
                        k -= 1;
                        p = p.mul_add(x, c[k]);
                    }
                    return p;
                }
                let x2 = x * x;
                let last_even = (N - 1) & !1;
                let last_odd = if N % 2 == 0 { N - 1 } else { N - 2 };
                let (mut even, mut k) = (c[last_even], last_even);
                while k >= 2 {
                    k -= 2;
                    even = even.mul_add(x2, c[k]);
                }
                let (mut odd, mut k) = (c[last_odd], last_odd);
                while k >= 3 {
                    k -= 2;
                    odd = odd.mul_add(x2, c[k]);
                }
                odd.mul_add(x, even)
            }

            /// `x` rounded to the nearest integer, as a float and as an integer
            /// (`|x| < 2^(MANT-1)`; other inputs give unspecified values, never UB).
            #[inline(always)]
            pub(super) fn round_int(x: $t) -> ($t, $i) {
                let y = x + MAGIC;
                (y - MAGIC, y.to_bits().wrapping_sub(MAGIC.to_bits()) as $i)
            }

            /// `2^n` for `n` in the normal exponent range.
            #[inline(always)]
            pub(super) fn pow2(n: $i) -> $t {
                <$t>::from_bits((n.wrapping_add(BIAS) as $u) << MANT)
            }

            /// `x` clamped to `[lo, hi]`; NaN passes through.
            #[inline(always)]
            fn clamp(x: $t, lo: $t, hi: $t) -> $t {
                let x = if x < lo { lo } else { x };
                if x > hi {
                    hi
                } else {
                    x
                }
            }

            /// `(n, r, expm1(r))` with `x = n ln2 + r`.
            #[inline(always)]
            fn reduce_exp(x: $t) -> ($i, $t) {
                let (nf, n) = round_int(x * std::f64::consts::LOG2_E as $t);
                let r = (x - nf * LN2_HI) - nf * LN2_LO;
                (n, r + r * r * horner(r, &EXPM1_C))
            }

            /// `(1 + q) 2^n`, the scaling in two halves (one rounding for subnormals).
            #[inline(always)]
            fn scale(q: $t, n: $i) -> $t {
                let n1 = n >> 1;
                (1.0 + q) * pow2(n1) * pow2(n - n1)
            }

            /// `e^x` by the method above: `f32`'s `exp`, and for `f64` the fallback of the
            /// table method (`exp_table64.rs`) past its range and the exponential that
            /// `logaddexp`'s compiler-vectorised loop uses.
            #[inline(always)]
            pub fn exp_series(x: $t) -> $t {
                let (n, q) = reduce_exp(clamp(x, $lo, $hi));
                let y = scale(q, n);
                if x.is_nan() {
                    x
                } else {
                    y
                }
            }

            /// `e^x - 1`, accurate near 0: `2 (2^(n-1) q + (2^(n-1) - 1/2))`, one fused
            /// multiply-add. `2^(n-1) - 1/2` is exact for `|n| <= MANT + 1`; past that it rounds,
            /// by half an ulp of the result at `n = -(MANT + 2)` (`f32` on `[-17.33, -16.98]`:
            /// within 0.71 ulp, where the old separate path rounded correctly) and by a
            /// quarter of one above. The halved scale keeps `2^(n-1)` normal up to `expm1`'s
            /// overflow. (Until 2026-12-02 the two ends were their own paths, `(1 + q) 2^n` in
            /// two factors and `(1 + q) 2^n - 1`, computed beside it and selected.)
            #[inline(always)]
            pub fn expm1(x: $t) -> $t {
                let (n, q) = reduce_exp(clamp(x, $elo, $hi));
                let s = pow2(n - 1);
                let y = 2.0 * s.mul_add(q, s - 0.5);
                // Below `2^-(MANT+2)`, `e^x - 1` rounds to `x` (and the halving would round
                // a subnormal `q`); zeros keep their sign.
                if x.is_nan() || x.abs() < TINY {
                    x
                } else {
                    y
                }
            }

            /// `(e, m)` with `x = 2^e m` and `m` in `[sqrt(1/2), sqrt(2))`, for a positive,
            /// normal, finite `x`: the exponent and significand bits, the significand halved
            /// (and `e` raised) above `sqrt(2)`.
            #[inline(always)]
            fn split(x: $t) -> ($i, $t) {
                let bits = x.to_bits();
                let e = ((bits >> MANT) as $i) - BIAS;
                let one = (1.0 as $t).to_bits();
                let m = <$t>::from_bits((bits & ((1 << MANT) - 1)) | one);
                let big = m > std::f64::consts::SQRT_2 as $t;
                (if big { e + 1 } else { e }, if big { m * 0.5 } else { m })
            }

            /// `(f²/2, s (f²/2 + R(s²)))` for `f = m - 1` and `s = f / (2 + f)`, where `R` is
            /// the `atanh` series after its first term, so that
            /// `log(1 + f) = f - (f²/2 - s (f²/2 + R(s²)))`.
            #[inline(always)]
            fn series(f: $t, s: $t) -> ($t, $t) {
                let z = s * s;
                let hfsq = 0.5 * f * f;
                (hfsq, s * z.mul_add(horner(z, &LOG_C), hfsq))
            }

            /// `log(2^bump u) + c/u` for a positive, normal, finite `u` and a `c` below an ulp
            /// of `u`: the core of `acosh` (`u = 1 + x` rounded and `c` its rounding error,
            /// `bump = 0`; or `log(2x)` for large `x`: `u = x`, `c = 0`, `bump = 1`), which
            /// `log1p` and `asinh` also were before the table modules took them. One
            /// division gives both `s = f / (2 + f)` and `1/u`: with
            /// `d = 2 + f` and `q = 1 / (d m)`, `s = f (m q)` and `1/m = d q`. Their few ulp
            /// of rounding are damped: `s` enters only through the term `s (f²/2 + R)`, so a
            /// relative error in `s` moves the result by at most 0.073 of it (about `f²/2`);
            /// `c/u`'s own roundings matter only near `u = 1`, where it can be a third of the
            /// result (`f32` around `x = 2^-23`: within 0.66 ulp). (`log(u) + c/u` divided
            /// twice, and was less accurate: 1.25 ulp for `f32` against 0.91.)
            #[inline(always)]
            pub(super) fn log_corrected(u: $t, c: $t, bump: $i) -> $t {
                let (e, m) = split(u);
                let f = m - 1.0;
                let d = 2.0 + f;
                let q = 1.0 / (d * m);
                let (hfsq, sr) = series(f, f * (m * q));
                // Past `2^(BIAS - 8)`, `c` is 0 (`1 + x` is `x`): the cap keeps `2^-e` normal.
                let cu = c * (d * q) * pow2((-e).max(8 - BIAS));
                let k = (e + bump) as $t;
                k.mul_add(LN2_HI, f - (hfsq - (sr + k.mul_add(LN2_LO, cu))))
            }

            /// Whether every element of `a` is positive, finite and normal: one pass of
            /// integer maxima (it vectorises), so that a block of such inputs can take the
            /// logarithms' `_normal` forms. The test: `bits - MIN_POSITIVE` (wrapping) is below
            /// `INFINITY - MIN_POSITIVE` exactly for those values (zeros, subnormals and
            /// negatives wrap to the top; infinities and NaNs are above).
            #[inline(always)]
            pub fn all_positive_normal(a: &[$t]) -> bool {
                let lo = <$t>::MIN_POSITIVE.to_bits();
                let span = <$t>::INFINITY.to_bits() - lo;
                a.iter().fold(0, |m, x| m.max(x.to_bits().wrapping_sub(lo))) < span
            }

            /// `y` (a logarithm of `x` computed for positive finite `x`) with the special
            /// values of every logarithm: `+inf` at `+inf`, `-inf` at `±0`, NaN below 0 or
            /// at NaN.
            #[inline(always)]
            pub(super) fn log_special(x: $t, y: $t) -> $t {
                let y = if x == <$t>::INFINITY { x } else { y };
                let y = if x == 0.0 { <$t>::NEG_INFINITY } else { y };
                if x < 0.0 {
                    <$t>::NAN
                } else if x.is_nan() {
                    x
                } else {
                    y
                }
            }

            $ln!($t, $i);
            $exp!();

            /// `(sin r, cos r)` for `|r| <= π/4`.
            #[inline(always)]
            pub(super) fn sin_cos(r: $t) -> ($t, $t) {
                trig_series(r, &SIN_C, &COS_C)
            }

            /// `(sin r, cos r)` for `|r| <= π/4` from the series after their leading terms
            /// (`s` after `r`, `c` after `1 - r²/2`; [`trig_coeffs`]), as long as the caller's
            /// precision needs.
            #[inline(always)]
            pub(super) fn trig_series<const NS: usize, const NC: usize>(
                r: $t,
                s: &[$t; NS],
                c: &[$t; NC],
            ) -> ($t, $t) {
                let z = r * r;
                (
                    r + r * (z * horner(z, s)),
                    (1.0 - 0.5 * z) + z * z * horner(z, c),
                )
            }

            /// `sin(n π/2 + r)` for `|r| <= π/4`.
            #[inline(always)]
            fn quadrant(n: $i, r: $t) -> $t {
                let (s, c) = sin_cos(r);
                let y = if n & 1 == 0 { s } else { c };
                if n & 2 == 0 {
                    y
                } else {
                    -y
                }
            }

            /// Sine, for `|x| <= TRIG_LIMIT` (other arguments give unspecified values).
            #[inline(always)]
            pub fn sin(x: $t) -> $t {
                let (n, r) = $red(x);
                let y = quadrant(n, r);
                if x == 0.0 {
                    x
                } else {
                    y
                }
            }

            /// Cosine, for `|x| <= TRIG_LIMIT` (other arguments give unspecified values).
            #[inline(always)]
            pub fn cos(x: $t) -> $t {
                let (n, r) = $red(x);
                quadrant(n + 1, r)
            }

            pub use super::derived::logaddexp::$t as logaddexp;
            pub use super::derived::$t::*;
            pub use super::hyperbolic::$t::*;
            pub use super::tangent::$tan as tan;
            pub use super::tangent::$tan_any as tan_any;
        }
    };
}

vmath!(f32, u32, i32, mant: 23, expm1: EXPM1_F32, log: 4, exp_range: (-104.0, 89.0),
    expm1_lo: -18.0, ln2_hi_bits: 43, trig: (4, 4), reduce_pio2: reduce_pio2_f32, tan: (tan_f32, tan_f32_any),
    ln: table_ln, exp: series_exp);
vmath!(f64, u64, i64, mant: 52, expm1: EXPM1_F64, log: 10, exp_range: (-746.0, 710.0),
    expm1_lo: -38.0, ln2_hi_bits: 32, trig: (8, 7), reduce_pio2: reduce_pio2_f64, tan: (tan_f64, tan_f64_any),
    ln: table_ln64, exp: table_exp64);

/// π/2 = `PIO2_1 + PIO2_2 + PIO2_3 + PIO2_4` to about 150 bits: consecutive pieces of its
/// binary expansion, the first three of 33 significant bits each (so their products by
/// `|n| < 2^20` are exact, and each subtraction below is exact or rounds relative to the
/// result), written as bit patterns so that no decimal rounding intervenes.
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3dd0_b461_1a60_0000);
const PIO2_3: f64 = f64::from_bits(0x3ba3_198a_2e00_0000);
const PIO2_4: f64 = f64::from_bits(0x397b_839a_2520_49c1);
/// `(n, r)` with `x = n π/2 + r`, `|r| <= π/4` (for `|x| <= TRIG_LIMIT`).
#[inline(always)]
fn reduce_pio2_f64(x: f64) -> (i64, f64) {
    let (nf, n) = f64::round_int(x * std::f64::consts::FRAC_2_PI);
    (
        n,
        (((x - nf * PIO2_1) - nf * PIO2_2) - nf * PIO2_3) - nf * PIO2_4,
    )
}
