//! `f64`'s natural logarithm, `log2`, `log10`, `log1p`, `atanh` and `asinh` by the 16-entry
//! table method of `f32`'s (`ln_table.rs`, docs/design.md P2), written once against
//! [`Lanes<f64>`](super::lanes::Lanes) for the portable, AVX2 and AVX-512 loops.
//!
//! The series method they replace (`s = f/(2 + f)`, ten terms in `s²`) divided once per
//! element, and a division of eight `f64` lanes occupies the divider for about 16 cycles:
//! `log` took 1.2-1.43 times NumPy's time for 64 Ki elements, `log1p` 1.3-1.5. Here, with
//! `x = 2^k z`, `z` in `[0.699, 1.398)`, and the intervals and `c_i` of `f32`'s table
//! ([`INVC`], `f32` values, so exact in `f64`):
//! - `z c_i = p + e` exactly (`p` rounded, `e` by a fused multiply-add), so `z c_i - 1` is
//!   `(p - 1) + e` with `p - 1` exact (`p` is within 4% of 1): the first-order term carries no
//!   rounding. `r = z c_i - 1` rounded once feeds the polynomial, `|r| < 0.032`;
//! - `ln(x) = (k ln2_hi + T_i) + (p - 1) + (e + k ln2_lo + T_i,lo + r² Q(r))`, with
//!   `T_i = -ln(c_i)` in two parts (`scripts/tables64.py`), the first a multiple of `2^-42`
//!   like `ln2_hi`, so `a = k ln2_hi + T_i` is exact (`|k| < 2^11`), and `Q` the Taylor series
//!   of `(ln(1 + r) - r)/r²` to `r⁹` (its truncation, `r¹²/12`, is under 0.03 of an ulp of
//!   the result, at worst at the edge of the intervals next to 1's);
//! - `a + (p - 1)` is split exactly into `hi + lo` (fast two-sum, `|a| >= |p - 1|` wherever
//!   `a` is not 0): the result rounds once, where the small terms meet `hi`, and the
//!   polynomial's argument `r` (rounded) moves it by under 0.02 of an ulp. About half an ulp
//!   in all.
//!
//! `log1p(x)` takes `u = 1 + x` rounded and its rounding error `c = x - (u - 1)`, and adds
//! `c/u` to the small terms as `c 2^-k c_i (1 - r)` (first order in `r`; `c/u` is below half
//! an ulp of `u`), without a division. `atanh(x) = log1p(2a + 2a²/(1 - a))/2` with `a = |x|`
//! (one division), `asinh(x) = log1p(a + a²/(1 + sqrt(1 + a²)))` (one division, one square
//! root), and `ln(2a)` above `a = 2^28`, as for `f32`. `log2` and `log10` multiply `ln`'s two
//! parts, before their last addition, by `log2(e)` or `log10(e)` in two parts ([`ln_times`]).
//!
//! A block of lanes whose logarithm operand is not positive, normal and finite goes element
//! by element through the scalar function, which scales subnormals and sets the special
//! values of [`log_special`]. Both run the same generic code, so a result never depends on
//! the path (tested bit for bit).

use super::f64::log_special;
use super::lanes::{lanes_loop, Lanes, Scalar};
use super::log_table::INVC;

/// Subtracted from `x`'s bits so that `z` lands in `[0.699, 1.398)`: the bits of 0.69921875,
/// `f32`'s `OFF` in `f64`'s layout (the same intervals).
const OFF: i64 = 0x3fe6_6000_0000_0000;

/// `0xfff0_0000_0000_0000`: the sign and exponent bits of an `f64`.
const EXP_MASK: i64 = 0xfff0_0000_0000_0000_u64 as i64;

/// `c_i`: [`INVC`] in `f64` (exactly).
const C: [f64; 16] = {
    let mut t = [0.0; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = INVC[i] as f64;
        i += 1;
    }
    t
};

