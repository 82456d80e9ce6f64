//! `f64`'s `exp` by a 16-entry table of `2^(j/16)` (docs/design.md P2), written once
//! against [`Lanes<f64>`](super::lanes::Lanes) for the portable, AVX2 and AVX-512 loops.
//!
//! The method of [`vmath`](super) (`x = n ln2 + r`, `|r| <= ln2/2`, twelve Taylor terms, the
//! scaling by `2^n` in two halves and a clamp for the ends) took about 36 vector
//! instructions per element group, and 64 Ki `f64` 1.3-1.45 times NumPy's time. Here:
//! - `k = x 16/ln2` rounded in one fused multiply-add with `1.5 2^52` (so `k` is in the low
//!   bits of the sum), `x = (16 n + j) ln2/16 + r` with `j = k mod 16` (the table index: the
//!   lookup reads the low four bits) and `n = k >> 4` (`(bits >> 4) << 52` is `n`'s exponent
//!   field, wrapping for negative `n`), `|r| <= ln2/32` plus the rounding of `16/ln2`;
//! - `r = x - k ln2/16` in two fused multiply-adds (`ln2/16` as `LN_2/16`, exact, and the part
//!   of `ln 2` below `f64` over 16): two roundings of `r`, together under 0.02 of an ulp of
//!   the result;
//! - `e^r - 1 = r + r² P(r)` with `P` the Taylor series to `r⁵` (its truncation, `r⁸/8!`, is
//!   under 0.01 of an ulp);
//! - `e^x = 2^n (T_j + (T_j q + t_j))` with `2^(j/16) = T_j + t_j` in two parts
//!   (`scripts/tables64.py`): the result rounds once, at the last addition, and `2^n` is an
//!   integer added to the exponent field (exact while the result is normal).
//!
//! A vector with a lane beyond `|x| <= 708` (where results stay normal and finite) or a NaN
//! goes element by element through the scalar function, which takes [`exp_series`] (the
//! method above, with its subnormal and overflow handling) for those and this method for
//! the rest; both run the same generic code, so a result never depends on the path (tested
//! bit for bit).

use super::f64::exp_series;
use super::lanes::{lanes_loop, Lanes, Scalar};
use super::{inv_factorial, LN2_TAIL};
use std::f64::consts::LN_2;

/// `|x|` up to which every result is normal and finite (`e^-708` is about `3.3e-308`).
const LIMIT: f64 = 708.0;

/// `1.5 2^52`: adding it rounds to an integer and leaves that integer in the low bits.
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// `16/ln 2`, and `ln2/16` in two parts (the first exact: `LN_2` over a power of two).
const INV_L: f64 = 16.0 / LN_2;
const L_HI: f64 = LN_2 / 16.0;
const L_LO: f64 = LN2_TAIL / 16.0;

/// `P(r) = 1/2! + r/3! + ... + r⁵/7!`: `e^r - 1 = r + r² P(r)`.
const P: [f64; 6] = {
    let mut c = [0.0; 6];
    let mut j = 0;
    while j < 6 {
        c[j] = inv_factorial(j + 2);
        j += 1;
    }
    c
};

/// `2^(j/16)` rounded to `f64` (`scripts/tables64.py`).
const T_HI: [f64; 16] = [
    1.0,
    1.044_273_782_427_413_8,
    1.090_507_732_665_257_7,
    1.138_788_634_756_691_6,
    1.189_207_115_002_721,
    1.241_857_812_073_484,
    1.296_839_554_651_009_6,
    1.354_255_546_936_892_7,
    std::f64::consts::SQRT_2,
    1.476_826_145_939_499_3,
    1.542_210_825_407_940_7,
    1.610_490_331_949_254_3,
    1.681_792_830_507_429,
    1.756_252_160_373_299_5,
    1.834_008_086_409_342_4,
    1.915_206_561_397_147_4,
];

/// `2^(j/16) - T_HI[j]`, rounded to `f64` (`scripts/tables64.py`).
const T_LO: [f64; 16] = [
    0.0,
    8.551_889_705_537_965e-17,
    -3.046_782_079_812_471e-17,
    8.912_812_676_025_408e-17,
    3.982_015_231_465_646e-17,
    4.658_027_591_836_937e-17,
    2.538_250_279_488_831_5e-17,
    7.700_948_379_802_99e-17,
    -9.667_293_313_452_913e-17,
    -3.483_994_556_892_796e-17,
    7.949_834_809_697_621e-17,
    2.470_719_256_979_788_8e-17,
    8.199_010_020_581_497e-17,
    2.960_140_695_448_873e-17,
    3.283_107_224_245_627e-17,
    -1.061_994_605_619_596_3e-16,
];

/// The two tables in a width's form.
struct Tables<L: Lanes<f64>> {
    hi: L::T,
    lo: L::T,
}

