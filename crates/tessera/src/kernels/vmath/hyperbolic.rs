//! `sinh` and `cosh` from one evaluation of `e^r` and `e^-r`, `tanh` from `expm1`
//! (docs/design.md P2), with no division in `sinh` and `cosh` and one in `tanh`, written
//! once against [`Lanes`] for both widths and for the portable, AVX2 and AVX-512 loops.
//!
//! For `a = |x|`, `a = n ln2 + r` as in `exp` (`|r| <= ln2/2`), except that `sinh` takes
//! `n = 0` and `r = a` below 1 (`a - n ln2` in two fused multiply-adds). The even and odd
//! parts of the exponential series give `c = cosh r` and `s = sinh r`, so that `e^r = c + s`
//! and `e^-r = c - s` come from one pair of polynomials (`sinh`'s on `|r| <= 1`: `f64` the
//! Taylor series, `f32` minimax polynomials of four terms each; `cosh`'s, which has no
//! cancellation to avoid, on `|r| <= ln2/2`: shorter Taylor series). Then
//! - `sinh a = 2^(n-1) e^r - 2^(-n-1) e^-r`, or `s` when `n = 0` (no cancellation near 0;
//!   from 1 on the two terms are at least a factor `e²` apart, so the difference loses
//!   less than half a bit);
//! - `cosh a = 2^(n-1) e^r + 2^(-n-1) e^-r`;
//! - `tanh a = e / (e + 2)` with `e = expm1(2a)` ([`tanh_parts`]).
//!
//! The powers of two are built in the exponent field, each in one fused multiply-add, and
//! `-2^k` by setting the bit above the field (the sign), so the difference costs no
//! negation. On a vector, `sinh` and `cosh` apply `2^(n-1)` as one factor, which holds
//! while `|x| < LIMIT` (every result normal and finite); a vector with a lane past it, or
//! with a NaN, goes element by element through the scalar function, which applies
//! `2^(n-1)` in two factors (so both stay finite up to their own overflow) and clamps `|x|`
//! just above that (which also sends infinities to `inf`). The two orders give the same
//! bits wherever both apply (an exact product by a power of two), and every path runs the
//! same generic code, so a result never depends on the path (tested bit for bit). `tanh`
//! clamps `|x|` where it rounds to 1 and needs no scalar path: a NaN stays NaN through every
//! step. Signs come from `x`, NaN passes through (`sinh`, `cosh`: as it came; `tanh`: a NaN
//! with `x`'s sign, quiet, its payload `x`'s where the CPU propagates it, which every path
//! does for the default NaN).
//!
//! The errors, measured against 120-bit references on 60 000 `f64` samples, were at most
//! 2 ulp for each function (2026-11-29; `f32` against `f64` on 7 M samples, 2026-12-04:
//! `cosh` 2.36, `sinh` 2.36, `tanh` 2.34 ulp); the tests assert bounds against the C library's functions
//! (whose `tanh` is itself up to 2 ulp off) and, for `f32`, against `f64`.

use super::lanes::{Elem, Lanes};

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

/// `cosh`'s polynomials, for `|r| <= ln2/2` only (`cosh` needs no `n = 0` below 1): the
/// Taylor series, cut where the first term left out is below 0.1 of a half ulp (`f32`:
/// `z^4/8!` at `z = (ln2/2)²` is `5.2e-9`) or `2^-57` (`f64`: `z^7/14!`, `4e-18`; `z^7/15!`
/// after `sinh`'s leading `r`, `3e-19`).
const COSH_NEAR_F32: [f32; 3] = [0.5, 1.0 / 24.0, 1.0 / 720.0];
const SINH_NEAR_F32: [f32; 3] = [1.0 / 6.0, 1.0 / 120.0, 1.0 / 5040.0];
const COSH_NEAR_F64: [f64; 6] = hyp_coeffs::<6>(2);
const SINH_NEAR_F64: [f64; 6] = hyp_coeffs::<6>(3);