/// `T_i = -ln(c_i)` rounded to a multiple of `2^-42`, as that multiple's numerator
/// (`scripts/tables64.py`).
const HI_2_42THS: [i64; 16] = [
    -1_476_385_793_165,
    -1_288_205_532_617,
    -1_107_747_449_452,
    -934_402_970_334,
    -767_632_454_753,
    -606_955_589_920,
    -451_942_085_319,
    -302_206_782_745,
    -157_402_271_514,
    0,
    234_171_929_139,
    487_366_786_415,
    726_775_311_630,
    953_821_819_244,
    1_169_719_892_709,
    1_375_514_206_314,
];

/// `2^42`.
const TWO_42: f64 = (1u64 << 42) as f64;

/// `T_i`'s first part: [`HI_2_42THS`] over `2^42`, exact.
const HI: [f64; 16] = {
    let mut t = [0.0; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = HI_2_42THS[i] as f64 / TWO_42;
        i += 1;
    }
    t
};

/// `T_i - HI[i]`, rounded to `f64` (`scripts/tables64.py`).
const LO: [f64; 16] = [
    -2.775_955_911_807_247_2e-14,
    -4.722_205_402_035_415_3e-14,
    -9.325_499_248_412_517e-14,
    -1.010_682_605_623_777_4e-13,
    9.076_925_446_091_909e-14,
    6.405_080_816_714_319e-14,
    1.343_883_990_970_021_8e-14,
    -7.570_589_835_495_056e-14,
    -4.275_082_012_868_130_5e-14,
    0.0,
    -2.516_513_063_562_066e-14,
    2.586_244_132_867_035_6e-14,
    -8.372_047_731_148_986e-14,
    9.180_308_162_244_197e-14,
    -7.274_202_432_552_017e-14,
    1.121_753_616_989_438_2e-13,
];

/// `ln 2` as a multiple of `2^-42`, and the rest (`scripts/tables64.py`).
const LN2_HI: f64 = 3_048_493_539_143.0 / TWO_42;
const LN2_LO: f64 = 5.497_923_018_708_371e-14;

/// `(ln(1 + r) - r)/r² ≈ q0 + q1 r + ... + q9 r⁹`: `(-1)^(j+1)/(j + 2)`.
const Q: [f64; 10] = {
    let mut q = [0.0; 10];
    let mut j = 0;
    while j < 10 {
        let sign = if j % 2 == 0 { -1.0 } else { 1.0 };
        q[j] = sign / (j + 2) as f64;
        j += 1;
    }
    q
};

/// Above this magnitude `asinh(a)` is `ln(2a)`: `1/(4a²)` is far below half an ulp (the
/// `f64` cut of `derived.rs`'s `acosh`).
const ASINH_LARGE: f64 = 268_435_456.0;

/// The three tables in a width's form.
struct Tables<L: Lanes<f64>> {
    c: L::T,
    hi: L::T,
    lo: L::T,
}

impl<L: Lanes<f64>> Tables<L> {
    #[inline(always)]
    fn new(l: L) -> Self {
        Tables {
            c: l.table(&C),
            hi: l.table(&HI),
            lo: l.table(&LO),
        }
    }
}

/// `Q(r)` by Estrin's scheme: five independent pairs, joined in `r²`, `r⁴` and `r⁸`.
#[inline(always)]
fn q_of<L: Lanes<f64>>(l: L, r: L::F) -> L::F {
    let s = |x: f64| l.splat(x);
    let pair = |j: usize| l.fma(r, s(Q[j + 1]), s(Q[j]));
    let r2 = l.mul(r, r);
    let r4 = l.mul(r2, r2);
    let q03 = l.fma(r2, pair(2), pair(0));
    let q47 = l.fma(r2, pair(6), pair(4));
    let q07 = l.fma(r4, q47, q03);
    l.fma(l.mul(r4, r4), pair(8), q07)
}

