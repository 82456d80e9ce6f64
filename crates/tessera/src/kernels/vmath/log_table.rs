//! `f32` `log2` and `log10` by a 16-entry table (docs/design.md P2), with AVX-512 and AVX2
//! copies of the loop that read the table with register permutes.
//!
//! The series method of [`vmath`](super) (`s = f/(2+f)`, a series in `s²`) makes a dependent
//! chain of about 70 cycles per vector (a division among them) for 27 instructions: the
//! AVX-512 loop ran at 22-26 cycles per 16 lanes, about twice NumPy's time (NumPy's `log2`
//! and `log10` of `f32` are SVML's AVX-512 code). Here, with `x = 2^k z`:
//! - `z` is in `[0.699, 1.398)` (`x`'s bits minus `OFF`'s: `k` is the difference's exponent,
//!   and the top four bits of its significand pick one of 16 intervals `i` of `z`);
//! - `r = z c_i - 1` in one fused multiply-add, with `c_i` about the reciprocal of the
//!   interval's midpoint (exactly 1 on the interval that holds 1, so `r = z - 1` exactly
//!   there and results near 0 keep their relative accuracy), so `|r| < 0.032`;
//! - `log_b(x) = (k log_b(2) + T_i) + log_b(1 + r)` with `T_i = -log_b(c_i)` (computed for
//!   the `f32` value of `c_i`, so the identity is exact), `log_b(1 + r)` the Taylor series
//!   to `r⁵` (its truncation under `2^-27` of `r`) times `log_b(e)`.
//!
//! `T_i`'s first part and `log_b(2)`'s are multiples of `2^-16` (16 and 15 significant bits),
//! so `k log_b(2)_hi + T_i,hi` is exact for every exponent (`|k| <= 151`, subnormals being
//! scaled by `2^25` first); the parts below go into the small term, and the result rounds
//! once where the two meet. Measured over every `f32` in `[0.5, 1.5)` and every 97th bit
//! pattern: within 1.2 ulp for both (the series method: `log2` 1.64, `log10` 1.49), worst
//! just below 0.98, where the interval below 1's meets it.
//!
//! The code is written once against [`Lanes`] (`lanes/`), like `ln_table.rs`, which
//! shares this reduction ([`reduce`]) and the tables' form ([`Tables`]). A vector reads its
//! three tables with one `vpermps` each on AVX-512 (two and a blend on AVX2) and takes 16
//! arithmetic instructions, with a dependent chain of about 40 cycles (the loop is bound by
//! the count, not the chain: independent vectors overlap). A vector whose inputs are not all
//! positive, normal and finite (one class test on AVX-512, a comparison of the bits
//! elsewhere, then a mask test) goes element by element through the scalar function, which
//! scales subnormals and sets the special values of
//! [`log_special`](super::f32::log_special) (`log_b(0) = -inf`, `log_b(inf) = inf`, NaN
//! below 0). Every copy (AVX-512, AVX2, the portable loop) does the same operations in the
//! same order, so a result never depends on the path (tested bit for bit).

use std::f64::consts::{LOG10_2, LOG10_E, LOG2_E};

use super::f32::log_special;
use super::lanes::{lanes_loop, Lanes, Scalar};

/// Subtracted from `x`'s bits so that `z` lands in `[0.699, 1.398)`, around 1 (the bits of
/// 0.69921875).
pub(super) const OFF: u32 = 0x3f33_0000;

/// `c_i`: about `1 / z` at the middle of interval `i` (`z`'s bits in
/// `[OFF + i 2^19, OFF + (i + 1) 2^19)`), rounded to `f32`; exactly 1 for the interval
/// `[0.98046875, 1.0234375)`. `log_table_is_what_its_doc_says` recomputes it.
pub(super) const INVC: [f32; 16] = [
    1.398_907_1,
    1.340_314_1,
    1.286_432_1,
    1.236_715,
    1.190_697_7,
    1.147_982_1,
    1.108_225_1,
    1.071_129_7,
    1.036_437_3,
    1.0,
    0.948_148_13,
    0.895_104_9,
    0.847_682_1,
    0.805_031_4,
    0.766_467_1,
    0.731_428_56,
];

/// What a base needs: `T_i = -log_b(c_i)` as a multiple of `2^-16` (`hi`) plus the rest
/// (`lo`); `log_b(e)` and `log_b(2)` in two parts (`log_b(2)`'s first part a multiple of
/// `2^-16`); the Taylor coefficients of `log(1 + r) = r + r² (q0 + q1 r + q2 r² + q3 r³)`
/// times `log_b(e)`.
pub(crate) struct Base {
    hi: [f32; 16],
    lo: [f32; 16],
    e_hi: f32,
    e_lo: f32,
    two_hi: f32,
    two_lo: f32,
    q: [f32; 4],
}