/// A width's constants for these functions, and its exponent field.
pub(super) trait Hyp: Elem {
    const ONE: Self;
    const TWO: Self;
    const LOG2_E: Self;
    /// `-ln 2` in two parts, the first with enough trailing zeros that `n` times it is exact.
    const NEG_LN2_HI: Self;
    const NEG_LN2_LO: Self;
    /// `1.5 2^MANT`: adding it rounds to an integer and leaves that integer in the low bits.
    const MAGIC: Self;
    const MAGIC_BITS: Self::Int;
    /// `sinh`'s polynomials of `cosh r` and `sinh r` on `|r| <= 1`, after their leading terms
    /// (above).
    const COSH: &'static [Self];
    const SINH: &'static [Self];
    /// `tanh`'s constants, for `r' = r/2` where `2a = n ln2 + r` (so `a` need not be
    /// doubled): `2 log2(e)`, `-ln2/2` in two parts, and `2^(k+1) c_k` for each coefficient
    /// `c_k` of `P` in `expm1(r) ≈ r + r² P(r)` on `|r| <= ln2/2` (`vmath`'s), which make
    /// `r' + r'² P'(r') = expm1(r)/2` with every rounding scaled by a power of two.
    const TWICE_LOG2_E: Self;
    const NEG_LN2_HI_HALF: Self;
    const NEG_LN2_LO_HALF: Self;
    const HALF_EXPM1: &'static [Self];
    const HALF: Self;
    const NEG_ONE: Self;
    /// `cosh`'s, on `|r| <= ln2/2`.
    const COSH_NEAR: &'static [Self];
    const SINH_NEAR: &'static [Self];
    /// `|x|` below which `sinh` and `cosh` run on a vector: `2^(n-1)` stays normal, and so
    /// does every result.
    const LIMIT: Self;
    /// The clamp of `|x|` for `sinh` and `cosh`, just past their overflow.
    const MAX: Self;
    /// The clamp of `|x|` for `tanh`, past where it rounds to 1.
    const TANH_MAX: Self;
    /// The biased exponent of `2^-1`.
    const HALF_EXP: Self::Int;
    /// `MAGIC` plus the biased exponent of 2 (an integer, so adding it still rounds to an
    /// integer, and `MAGIC`'s bits end in zeros past the field's width): for
    /// `0 <= n < MAX_EXP - 1`, the bits of `n + TANH_MAGIC` shifted into the exponent field
    /// are `2^(n+1)`, with no separate subtraction and addition of the biases.
    const TANH_MAGIC: Self;
    /// Added to a biased exponent, sets the sign bit above the field.
    const SIGN_EXP: Self::Int;
    /// Past this `n`, `2^(-n-1) e^-r` is below `2^-(2 MANT)` of the other term.
    const N_SMALL: Self::Int;
    const ZERO_I: Self::Int;
    const ONE_I: Self::Int;

    /// The float whose sign and exponent field are `e` (the significand zero): `2^(e - bias)`,
    /// negative when `e` has [`SIGN_EXP`](Hyp::SIGN_EXP) added.
    fn exp_field<L: Lanes<Self>>(l: L, e: L::I) -> L::F;
}