/// `ln(2^k_adj u) + c/u` for a positive, normal, finite `u` and a `c` of at most about half
/// an ulp of `u` (`None` for 0), as `(hi, lo)` before their last addition (`lo` under an ulp
/// of `hi`, or `hi` 0); other `u` give unspecified values.
#[inline(always)]
fn ln_parts<L: Lanes<f64>>(
    l: L,
    t: &Tables<L>,
    u: L::F,
    k_adj: i64,
    c: Option<L::F>,
) -> (L::F, L::F) {
    let s = |x: f64| l.splat(x);
    let ix = l.bits(u);
    let tmp = l.sub_i(ix, l.splat_i(OFF));
    let i = l.srl::<48>(tmp);
    let k = l.sra::<52>(tmp);
    let z = l.float_of_bits(l.sub_i(ix, l.and_i(tmp, l.splat_i(EXP_MASK))));
    let ci = l.lookup(t.c, i);
    let kf = l.to_float(l.add_i(k, l.splat_i(k_adj)));
    // `z c_i = p + e` exactly; `p - 1` is exact.
    let p = l.mul(z, ci);
    let e = l.fma(z, ci, l.sub(s(0.0), p));
    let r1 = l.sub(p, s(1.0));
    let r = l.fma(z, ci, s(-1.0));
    let a = l.fma(kf, s(LN2_HI), l.lookup(t.hi, i));
    let mut tail = l.add(l.fma(kf, s(LN2_LO), l.lookup(t.lo, i)), e);
    if let Some(c) = c {
        // `c/u = c 2^-k c_i / (1 + r)`, with `c_i 2^-k` by subtracting `k` from `c_i`'s
        // exponent field, `k` capped at 64 where `c` is 0 anyway (from `u = 2^54` on, `1 + x`
        // is `x`), so that the result stays normal.
        let ci_scaled =
            l.float_of_bits(l.sub_i(l.bits(ci), l.sll::<52>(l.min_i(k, l.splat_i(64)))));
        tail = l.fma(l.mul(c, ci_scaled), l.sub(s(1.0), r), tail);
    }
    let tail = l.fma(l.mul(r, r), q_of(l, r), tail);
    let hi = l.add(a, r1);
    let lo = l.add(l.sub(a, hi), r1);
    (hi, l.add(lo, tail))
}

/// `ln(2^k_adj u) + c/u` as [`ln_parts`] describes, rounded once.
#[inline(always)]
fn ln_core<L: Lanes<f64>>(l: L, t: &Tables<L>, u: L::F, k_adj: i64, c: Option<L::F>) -> L::F {
    let (hi, lo) = ln_parts(l, t, u, k_adj, c);
    l.add(hi, lo)
}

/// `ln(2^k_adj u)` times `b = b.0 + b.1` (`log2(e)` or `log10(e)` in two parts), rounded once:
/// `hi b.0 + (hi b.1 + lo b.0)` in a fused multiply-add, which adds the small terms to the
/// exact product `hi b.0`. Their own error is under 0.01 of an ulp, so the result keeps
/// `ln`'s accuracy, and a power of the base, whose logarithm is an integer, comes out exact.
#[inline(always)]
fn ln_times<L: Lanes<f64>>(l: L, t: &Tables<L>, u: L::F, k_adj: i64, b: (f64, f64)) -> L::F {
    let s = |x: f64| l.splat(x);
    let (hi, lo) = ln_parts(l, t, u, k_adj, None);
    l.fma(hi, s(b.0), l.fma(hi, s(b.1), l.mul(lo, s(b.0))))
}

/// `(u, c)`: `1 + x` rounded, and its rounding error.
#[inline(always)]
fn split_1p<L: Lanes<f64>>(l: L, x: L::F) -> (L::F, L::F) {
    let one = l.splat(1.0);
    let u = l.add(one, x);
    (u, l.sub(x, l.sub(u, one)))
}

/// `log1p(x)` from [`split_1p`]'s parts, before special values (`x` itself at `±0`).
#[inline(always)]
fn log1p_of<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F, (u, c): (L::F, L::F)) -> L::F {
    let y = ln_core(l, t, u, 0, Some(c));
    l.select(l.eq(x, l.splat(0.0)), x, y)
}

/// `2a + 2a²/(1 - a)`: the operand of `log1p` in `atanh(a)`.
#[inline(always)]
fn atanh_operand<L: Lanes<f64>>(l: L, a: L::F) -> L::F {
    let two_a = l.add(a, a);
    l.add(two_a, l.div(l.mul(two_a, a), l.sub(l.splat(1.0), a)))
}