/// `q` of [`Base`]: `[-1/2, 1/3, -1/4, 1/5]` times `scale`, each rounded once.
const fn taylor(scale: f64) -> [f32; 4] {
    [
        (-0.5 * scale) as f32,
        (scale / 3.0) as f32,
        (-0.25 * scale) as f32,
        (0.2 * scale) as f32,
    ]
}

/// `log10(2)` as a multiple of `2^-16`: `19728 / 65536`.
const LOG10_2_HI: f64 = 19728.0 / 65536.0;

/// Base 2: `log2(2) = 1` exactly.
pub(super) const LOG2: Base = Base {
    hi: [
        -0.484_298_7,
        -0.422_576_9,
        -0.363_372_8,
        -0.306_518_55,
        -0.251_800_54,
        -0.199_096_68,
        -0.148_254_4,
        -0.099_136_35,
        -0.051_635_742,
        0.0,
        0.076_812_744,
        0.159_866_33,
        0.238_403_32,
        0.312_881_47,
        0.383_697_5,
        0.451_217_65,
    ],
    lo: [
        -1.416_024_6e-6,
        5.717_553e-6,
        -2.561_270_3e-6,
        5.531_669e-6,
        -6.607_926_5e-6,
        -3.492_947_4e-6,
        3.437_290_8e-6,
        3.197_469_1e-6,
        2.937_494_6e-6,
        0.0,
        2.878_438_9e-6,
        5.019_894e-6,
        1.420_356_2e-6,
        1.535_271_5e-6,
        6.728_964e-6,
        -6.524_083_3e-6,
    ],
    e_hi: LOG2_E as f32,
    e_lo: (LOG2_E - LOG2_E as f32 as f64) as f32,
    two_hi: 1.0,
    two_lo: 0.0,
    q: taylor(LOG2_E),
};

/// Base 10.
pub(super) const LOG10: Base = Base {
    hi: [
        -0.145_782_47,
        -0.127_212_52,
        -0.109_390_26,
        -0.092_269_9,
        -0.075_805_664,
        -0.059_936_523,
        -0.044_631_958,
        -0.029_846_191,
        -0.015_548_706,
        0.0,
        0.023_117_065,
        0.048_126_22,
        0.071_762_085,
        0.094_192_505,
        0.115_509_03,
        0.135_833_74,
    ],
    lo: [
        -6.392_946_5e-6,
        5.921_901e-6,
        3.374_538_2e-6,
        2.834_708e-7,
        4.160_284_3e-6,
        1.399_332_5e-6,
        3.972_992_5e-6,
        4.138_165_4e-6,
        5.683_082e-6,
        0.0,
        6.741_102_4e-6,
        -1.480_323_1e-7,
        4.893_088_8e-6,
        -5.335_245e-6,
        -2.547_882e-6,
        -5.656_544_5e-6,
    ],
    e_hi: LOG10_E as f32,
    e_lo: (LOG10_E - LOG10_E as f32 as f64) as f32,
    two_hi: LOG10_2_HI as f32,
    two_lo: (LOG10_2 - LOG10_2_HI) as f32,
    q: taylor(LOG10_E),
};

/// The three tables of a base in a width's form: `c_i` ([`INVC`]) and `T_i`'s two parts.
pub(super) struct Tables<L: Lanes> {
    invc: L::T,
    pub(super) hi: L::T,
    pub(super) lo: L::T,
}

impl<L: Lanes> Tables<L> {
    #[inline(always)]
    pub(super) fn new(l: L, hi: &[f32; 16], lo: &[f32; 16]) -> Self {
        Tables {
            invc: l.table(&INVC),
            hi: l.table(hi),
            lo: l.table(lo),
        }
    }
}

/// The parts of the table reduction `x = 2^k z`, `r = z c_i - 1`, that every table
/// logarithm uses.
pub(super) struct Reduced<L: Lanes> {
    /// The interval, in the low four bits (what [`Lanes::lookup`] reads).
    pub(super) i: L::I,
    /// `k` from `x`'s own bits (without the caller's adjustment).
    pub(super) k: L::I,
    /// `k` plus the adjustment, as a float.
    pub(super) kf: L::F,
    pub(super) c: L::F,
    pub(super) r: L::F,
}