/// `Hyp` for `$t` from `vmath::$t`'s reduction constants.
macro_rules! hyp {
    ($t:ident, $mant:literal, cosh: $cc:ident, sinh: $sc:ident, near: ($ccn:ident, $scn:ident),
     expm1: $em:path,
     limit: $lim:expr,
     max: $max:expr, tanh_max: $tmax:expr) => {
        impl Hyp for $t {
            const ONE: $t = 1.0;
            const TWO: $t = 2.0;
            const LOG2_E: $t = std::f64::consts::LOG2_E as $t;
            const NEG_LN2_HI: $t = -super::$t::LN2_HI;
            const NEG_LN2_LO: $t = -super::$t::LN2_LO;
            const MAGIC: $t = 1.5 * (1u64 << $mant) as $t;
            const MAGIC_BITS: Self::Int = Self::MAGIC.to_bits() as Self::Int;
            const COSH: &'static [$t] = &$cc;
            const SINH: &'static [$t] = &$sc;
            const TWICE_LOG2_E: $t = 2.0 * std::f64::consts::LOG2_E as $t;
            const NEG_LN2_HI_HALF: $t = -super::$t::LN2_HI / 2.0;
            const NEG_LN2_LO_HALF: $t = -super::$t::LN2_LO / 2.0;
            const HALF_EXPM1: &'static [$t] = &{
                let (mut c, mut k, mut scale) = ($em, 0, 2.0);
                while k < c.len() {
                    c[k] *= scale;
                    scale *= 2.0;
                    k += 1;
                }
                c
            };
            const HALF: $t = 0.5;
            const NEG_ONE: $t = -1.0;
            const COSH_NEAR: &'static [$t] = &$ccn;
            const SINH_NEAR: &'static [$t] = &$scn;
            const LIMIT: $t = $lim;
            const MAX: $t = $max;
            const TANH_MAX: $t = $tmax;
            const HALF_EXP: Self::Int = <$t>::MAX_EXP as Self::Int - 2;
            const TANH_MAGIC: $t = Self::MAGIC + <$t>::MAX_EXP as $t;
            const SIGN_EXP: Self::Int = 2 * <$t>::MAX_EXP as Self::Int;
            const N_SMALL: Self::Int = $mant + 4;
            const ZERO_I: Self::Int = 0;
            const ONE_I: Self::Int = 1;

            #[inline(always)]
            fn exp_field<L: Lanes<$t>>(l: L, e: L::I) -> L::F {
                l.float_of_bits(l.sll::<$mant>(e))
            }
        }
    };
}

hyp!(f32, 23, cosh: COSH_F32, sinh: SINH_F32, near: (COSH_NEAR_F32, SINH_NEAR_F32),
    expm1: super::EXPM1_F32, limit: 88.0, max: 90.0, tanh_max: 10.0);
hyp!(f64, 52, cosh: COSH_F64, sinh: SINH_F64, near: (COSH_NEAR_F64, SINH_NEAR_F64),
    expm1: super::EXPM1_F64, limit: 709.0, max: 711.0, tanh_max: 22.0);

/// `c[0] + z c[1] + ...` by Horner's rule in fused multiply-adds.
#[inline(always)]
fn horner<E: Elem, L: Lanes<E>>(l: L, z: L::F, c: &[E]) -> L::F {
    let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
    rest.iter()
        .rev()
        .fold(l.splat(*last), |p, &k| l.fma(p, z, l.splat(k)))
}

/// The reduction of `0 <= a <= MAX` for `sinh`: `(n = 0, n, cosh r, sinh r)` with
/// `a = n ln2 + r`, `n = 0` below 1.
#[inline(always)]
fn reduce<E: Hyp, L: Lanes<E>>(l: L, a: L::F) -> (L::M, L::I, L::F, L::F) {
    let s = |v: E| l.splat(v);
    let small = l.gt(s(E::ONE), a);
    let y = l.select(small, s(E::MAGIC), l.fma(a, s(E::LOG2_E), s(E::MAGIC)));
    let (n, c, sr) = expand(l, a, y, E::COSH, E::SINH);
    (small, n, c, sr)
}

/// The reduction for `cosh`: `(n, cosh r, sinh r)` with `a = n ln2 + r`, `|r| <= ln2/2`.
#[inline(always)]
fn reduce_near<E: Hyp, L: Lanes<E>>(l: L, a: L::F) -> (L::I, L::F, L::F) {
    let s = |v: E| l.splat(v);
    let y = l.fma(a, s(E::LOG2_E), s(E::MAGIC));
    expand(l, a, y, E::COSH_NEAR, E::SINH_NEAR)
}

/// `(n, cosh r, sinh r)` for `y = n + MAGIC`: `r = a - n ln2`, exact in its first fused
/// multiply-add (`n LN2_HI` is exact), so each one rounds once.
#[inline(always)]
fn expand<E: Hyp, L: Lanes<E>>(
    l: L,
    a: L::F,
    y: L::F,
    cosh: &[E],
    sinh: &[E],
) -> (L::I, L::F, L::F) {
    let s = |v: E| l.splat(v);
    let nf = l.sub(y, s(E::MAGIC));
    let n = l.sub_i(l.bits(y), l.splat_i(E::MAGIC_BITS));
    let r = l.fma(nf, s(E::NEG_LN2_LO), l.fma(nf, s(E::NEG_LN2_HI), a));
    let z = l.mul(r, r);
    let c = l.fma(z, horner(l, z, cosh), s(E::ONE));
    let sr = l.fma(l.mul(r, z), horner(l, z, sinh), r);
    (n, c, sr)
}