/// `a + a²/(1 + sqrt(1 + a²))`: the operand of `log1p` in `asinh(a)`.
#[inline(always)]
fn asinh_operand<L: Lanes<f64>>(l: L, a: L::F) -> L::F {
    let one = l.splat(1.0);
    let a2 = l.mul(a, a);
    l.add(a, l.div(a2, l.add(one, l.sqrt(l.add(one, a2)))))
}

/// `x` with a subnormal scaled by `2^54` into the normal range, and the exponent to take
/// back off (`k_adj` of [`ln_parts`]).
#[inline(always)]
fn unsubnormal(x: f64) -> (f64, i64) {
    if x < f64::MIN_POSITIVE {
        (x * (1u64 << 54) as f64, -54)
    } else {
        (x, 0)
    }
}

/// Natural logarithm.
#[inline(always)]
pub fn log(x: f64) -> f64 {
    let (xs, k_adj) = unsubnormal(x);
    log_special(x, ln_core(Scalar, &Tables::new(Scalar), xs, k_adj, None))
}

/// `log2(e)` and `log10(e)`, each as the nearest `f64` and the rest (to 60 digits, Python's
/// `decimal`: `1/Decimal(2).ln()`, `1/Decimal(10).ln()`).
const LOG2_E: (f64, f64) = (std::f64::consts::LOG2_E, 2.035_527_374_093_103_3e-17);
const LOG10_E: (f64, f64) = (std::f64::consts::LOG10_E, 1.098_319_650_216_765e-17);

/// `ln(x)` times `b` ([`ln_times`]) for every `x`: subnormals scaled as in [`log`], and
/// [`log_special`]'s values at 0, negatives, infinity and NaN.
#[inline(always)]
fn log_base(x: f64, b: (f64, f64)) -> f64 {
    let (xs, k_adj) = unsubnormal(x);
    log_special(x, ln_times(Scalar, &Tables::new(Scalar), xs, k_adj, b))
}

/// Base-2 logarithm: `ln(x) log2(e)` with the product carried in two parts, so that
/// `log2(2^k) = k` exactly.
#[inline(always)]
pub fn log2(x: f64) -> f64 {
    log_base(x, LOG2_E)
}

/// Base-10 logarithm: `ln(x) log10(e)` as [`log2`] (`log10(10^k) = k` exactly).
#[inline(always)]
pub fn log10(x: f64) -> f64 {
    log_base(x, LOG10_E)
}

/// [`log`] of a positive, normal, finite `x` (other inputs give unspecified values), with
/// the same bits.
#[inline(always)]
pub fn log_normal(x: f64) -> f64 {
    ln_core(Scalar, &Tables::new(Scalar), x, 0, None)
}

/// `ln(1 + x)`, accurate near 0.
#[inline(always)]
pub fn log1p(x: f64) -> f64 {
    let parts = split_1p(Scalar, x);
    log_special(parts.0, log1p_of(Scalar, &Tables::new(Scalar), x, parts))
}

/// `atanh(x)` for `|x| < 1` (`a = |x|`): `log1p(w)/2` with `w` = [`atanh_operand`], without
/// `log1p`'s zero select (`ln(1) = +0` here, and the sign comes from `x`). `u = 1 + w` is
/// positive, normal, finite and at most `2^54` (`1 - a >= 2^-53`).
#[inline(always)]
fn atanh_inside<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F, a: L::F) -> L::F {
    let (u, c) = split_1p(l, atanh_operand(l, a));
    let y = ln_core(l, t, u, 0, Some(c));
    l.copysign(l.mul(l.splat(0.5), y), x)
}

/// Inverse hyperbolic tangent: `±inf` at `±1`, NaN past.
#[inline(always)]
pub fn atanh(x: f64) -> f64 {
    let a = x.abs();
    if a < 1.0 {
        atanh_inside(Scalar, &Tables::new(Scalar), x, a)
    } else if a == 1.0 {
        f64::INFINITY.copysign(x)
    } else {
        f64::NAN
    }
}