/// [`Reduced`] for a positive, normal, finite `x` whose exponent field, after any scaling,
/// is `k_adj` below its own (`k_adj` is 0, or -25 for a subnormal scaled by `2^25`).
#[inline(always)]
pub(super) fn reduce<L: Lanes>(l: L, t: &Tables<L>, x: L::F, k_adj: L::I) -> Reduced<L> {
    let ix = l.bits(x);
    let tmp = l.sub_i(ix, l.splat_i(OFF as i32));
    let i = l.srl::<19>(tmp);
    let k = l.sra::<23>(tmp);
    let z = l.float_of_bits(l.sub_i(ix, l.and_i(tmp, l.splat_i(EXP_MASK))));
    let c = l.lookup(t.invc, i);
    Reduced {
        i,
        k,
        kf: l.to_float(l.add_i(k, k_adj)),
        c,
        r: l.fma(z, c, l.splat(-1.0)),
    }
}

/// `c_i 2^-k` by subtracting `k` from `c_i`'s exponent field (exact, no `2^-k` to build), with
/// `k` capped at 64: the logarithms that scale by it multiply it by `u`'s rounding error,
/// which is 0 from `u = 2^25` on, and the cap keeps the result normal for every `k`.
#[inline(always)]
pub(super) fn ci_over_2k<L: Lanes>(l: L, ci: L::F, k: L::I) -> L::F {
    l.float_of_bits(l.sub_i(l.bits(ci), l.sll::<23>(l.min_i(k, l.splat_i(64)))))
}

/// `0xff80_0000`: the sign and exponent bits of an `f32`.
const EXP_MASK: i32 = 0xff80_0000_u32 as i32;

/// `log_b(x)` for a positive finite `x` ([`reduce`]'s `k_adj`). Every copy of the loop runs
/// exactly these operations.
#[inline(always)]
fn core<L: Lanes>(l: L, b: &Base, t: &Tables<L>, x: L::F, k_adj: L::I) -> L::F {
    let s = |v: f32| l.splat(v);
    let Reduced { i, kf, r, .. } = reduce(l, t, x, k_adj);
    let a = l.fma(kf, s(b.two_hi), l.lookup(t.hi, i));
    // `r (e_lo + r q(r))` by Horner's scheme: one operation fewer than Estrin's (no `r²`).
    // The count, not the longer chain, sets the loop's speed (f32 `log10` at 64 Ki from
    // Rust on Zen 4: 15.2 -> 14.6 us).
    let q = l.fma(r, s(b.q[3]), s(b.q[2]));
    let q = l.fma(q, r, s(b.q[1]));
    let q = l.fma(q, r, s(b.q[0]));
    let u = l.fma(q, r, s(b.e_lo));
    // Base 2 has no `log_b(2)` low part: `lo_i` alone is the same value (`0 kf + lo_i`, `+0`
    // included), one operation fewer; `b` is a constant, so the branch folds.
    let tail = if b.two_lo == 0.0 {
        l.lookup(t.lo, i)
    } else {
        l.fma(kf, s(b.two_lo), l.lookup(t.lo, i))
    };
    let tail = l.fma(u, r, tail);
    l.add(a, l.fma(r, s(b.e_hi), tail))
}

/// `log_b(x)` for any `x`: subnormals scaled by `2^25` first, special values at the end.
#[inline(always)]
fn log_any(b: &Base, x: f32) -> f32 {
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * (1u32 << 25) as f32 } else { x };
    let t = Tables::new(Scalar, &b.hi, &b.lo);
    log_special(x, core(Scalar, b, &t, xs, if sub { -25 } else { 0 }))
}

/// `log_b` of a positive, normal, finite `x`.
#[inline(always)]
fn log_normal(b: &Base, x: f32) -> f32 {
    core(Scalar, b, &Tables::new(Scalar, &b.hi, &b.lo), x, 0)
}

/// Base-2 logarithm.
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    log_any(&LOG2, x)
}

/// [`log2`] of a positive, normal, finite `x`, with the same bits.
#[inline(always)]
pub fn log2_normal(x: f32) -> f32 {
    log_normal(&LOG2, x)
}

/// Base-10 logarithm.
#[inline(always)]
pub fn log10(x: f32) -> f32 {
    log_any(&LOG10, x)
}

/// [`log10`] of a positive, normal, finite `x`, with the same bits.
#[inline(always)]
pub fn log10_normal(x: f32) -> f32 {
    log_normal(&LOG10, x)
}