/// `2^(n-1)` as one factor (`n - 1` in the normal exponent range).
#[inline(always)]
fn half_scale<E: Hyp, L: Lanes<E>>(l: L, n: L::I) -> L::F {
    E::exp_field(l, l.add_i(n, l.splat_i(E::HALF_EXP)))
}

/// `±2^(-n-1)` with `n` capped at `N_SMALL`: negative with `sign = SIGN_EXP`, else `sign = 0`.
#[inline(always)]
fn small_scale<E: Hyp, L: Lanes<E>>(l: L, n: L::I, sign: E::Int) -> L::F {
    let capped = l.min_i(n, l.splat_i(E::N_SMALL));
    let field = l.add_i(l.splat_i(E::HALF_EXP), l.splat_i(sign));
    E::exp_field(l, l.sub_i(field, capped))
}

/// `2^(n-1) e^r ± 2^(-n-1) e^-r` (`+` with `sign = 0`, `-` with `SIGN_EXP`) for
/// `|x| < LIMIT`.
#[inline(always)]
fn combine<E: Hyp, L: Lanes<E>>(l: L, n: L::I, c: L::F, s: L::F, sign: E::Int) -> L::F {
    let low = l.mul(small_scale(l, n, sign), l.sub(c, s));
    l.fma(half_scale(l, n), l.add(c, s), low)
}

/// The same for `|x|` up to `MAX`, with `2^(n-1)` in two factors (each normal).
#[inline(always)]
fn combine_wide<E: Hyp, L: Lanes<E>>(l: L, n: L::I, c: L::F, s: L::F, sign: E::Int) -> L::F {
    let m = l.sub_i(n, l.splat_i(E::ONE_I));
    let h = l.sra::<1>(m);
    let bias = l.add_i(l.splat_i(E::HALF_EXP), l.splat_i(E::ONE_I));
    let h1 = E::exp_field(l, l.add_i(h, bias));
    let h2 = E::exp_field(l, l.add_i(l.sub_i(m, h), bias));
    let low = l.mul(small_scale(l, n, sign), l.sub(c, s));
    l.fma(l.mul(h1, l.add(c, s)), h2, low)
}

/// Whether every lane of `a = |x|` is below `LIMIT` (false for NaN).
#[inline(always)]
fn in_limit<E: Hyp, L: Lanes<E>>(l: L, a: L::F) -> bool {
    l.all(l.gt(l.splat(E::LIMIT), a))
}

/// `sinh x` on a vector: `None` where a lane is past `LIMIT` or NaN.
#[inline(always)]
fn sinh_lanes<E: Hyp, L: Lanes<E>>(l: L, _: &(), x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    in_limit(l, a).then(|| {
        let (small, n, c, s) = reduce(l, a);
        let y = l.select(small, s, combine(l, n, c, s, E::SIGN_EXP));
        l.copysign(y, x)
    })
}

/// `cosh x` on a vector: `None` where a lane is past `LIMIT` or NaN.
#[inline(always)]
fn cosh_lanes<E: Hyp, L: Lanes<E>>(l: L, _: &(), x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    in_limit(l, a).then(|| {
        let (n, c, s) = reduce_near(l, a);
        combine(l, n, c, s, E::ZERO_I)
    })
}