/// Inverse hyperbolic sine: `log1p(a + a²/(1 + sqrt(1 + a²)))`, or `ln(2a)` past
/// `a = 2^28` (`ln(a)` with the exponent raised by one).
#[inline(always)]
pub fn asinh(x: f64) -> f64 {
    let a = x.abs();
    let y = if a > ASINH_LARGE {
        log_special(a, ln_core(Scalar, &Tables::new(Scalar), a, 1, None))
    } else {
        log1p(asinh_operand(Scalar, a))
    };
    y.copysign(x)
}

// The vector forms below return `None` where a lane's logarithm operand is not positive,
// normal and finite (the block then takes the scalar function).

/// [`log`] on a vector.
#[inline(always)]
fn log_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    l.all_positive_normal(x).then(|| ln_core(l, t, x, 0, None))
}

/// [`log2`] on a vector.
#[inline(always)]
fn log2_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    l.all_positive_normal(x)
        .then(|| ln_times(l, t, x, 0, LOG2_E))
}

/// [`log10`] on a vector.
#[inline(always)]
fn log10_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    l.all_positive_normal(x)
        .then(|| ln_times(l, t, x, 0, LOG10_E))
}

/// [`log1p`] on a vector.
#[inline(always)]
fn log1p_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    let parts = split_1p(l, x);
    l.all_positive_normal(parts.0)
        .then(|| log1p_of(l, t, x, parts))
}

/// [`atanh`] on a vector; `None` unless every lane is below 1 in magnitude.
#[inline(always)]
fn atanh_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    l.all(l.gt(l.splat(1.0), a))
        .then(|| atanh_inside(l, t, x, a))
}

/// [`asinh`] on a vector; `None` also where a lane is above [`ASINH_LARGE`] (rare: the
/// scalar function takes the block).
#[inline(always)]
fn asinh_lanes<L: Lanes<f64>>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    if l.any(l.gt(a, l.splat(ASINH_LARGE))) {
        return None;
    }
    let w = asinh_operand(l, a);
    let parts = split_1p(l, w);
    l.all_positive_normal(parts.0)
        .then(|| l.copysign(log1p_of(l, t, w, parts), x))
}

lanes_loop!(
    /// `out[i] = ln(a[i])`.
    log_loop,
    f64,
    tables: |l| Tables::new(l),
    log_lanes,
    log
);
lanes_loop!(
    /// `out[i] = log2(a[i])`.
    log2_loop,
    f64,
    tables: |l| Tables::new(l),
    log2_lanes,
    log2
);
lanes_loop!(
    /// `out[i] = log10(a[i])`.
    log10_loop,
    f64,
    tables: |l| Tables::new(l),
    log10_lanes,
    log10
);
lanes_loop!(
    /// `out[i] = ln(1 + a[i])`.
    log1p_loop,
    f64,
    tables: |l| Tables::new(l),
    log1p_lanes,
    log1p
);
lanes_loop!(
    /// `out[i] = asinh(a[i])`.
    asinh_loop,
    f64,
    tables: |l| Tables::new(l),
    asinh_lanes,
    asinh
);
lanes_loop!(
    /// `out[i] = atanh(a[i])`.
    atanh_loop,
    f64,
    tables: |l| Tables::new(l),
    atanh_lanes,
    atanh
);

#[cfg(test)]
mod tests {
    use super::super::lanes::map_blocks;
    use super::*;

    /// The tables are what the module doc says: `hi` a multiple of `2^-42` within `2^-43` of
    /// `-ln(c_i)` (here in `f64`, good to about `2^-53`), `hi + lo` within the `f64`
    /// logarithm's own error of it; `ln 2` likewise.
    #[test]
    fn tables_are_what_the_doc_says() {
        for i in 0..16 {
            let t = -C[i].ln();
            assert_eq!((HI[i] * TWO_42).fract(), 0.0, "hi {i}");
            assert!((HI[i] - t).abs() <= 0.5 / TWO_42 + 1e-16, "hi {i}");
            assert!((HI[i] + LO[i] - t).abs() <= 6e-17, "lo {i}");
        }
        assert_eq!((LN2_HI * TWO_42).fract(), 0.0);
        assert_eq!(LN2_HI + LN2_LO, std::f64::consts::LN_2);
    }

