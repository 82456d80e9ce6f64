//! `sinh`, `cosh` and `tanh` from one evaluation of `e^r` and `e^-r` (docs/design.md P2),
//! with no division in `sinh` and `cosh` and one in `tanh`.
//!
//! For `a = |x|`, `a = n ln2 + r` as in `exp` (`|r| <= ln2/2`), except that `n = 0` and
//! `r = a` below 1 (`a - n ln2` in two fused multiply-adds). The even and odd parts of the
//! exponential series give `c = cosh r` and `s = sinh r` (`f64`: the Taylor series, long
//! enough for `|r| <= 1`; `f32`: minimax polynomials of four terms each on `|r| <= 1`), so
//! that `e^r = c + s` and `e^-r = c - s` come from one pair of polynomials. Then
//! - `sinh a = 2^(n-1) e^r - 2^(-n-1) e^-r`, or `s` when `n = 0` (no cancellation near 0;
//!   from 1 on the two terms are at least a factor `e²` apart, so the difference loses
//!   less than half a bit);
//! - `cosh a = 2^(n-1) e^r + 2^(-n-1) e^-r`;
//! - `tanh a = (e^r - 2^-2n e^-r) / (e^r + 2^-2n e^-r)`, or `s / c` when `n = 0`.
//!
//! `2^(n-1)` is applied in two factors, so `sinh` and `cosh` stay finite up to their own
//! overflow (past `exp`'s); `|x|` is clamped just above that (and `tanh`'s where it rounds to
//! 1), which also sends infinities to `inf` and `±1`. Signs come from `x`, NaN passes through.
//! The errors, measured against 120-bit references on 60 000 `f64` samples, are at most 2 ulp
//! for each function; the tests assert bounds against the C library's functions (whose
//! `tanh` is itself up to 2 ulp off) and, for `f32`, against `f64`.

/// `[1/first!, 1/(first+2)!, ...]`: `cosh r = 1 + z (c0 + c1 z + ...)` (`first = 2`) and
/// `sinh r = r + r z (c0 + c1 z + ...)` (`first = 3`), `z = r²`.
const fn hyp_coeffs<const N: usize>(first: usize) -> [f64; N] {
    let (mut c, mut k) = ([0.0; N], 0);
    while k < N {
        c[k] = super::inv_factorial(first + 2 * k);
        k += 1;
    }
    c
}

/// `f32`'s `P` of `cosh r ≈ 1 + z P(z)` on `|r| <= 1`, `z = r²`: minimax for the relative
/// error (`scripts/fit_poly.py cosh_f32`), its own error 0.13 of a half ulp; four terms where
/// the Taylor series needed five.
const COSH_F32: [f32; 4] = [0.499_999_97, 0.041_666_843, 0.001_388_342_5, 2.546_724_3e-5];

/// `f32`'s `P` of `sinh r ≈ r + r z P(z)` on `|r| <= 1` (`fit_poly.py sinh_f32`), its own
/// error 0.09 of a half ulp; four terms where the Taylor series needed five.
const SINH_F32: [f32; 4] = [0.166_666_67, 0.008_333_35, 0.000_198_361_6, 2.816_951_3e-6];

/// `f64`'s polynomials: the Taylor series, nine terms each after the leading one (the first
/// left out is below `2^-57` of the sum at `|r| = 1`).
const COSH_F64: [f64; 9] = hyp_coeffs::<9>(2);
const SINH_F64: [f64; 9] = hyp_coeffs::<9>(3);

/// One width's functions: `$cc`/`$sc` the polynomials of `cosh r` and `sinh r` after their
/// leading terms, `$max` the clamp of `|x|` for `sinh`/`cosh` (past their overflow), `$tmax`
/// the one for `tanh` (where it rounds to 1).
macro_rules! hyperbolic {
    ($t:ident, $i:ident, cosh: $cc:ident, sinh: $sc:ident, max: $max:expr, tanh_max: $tmax:expr) => {
        /// The hyperbolic functions for this width.
        pub mod $t {
            use super::super::$t::{horner, pow2, round_scaled, LN2_HI, LN2_LO, MANT};
            use super::{$cc as COSH_C, $sc as SINH_C};
            use std::f64::consts::LOG2_E;

            /// Past this `n`, `2^(-n-1) e^-r` is below `2^-(2 MANT)` of the other term.
            const N_SMALL: $i = MANT as $i + 4;

            /// `(n, cosh r, sinh r)` with `a = n ln2 + r` for `0 <= a <= $max`, `n = 0` below 1.
            /// `a - n LN2_HI` is exact (`n LN2_HI` is), so each fused multiply-add rounds once.
            #[inline(always)]
            fn reduce(a: $t) -> ($i, $t, $t) {
                let (nf, n) = round_scaled(a, LOG2_E as $t);
                let small = a < 1.0;
                let nf = if small { 0.0 } else { nf };
                let n = if small { 0 } else { n };
                let r = (-nf).mul_add(LN2_LO, (-nf).mul_add(LN2_HI, a));
                let z = r * r;
                let c = z.mul_add(horner(z, &COSH_C), 1.0);
                let s = (r * z).mul_add(horner(z, &SINH_C), r);
                (n, c, s)
            }

            /// `(2^(n-1)` as two normal factors, `2^(-n-1)` with `n` capped at `N_SMALL`).
            #[inline(always)]
            fn scales(n: $i) -> ($t, $t, $t) {
                let h = (n - 1) >> 1;
                (pow2(h), pow2(n - 1 - h), pow2(-n.min(N_SMALL) - 1))
            }

            /// Hyperbolic sine.
            #[inline(always)]
            pub fn sinh(x: $t) -> $t {
                let (n, c, s) = reduce(x.abs().min($max));
                let (h1, h2, lo) = scales(n);
                let big = (h1 * (c + s)).mul_add(h2, -(lo * (c - s)));
                let y = if n == 0 { s } else { big };
                if x.is_nan() {
                    x
                } else {
                    y.copysign(x)
                }
            }

            /// Hyperbolic cosine.
            #[inline(always)]
            pub fn cosh(x: $t) -> $t {
                let (n, c, s) = reduce(x.abs().min($max));
                let (h1, h2, lo) = scales(n);
                let y = (h1 * (c + s)).mul_add(h2, lo * (c - s));
                if x.is_nan() {
                    x
                } else {
                    y
                }
            }

            /// Hyperbolic tangent.
            #[inline(always)]
            pub fn tanh(x: $t) -> $t {
                let (n, c, s) = reduce(x.abs().min($tmax));
                let q = pow2(-2 * n);
                let (ep, em) = (c + s, c - s);
                let (num, den) = if n == 0 {
                    (s, c)
                } else {
                    ((-q).mul_add(em, ep), q.mul_add(em, ep))
                };
                let y = num / den;
                if x.is_nan() {
                    x
                } else {
                    y.copysign(x)
                }
            }
        }
    };
}

hyperbolic!(f32, i32, cosh: COSH_F32, sinh: SINH_F32, max: 90.0, tanh_max: 10.0);
hyperbolic!(f64, i64, cosh: COSH_F64, sinh: SINH_F64, max: 711.0, tanh_max: 22.0);