/// `tanh a = num / den` for `0 <= a <= TANH_MAX`: `e / (e + 2)` with `e = expm1(2a)`, from
/// `2a = n ln2 + r` (`|r| <= ln2/2`): `e = 2^n expm1(r) + (2^n - 1)` in one fused
/// multiply-add (`2^n - 1` exact while `n <= MANT`; past it `tanh` is 1 to the last bit
/// anyway), so there is no cancellation near 0 and no `n = 0` case to select. The reduction
/// and the polynomial run on `r/2` and `expm1(r)/2` with constants scaled to match
/// ([`Hyp::TWICE_LOG2_E`]), which saves doubling `a`: each rounding is the original one
/// times a power of two (`r/2` exact as `r` is; `r²/4` subnormal only where `r²` is
/// negligible beside `r` either way), so the bits are those of the form on `2a`.
#[inline(always)]
fn tanh_parts<E: Hyp, L: Lanes<E>>(l: L, a: L::F) -> (L::F, L::F) {
    let s = |v: E| l.splat(v);
    let y = l.fma(a, s(E::TWICE_LOG2_E), s(E::TANH_MAGIC));
    let nf = l.sub(y, s(E::TANH_MAGIC));
    let half_r = l.fma(
        nf,
        s(E::NEG_LN2_LO_HALF),
        l.fma(nf, s(E::NEG_LN2_HI_HALF), a),
    );
    let half_p = l.fma(
        l.mul(half_r, half_r),
        horner(l, half_r, E::HALF_EXPM1),
        half_r,
    );
    // `2^(n+1)` from `y`'s bits ([`Hyp::TANH_MAGIC`]), and `2^n - 1` from it in one rounding.
    let scale = E::exp_field(l, l.bits(y));
    let e = l.fma(scale, half_p, l.fma(scale, s(E::HALF), s(E::NEG_ONE)));
    (e, l.add(e, s(E::TWO)))
}

/// `tanh x` on a vector, every lane: a NaN lane stays NaN through every step (the clamp
/// keeps it) and takes `x`'s sign, so no lane needs a check.
#[inline(always)]
fn tanh_lanes<E: Hyp, L: Lanes<E>>(l: L, _: &(), x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    let (num, den) = tanh_parts(l, l.min(l.splat(E::TANH_MAX), a));
    Some(l.copysign(l.div(num, den), x))
}

/// One width's scalar functions and loops.
macro_rules! width {
    ($t:ident) => {
        /// The hyperbolic functions for this width.
        pub mod $t {
            use super::super::lanes::{lanes_loop, Lanes, Scalar};
            use super::{combine_wide, reduce, reduce_near, Hyp};

            type I = <$t as super::Elem>::Int;

            /// `|x|` clamped to `MAX` (NaN stays NaN).
            #[inline(always)]
            fn clamped(x: $t) -> $t {
                x.abs().min(<$t as Hyp>::MAX)
            }

            #[inline(always)]
            fn sinh_lanes<L: Lanes<$t>>(l: L, t: &(), x: L::F) -> Option<L::F> {
                super::sinh_lanes::<$t, L>(l, t, x)
            }

            #[inline(always)]
            fn cosh_lanes<L: Lanes<$t>>(l: L, t: &(), x: L::F) -> Option<L::F> {
                super::cosh_lanes::<$t, L>(l, t, x)
            }

            #[inline(always)]
            fn tanh_lanes<L: Lanes<$t>>(l: L, t: &(), x: L::F) -> Option<L::F> {
                super::tanh_lanes::<$t, L>(l, t, x)
            }

            /// Hyperbolic sine.
            #[inline(always)]
            pub fn sinh(x: $t) -> $t {
                if let Some(y) = sinh_lanes(Scalar, &(), x) {
                    return y;
                }
                if x.is_nan() {
                    return x;
                }
                let (small, n, c, s) = reduce::<$t, Scalar>(Scalar, clamped(x));
                let sign: I = <$t as Hyp>::SIGN_EXP;
                let y = combine_wide::<$t, Scalar>(Scalar, n, c, s, sign);
                if small { s } else { y }.copysign(x)
            }

            /// Hyperbolic cosine.
            #[inline(always)]
            pub fn cosh(x: $t) -> $t {
                if let Some(y) = cosh_lanes(Scalar, &(), x) {
                    return y;
                }
                if x.is_nan() {
                    return x;
                }
                let (n, c, s) = reduce_near::<$t, Scalar>(Scalar, clamped(x));
                combine_wide::<$t, Scalar>(Scalar, n, c, s, 0)
            }

            /// Hyperbolic tangent.
            #[inline(always)]
            pub fn tanh(x: $t) -> $t {
                tanh_lanes(Scalar, &(), x).unwrap_or(x)
            }

            lanes_loop!(
                /// `out[i] = sinh a[i]`.
                sinh_loop, $t, tables: |l| (), sinh_lanes, sinh
            );
            lanes_loop!(
                /// `out[i] = cosh a[i]`.
                cosh_loop, $t, tables: |l| (), cosh_lanes, cosh
            );
            lanes_loop!(
                /// `out[i] = tanh a[i]`.
                tanh_loop, $t, tables: |l| (), tanh_lanes, tanh
            );
        }
    };
}