impl<L: Lanes<f64>> Tables<L> {
    #[inline(always)]
    fn new(l: L) -> Self {
        Tables {
            hi: l.table(&T_HI),
            lo: l.table(&T_LO),
        }
    }
}

/// `e^x` for `|x| <= LIMIT` (other inputs give unspecified values).
#[inline(always)]
fn exp_core<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> L::F {
    let s = |v: f64| l.splat(v);
    let y = l.fma(x, s(INV_L), s(MAGIC));
    let kf = l.sub(y, s(MAGIC));
    let k = l.bits(y);
    let scale = l.sll::<52>(l.srl::<4>(k));
    let r = l.fma(kf, s(-L_HI), x);
    let r = l.fma(kf, s(-L_LO), r);
    let r2 = l.mul(r, r);
    let p01 = l.fma(r, s(P[1]), s(P[0]));
    let p23 = l.fma(r, s(P[3]), s(P[2]));
    let p45 = l.fma(r, s(P[5]), s(P[4]));
    let p = l.fma(l.mul(r2, r2), p45, l.fma(r2, p23, p01));
    let q = l.fma(r2, p, r);
    let hi = l.lookup(t.hi, k);
    let e = l.add(hi, l.fma(hi, q, l.lookup(t.lo, k)));
    l.float_of_bits(l.add_i(l.bits(e), scale))
}

/// `e^x`.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    if x.abs() <= LIMIT {
        exp_core(Scalar, &Tables::new(Scalar), x)
    } else {
        exp_series(x)
    }
}

/// [`exp`] on a vector: `None` where a lane is beyond [`LIMIT`] or NaN.
#[inline(always)]
fn exp_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    // `LIMIT >= |x|` is false for NaN, so a NaN lane takes the scalar function too.
    l.all(l.gt(l.splat(LIMIT.next_up()), l.abs(x)))
        .then(|| exp_core(l, t, x))
}

lanes_loop!(
    /// `out[i] = e^a[i]`.
    exp_loop,
    f64,
    tables: |l| Tables::new(l),
    exp_lanes,
    exp
);

#[cfg(test)]
mod tests {
    use super::super::lanes::map_blocks;
    use super::*;

    /// The tables are what the module doc says: `T_HI[j]` the `f64` nearest `2^(j/16)` and
    /// `T_HI[j] + T_LO[j]` within the `f64` power's own error of it.
    #[test]
    fn tables_are_what_the_doc_says() {
        for j in 0..16 {
            let t = (j as f64 / 16.0).exp2();
            assert!((T_HI[j] - t).abs() <= t * f64::EPSILON, "hi {j}");
            assert!(
                (T_HI[j] + T_LO[j] - t).abs() <= t * f64::EPSILON / 2.0,
                "lo {j}"
            );
            assert!(T_LO[j].abs() <= T_HI[j] * f64::EPSILON / 2.0, "lo {j}");
        }
        assert_eq!(L_HI * 16.0, LN_2);
    }

    /// Inputs for the bit-for-bit check: a sweep over the whole range with neighbours of
    /// the limit, the ends where results leave the normal range, and special values.
    fn inputs() -> Vec<f64> {
        let mut a: Vec<f64> = (0..40_000).map(|i| -760.0 + i as f64 * 0.038_123).collect();
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            LIMIT,
            -LIMIT,
            LIMIT.next_up(),
            -LIMIT.next_up(),
            709.78,
            -745.2,
            1e-300,
            -1e-300,
        ];
        a[4000..4000 + specials.len()].copy_from_slice(&specials);
        a.extend((0..2000).map(|i| (i as f64 - 1000.0) * 1e-3));
        a
    }

    /// Every copy of the loop gives the scalar function's bits: the dispatched loop, and
    /// the AVX2 copy also on a CPU with AVX-512.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        let a = inputs();
        let bits = |v: &[f64]| v.iter().map(|o| o.to_bits()).collect::<Vec<u64>>();
        let want: Vec<u64> = a.iter().map(|&x| exp(x).to_bits()).collect();
        let mut out = vec![0.0; a.len()];
        exp_loop(&mut out, &a);
        assert_eq!(bits(&out), want);
        #[cfg(target_arch = "x86_64")]
        if let Some(l) = super::super::lanes::Avx2::detect() {
            let t = Tables::new(l);
            out.fill(0.0);
            map_blocks(l, &mut out, &a, |l, x| exp_lanes(l, &t, x), exp);
            assert_eq!(bits(&out), want, "avx2");
        }
    }

    /// Hand-worked values: `e^0 = 1` from both signs of zero, `e^1` rounded, `e^(k ln 2)` a
    /// power of two, the ends past the limit.
    #[test]
    fn hand_worked_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(1.0), std::f64::consts::E);
        assert_eq!(exp(LN_2), 2.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        assert!(exp(-745.0) > 0.0 && exp(-746.0) == 0.0);
    }
}