/// `log_b` on a vector; `None` where a lane is not positive, normal and finite (the block
/// then takes the scalar function).
#[inline(always)]
fn base_lanes<L: Lanes>(l: L, b: &Base, t: &Tables<L>, x: L::F) -> Option<L::F> {
    l.all_positive_normal(x)
        .then(|| core(l, b, t, x, l.splat_i(0)))
}

/// [`log2`] on a vector ([`base_lanes`]).
#[inline(always)]
fn log2_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    base_lanes(l, &LOG2, t, x)
}

/// [`log10`] on a vector ([`base_lanes`]).
#[inline(always)]
fn log10_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    base_lanes(l, &LOG10, t, x)
}

lanes_loop!(
    /// `out[i] = log2(a[i])`.
    log2_loop,
    f32,
    tables: |l| Tables::new(l, &LOG2.hi, &LOG2.lo),
    log2_lanes,
    log2
);
lanes_loop!(
    /// `out[i] = log10(a[i])`.
    log10_loop,
    f32,
    tables: |l| Tables::new(l, &LOG10.hi, &LOG10.lo),
    log10_lanes,
    log10
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables are what the module doc says: `INVC` from the intervals' midpoints, `T_i`
    /// from `-ln(c_i)` in `f64` (its last bit of `lo` may differ with another libm).
    #[test]
    fn log_table_is_what_its_doc_says() {
        for i in 0..16u32 {
            let lo_bits = OFF + (i << 19);
            let (zlo, zhi) = (
                f32::from_bits(lo_bits) as f64,
                f32::from_bits(lo_bits + (1 << 19)) as f64,
            );
            let want = if zlo <= 1.0 && 1.0 < zhi {
                1.0
            } else {
                (2.0 / (zlo + zhi)) as f32
            };
            assert_eq!(INVC[i as usize], want, "c_{i}");
            for (b, scale) in [(&LOG2, LOG2_E), (&LOG10, LOG10_E)] {
                let t = -(INVC[i as usize] as f64).ln() * scale;
                let hi = (t * 65536.0).round() / 65536.0;
                assert_eq!(b.hi[i as usize] as f64, hi, "hi {i}");
                let lo = (t - hi) as f32;
                assert!((b.lo[i as usize] - lo).abs() <= lo.abs() * 2e-7, "lo {i}");
            }
        }
        assert_eq!(LOG10.two_hi as f64 * 65536.0, 19728.0);
        assert!((LOG10_2_HI - LOG10_2).abs() < 2f64.powi(-17));
    }

    /// Every copy of the loop gives `log_any`'s bits, on blocks of normal inputs (the table
    /// loops) and on blocks with special values, subnormals and negatives: the dispatched
    /// loop, and the AVX2 copy also on a CPU with AVX-512.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        let mut a: Vec<f32> = (0..40_000u32)
            .map(|i| f32::from_bits(0x0080_0000 + i.wrapping_mul(53_687)))
            .collect();
        let specials = [0.0, -0.0, -1.0, f32::INFINITY, f32::NAN, 1e-40, 1.0, 0.98];
        a[4000..4008].copy_from_slice(&specials);
        a.extend((0..1000).map(|i| 0.9 + i as f32 * 2e-4)); // both sides of 1
        macro_rules! check {
            ($run:ident, $lanes:ident, $b:expr) => {{
                let b = $b;
                let want: Vec<u32> = a.iter().map(|&x| log_any(b, x).to_bits()).collect();
                let mut out = vec![0.0; a.len()];
                $run(&mut out, &a);
                assert!(out.iter().zip(&want).all(|(o, w)| o.to_bits() == *w));
                #[cfg(target_arch = "x86_64")]
                if let Some(l) = super::super::lanes::Avx2::detect() {
                    let t = Tables::new(l, &b.hi, &b.lo);
                    out.fill(0.0);
                    super::super::lanes::map_blocks(
                        l,
                        &mut out,
                        &a,
                        |l, x| $lanes(l, &t, x),
                        |x| log_any(b, x),
                    );
                    assert!(out.iter().zip(&want).all(|(o, w)| o.to_bits() == *w));
                }
                // Normal inputs: the `_normal` form gives the same bits.
                for &x in a.iter().filter(|x| x.is_normal() && **x > 0.0) {
                    assert_eq!(log_normal(b, x).to_bits(), log_any(b, x).to_bits());
                }
            }};
        }
        check!(log2_loop, log2_lanes, &LOG2);
        check!(log10_loop, log10_lanes, &LOG10);
    }
}