width!(f32);
width!(f64);

#[cfg(test)]
mod tests {
    use super::super::lanes::{map_blocks, Lanes, Scalar};
    use super::*;

    /// A sweep over `[-span, span]` with the thresholds' neighbours and special values.
    fn inputs<E: Hyp + From<f32>>(span: f32, step: f32) -> Vec<E> {
        let count = (2.0 * span / step) as usize;
        let mut a: Vec<E> = (0..count)
            .map(|i| E::from(-span + i as f32 * step))
            .collect();
        let specials = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0,
            1.0f32.next_down(),
            88.0,
            88.0f32.next_down(),
            89.4,
            90.0,
            9.0,
            10.0,
            22.0,
            709.0,
            710.4,
            1e-30,
            -1e-30,
        ];
        for (k, v) in specials.into_iter().enumerate() {
            a.insert(97 * k, E::from(v));
            a.insert(97 * k + 1, E::from(-v));
        }
        a.extend((0..3000).map(|i| E::from((i as f32 - 1500.0) * 1e-3)));
        a
    }

    /// A function's name, loop and scalar function.
    type Case<E> = (&'static str, fn(&mut [E], &[E]), fn(E) -> E);

    /// Every copy of each loop gives the scalar function's bits: the dispatched loop, and the
    /// AVX2 copy also on a CPU with AVX-512.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        fn check<E: Hyp + From<f32> + PartialEq + std::fmt::Debug>(
            span: f32,
            loops: [Case<E>; 3],
            bits: fn(E) -> u64,
        ) {
            let a = inputs::<E>(span, 0.0137);
            for (name, run, scalar) in loops {
                let want: Vec<u64> = a.iter().map(|&x| bits(scalar(x))).collect();
                let mut out = a.clone();
                run(&mut out, &a);
                let got: Vec<u64> = out.iter().map(|&y| bits(y)).collect();
                assert_eq!(got, want, "{name}");
            }
        }
        check::<f32>(
            95.0,
            [
                ("sinh", f32::sinh_loop, f32::sinh),
                ("cosh", f32::cosh_loop, f32::cosh),
                ("tanh", f32::tanh_loop, f32::tanh),
            ],
            |y| y.to_bits() as u64,
        );
        check::<f64>(
            715.0,
            [
                ("sinh", f64::sinh_loop, f64::sinh),
                ("cosh", f64::cosh_loop, f64::cosh),
                ("tanh", f64::tanh_loop, f64::tanh),
            ],
            f64::to_bits,
        );
        #[cfg(target_arch = "x86_64")]
        if let Some(l) = super::super::lanes::Avx2::detect() {
            let a = inputs::<f32>(95.0, 0.0137);
            let mut out = a.clone();
            map_blocks(
                l,
                &mut out,
                &a,
                |l, x| sinh_lanes::<f32, _>(l, &(), x),
                f32::sinh,
            );
            let want: Vec<u32> = a.iter().map(|&x| f32::sinh(x).to_bits()).collect();
            assert_eq!(out.iter().map(|y| y.to_bits()).collect::<Vec<_>>(), want);
            let a = inputs::<f64>(715.0, 0.0137);
            let mut out = a.clone();
            map_blocks(
                l,
                &mut out,
                &a,
                |l, x| tanh_lanes::<f64, _>(l, &(), x),
                f64::tanh,
            );
            let want: Vec<u64> = a.iter().map(|&x| f64::tanh(x).to_bits()).collect();
            assert_eq!(out.iter().map(|y| y.to_bits()).collect::<Vec<_>>(), want);
        }
    }

    /// Below `LIMIT` the one-factor scaling of the vectors and the two-factor one of the
    /// scalar function's wide path give the same bits (the module doc's claim), for both
    /// signs of the low term.
    #[test]
    fn one_and_two_factor_scaling_agree_below_the_limit() {
        fn check<E: Hyp + From<f32> + Copy>(limit: f32, bits: fn(E) -> u64)
        where
            Scalar: Lanes<E, F = E, I = E::Int>,
        {
            let mut a = 1.0f32;
            while a < limit {
                let (_, n, c, s) = reduce::<E, Scalar>(Scalar, E::from(a));
                for sign in [E::ZERO_I, E::SIGN_EXP] {
                    let one = combine::<E, Scalar>(Scalar, n, c, s, sign);
                    let two = combine_wide::<E, Scalar>(Scalar, n, c, s, sign);
                    assert_eq!(bits(one), bits(two), "{a}");
                }
                let (n, c, s) = reduce_near::<E, Scalar>(Scalar, E::from(a - 1.0));
                let one = combine::<E, Scalar>(Scalar, n, c, s, E::ZERO_I);
                let two = combine_wide::<E, Scalar>(Scalar, n, c, s, E::ZERO_I);
                assert_eq!(bits(one), bits(two), "cosh {a}");
                a += 0.0071;
            }
        }
        check::<f32>(88.0, |y| y.to_bits() as u64);
        check::<f64>(709.0, f64::to_bits);
    }

    /// Hand-worked values: zeros keep their sign, the ends saturate or overflow where the
    /// functions do, NaN passes through.
    #[test]
    fn hand_worked_values() {
        assert_eq!(f32::sinh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f32::tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f32::cosh(0.0), 1.0);
        assert_eq!(f32::tanh(f32::INFINITY), 1.0);
        assert_eq!(f32::tanh(-1e30), -1.0);
        assert_eq!(f32::cosh(f32::NEG_INFINITY), f32::INFINITY);
        assert_eq!(f32::sinh(-90.0), f32::NEG_INFINITY);
        assert!(f32::sinh(89.0).is_finite());
        assert!(f32::tanh(f32::NAN).is_nan() && f32::cosh(f32::NAN).is_nan());
        assert_eq!(f64::sinh(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(f64::cosh(0.0), 1.0);
        assert_eq!(f64::tanh(-50.0), -1.0);
        assert!(f64::cosh(710.0).is_finite() && f64::cosh(711.0).is_infinite());
        assert!(f64::sinh(f64::NAN).is_nan());
    }

    /// `tanh` of a NaN, with any payload and sign (quiet or signalling), is a NaN of that
    /// sign on every path: the scalar function and each copy of the loop, whose lanes run
    /// with no NaN check.
    #[test]
    fn tanh_of_nan_is_nan_with_its_sign() {
        let f32_nans = [
            0x7fc0_0000u32,
            0xffc0_0000,
            0x7fc1_2345,
            0xffa0_0001,
            0x7f80_0001,
        ];
        let a: Vec<f32> = (0..40)
            .map(|i| match i % 5 {
                0 => f32::from_bits(f32_nans[i / 8]),
                _ => i as f32 * 0.3 - 6.0,
            })
            .collect();
        let mut out = vec![0.0f32; a.len()];
        f32::tanh_loop(&mut out, &a);
        for (&x, &y) in a.iter().zip(&out) {
            for y in [y, f32::tanh(x)] {
                assert_eq!(x.is_nan(), y.is_nan(), "{x:e} -> {y:e}");
                assert_eq!(x.is_sign_negative(), y.is_sign_negative(), "{x:e} -> {y:e}");
            }
        }
        let a: Vec<f64> = a.iter().map(|&x| x as f64).collect();
        let mut out = vec![0.0f64; a.len()];
        f64::tanh_loop(&mut out, &a);
        for (&x, &y) in a.iter().zip(&out) {
            for y in [y, f64::tanh(x)] {
                assert_eq!(x.is_nan(), y.is_nan(), "{x:e} -> {y:e}");
                assert_eq!(x.is_sign_negative(), y.is_sign_negative(), "{x:e} -> {y:e}");
            }
        }
    }
}