    /// Inputs for the bit-for-bit checks: numbers of every binade and both signs, a block
    /// with special values, values near 0, across `(-1, 1)`, and past `±1`.
    fn inputs() -> Vec<f64> {
        // Bit patterns spread over the whole range (wrapping: some are negative or NaN).
        let mut a: Vec<f64> = (0..40_000u64)
            .map(|i| f64::from_bits(i.wrapping_mul(0x0001_b5a3_c2f7_1d03).wrapping_add(1 << 52)))
            .collect();
        let specials = [
            0.0,
            -0.0,
            -1.0,
            1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e-310,
            -1e-310,
            0.98,
            -0.999_999_999_999_999_9,
            3e17,
            -3e17,
            ASINH_LARGE,
            ASINH_LARGE * (1.0 + f64::EPSILON),
            -2.0,
            1.000_000_000_000_000_2,
            -1.000_000_000_000_000_2,
            5e-17,
        ];
        a[4000..4000 + specials.len()].copy_from_slice(&specials);
        a.extend((0..4000).map(|i| -1.0 + i as f64 * 5e-4));
        a.extend((0..1000).map(|i| i as f64 * 1e-18));
        a
    }

    /// Every copy of each loop gives the scalar function's bits: the dispatched loop, and
    /// the AVX2 copy also on a CPU with AVX-512.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        let a = inputs();
        let bits = |v: &[f64]| v.iter().map(|o| o.to_bits()).collect::<Vec<u64>>();
        macro_rules! check {
            ($run:ident, $lanes:ident, $f:ident) => {{
                let want: Vec<u64> = a.iter().map(|&x| $f(x).to_bits()).collect();
                let mut out = vec![0.0; a.len()];
                $run(&mut out, &a);
                assert_eq!(bits(&out), want, stringify!($run));
                #[cfg(target_arch = "x86_64")]
                if let Some(l) = super::super::lanes::Avx2::detect() {
                    let t = Tables::new(l);
                    out.fill(0.0);
                    map_blocks(l, &mut out, &a, |l, x| $lanes(l, &t, x), $f);
                    assert_eq!(bits(&out), want, stringify!($lanes));
                }
            }};
        }
        check!(log_loop, log_lanes, log);
        check!(log1p_loop, log1p_lanes, log1p);
        check!(log2_loop, log2_lanes, log2);
        check!(log10_loop, log10_lanes, log10);
        check!(atanh_loop, atanh_lanes, atanh);
        check!(asinh_loop, asinh_lanes, asinh);
        for &x in a.iter().filter(|x| x.is_normal() && **x > 0.0) {
            assert_eq!(log_normal(x).to_bits(), log(x).to_bits());
        }
    }

    /// Hand-worked values: `ln(1) = 0`, `ln(2)` and `ln(e)` rounded, `log1p` keeping tiny
    /// arguments and the sign of zero, `atanh`'s ends, `asinh` past its cut.
    #[test]
    fn hand_worked_values() {
        assert_eq!(log(1.0).to_bits(), 0);
        assert_eq!(log(2.0), std::f64::consts::LN_2);
        assert_eq!(log(std::f64::consts::E), 1.0);
        assert_eq!(
            log(f64::MIN_POSITIVE / 4.0),
            -1024.0 * std::f64::consts::LN_2
        );
        assert_eq!(log1p(1e-300), 1e-300);
        assert_eq!(log1p(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(log1p(-1.0), f64::NEG_INFINITY);
        assert!(log1p(-1.5).is_nan());
        assert_eq!(atanh(1.0), f64::INFINITY);
        assert_eq!(atanh(-1.0), f64::NEG_INFINITY);
        assert!(atanh(3e17).is_nan());
        assert_eq!(atanh(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(asinh(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(asinh(f64::NEG_INFINITY), f64::NEG_INFINITY);
    }
}
