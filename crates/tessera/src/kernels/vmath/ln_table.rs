//! `f32`'s natural logarithm, `log1p`, `atanh` and `asinh` by the table method of
//! [`log_table`](super::log_table) (docs/design.md P2), written once against
//! [`Lanes`](super::lanes::Lanes) for the portable, AVX2 and AVX-512 loops.
//!
//! The series method they replace (`s = f/(2 + f)`, a series in `s²`) divides once per
//! element, and `log1p` took 0.98-1.44 times NumPy's time for 64 Ki elements, `atanh`
//! (which divides once more) 1.49-1.74. Here, with `u = 2^k z` and `z` in `[0.699, 1.398)`
//! as in `log_table`:
//! - `r = z c_i - 1` in one fused multiply-add (`c_i` about the reciprocal of the middle of
//!   `z`'s interval, exactly 1 on the interval that holds 1), `|r| < 0.03`;
//! - `ln(u) = (k ln2_hi + T_i) + r + (k ln2_lo + T_i,lo + r² Q(r))`, with `T_i = -ln(c_i)`
//!   in two parts, the first a multiple of `2^-16` (so `a = k ln2_hi + T_i` is exact), and
//!   `Q` the Taylor series of `(ln(1 + r) - r)/r²` to `r³` (its truncation, `r⁶/6`, is under
//!   0.07 of an ulp of the result, at the bottom of the interval above 1's);
//! - `a + r` is split exactly into `hi + lo` (Dekker's fast two-sum: `|a| >= |r|` wherever
//!   `a` is not 0), so the only roundings that count are `r`'s (half an ulp of `r`) and the
//!   last addition. Near 1, where the result is smallest against `r` (the intervals next to
//!   1's), `r`'s rounding is at most half an ulp of the result: within 1 ulp in all.
//!
//! `log1p(x)` takes `u = 1 + x` rounded and its rounding error `c = x - (u - 1)`, and adds
//! `c/u` to the small terms as `c 2^-k c_i (1 - r)` (to first order in `r`; for `|x| < 2^24`
//! `c/u` is below half an ulp of `u`, so the neglected `r²` part is below `2^-34` of it;
//! above, `c` is at most 2 and `c/u` below `2^-23`): no division.
//! `atanh(x) = log1p(2a + 2a²/(1 - a))/2` with `a = |x|`, one division;
//! `asinh(x) = log1p(a + a²/(1 + sqrt(1 + a²)))`, and `ln(2a)` above `a = 8192`.
//!
//! A block of lanes whose logarithm operand is not positive, normal and finite goes element
//! by element through the scalar function, which scales subnormals and sets the special
//! values of [`log_special`] (`ln(0) = -inf`, `ln(inf) = inf`, NaN below 0). Both run the
//! same generic code, so a result never depends on the path (tested bit for bit).

use super::f32::log_special;
use super::lanes::{lanes_loop, Lanes, Scalar};
use super::log_table::{ci_over_2k, reduce, Reduced, Tables};

/// `T_i = -ln(c_i)` rounded to a multiple of `2^-16`, as that multiple's numerator.
const HI_16THS: [i32; 16] = [
    -22000, -19196, -16507, -13924, -11439, -9044, -6734, -4503, -2345, 0, 3489, 7262, 10830,
    14213, 17430, 20497,
];

/// `T_i`'s first part: [`HI_16THS`] over `2^16`, exact.
const HI: [f32; 16] = {
    let mut t = [0.0; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = HI_16THS[i] as f32 / 65536.0;
        i += 1;
    }
    t
};

/// `T_i - HI[i]`, rounded to `f32`.
const LO: [f32; 16] = [
    2.095_211e-6,
    3.688_166_3e-6,
    4.222_01e-6,
    4.741_196_3e-6,
    5.875_459_5e-6,
    -5.235_029_7e-6,
    -7.047_479_4e-6,
    -3.539_788_2e-6,
    -7.272_645_7e-6,
    0.0,
    6.617_174_7e-6,
    5.051_344_5e-6,
    -3.111_720_2e-6,
    8.038_142_6e-7,
    2.817_885e-6,
    -3.678_7e-6,
];

/// `ln 2` as a multiple of `2^-16` (`45426 / 65536`), and the rest.
const LN2_HI: f32 = 45426.0 / 65536.0;
const LN2_LO: f32 = (std::f64::consts::LN_2 - 45426.0 / 65536.0) as f32;

/// `(ln(1 + r) - r)/r² ≈ q0 + q1 r + q2 r² + q3 r³`: `-1/2, 1/3, -1/4, 1/5`.
const Q: [f32; 4] = [-0.5, (1.0 / 3.0) as f32, -0.25, 0.2];

/// `ln(2^k_adj u) + c/u` for a positive, normal, finite `u` and a `c` of at most about an
/// ulp of `u` (`None` for 0); other `u` give unspecified values.
#[inline(always)]
fn ln_core<L: Lanes>(l: L, t: &Tables<L>, u: L::F, k_adj: L::I, c: Option<L::F>) -> L::F {
    let s = |x: f32| l.splat(x);
    let Reduced { i, k, kf, c: ci, r } = reduce(l, t, u, k_adj);
    let mut tail = l.fma(kf, s(LN2_LO), l.lookup(t.lo, i));
    if let Some(c) = c {
        // `c/u = c 2^-k c_i / (1 + r)`.
        let e = l.mul(c, ci_over_2k(l, ci, k));
        tail = l.add(tail, l.mul(e, l.sub(s(1.0), r)));
    }
    ln_sum(l, t, i, kf, r, tail)
}

/// `(k ln2_hi + T_i) + r + (tail + r² Q(r))`, the sum of [`ln_core`] with the exact split
/// of the first two terms (`tail` holds `k ln2_lo + T_i,lo` and any correction).
#[inline(always)]
fn ln_sum<L: Lanes>(l: L, t: &Tables<L>, i: L::I, kf: L::F, r: L::F, tail: L::F) -> L::F {
    let s = |x: f32| l.splat(x);
    let a = l.fma(kf, s(LN2_HI), l.lookup(t.hi, i));
    let r2 = l.mul(r, r);
    // Estrin's scheme: two independent pairs, then one step in `r²`.
    let q = l.fma(r2, l.fma(r, s(Q[3]), s(Q[2])), l.fma(r, s(Q[1]), s(Q[0])));
    let tail = l.fma(r2, q, tail);
    let hi = l.add(a, r);
    let lo = l.add(l.sub(a, hi), r);
    l.add(hi, l.add(lo, tail))
}

/// `(u, c)`: `1 + x` rounded, and its rounding error.
#[inline(always)]
fn split_1p<L: Lanes>(l: L, x: L::F) -> (L::F, L::F) {
    let one = l.splat(1.0);
    let u = l.add(one, x);
    (u, l.sub(x, l.sub(u, one)))
}

/// `log1p(x)` from [`split_1p`]'s parts, before special values (`x` itself at `±0`).
#[inline(always)]
fn log1p_of<L: Lanes>(l: L, t: &Tables<L>, x: L::F, (u, c): (L::F, L::F)) -> L::F {
    let y = ln_core(l, t, u, l.splat_i(0), Some(c));
    l.select(l.eq(x, l.splat(0.0)), x, y)
}

/// `2a + 2a²/(1 - a)`: the operand of `log1p` in `atanh(a)`.
#[inline(always)]
fn atanh_operand<L: Lanes>(l: L, a: L::F) -> L::F {
    let two_a = l.add(a, a);
    l.add(two_a, l.div(l.mul(two_a, a), l.sub(l.splat(1.0), a)))
}

/// `a + a²/(1 + sqrt(1 + a²))`: the operand of `log1p` in `asinh(a)` (no cancellation near
/// 0).
#[inline(always)]
fn asinh_operand<L: Lanes>(l: L, a: L::F) -> L::F {
    let one = l.splat(1.0);
    let a2 = l.mul(a, a);
    l.add(a, l.div(a2, l.add(one, l.sqrt(l.add(one, a2)))))
}

/// Above this magnitude `asinh(a)` is `ln(2a)`: `1/(4a²)` is below half an ulp (the `f64`
/// functions' `LARGE` in `derived.rs` is `f64`'s cut).
const ASINH_LARGE: f32 = 8192.0;

/// Natural logarithm.
#[inline(always)]
pub fn log(x: f32) -> f32 {
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * (1u32 << 25) as f32 } else { x };
    let y = ln_core(
        Scalar,
        &Tables::new(Scalar, &HI, &LO),
        xs,
        if sub { -25 } else { 0 },
        None,
    );
    log_special(x, y)
}

/// [`log`] of a positive, normal, finite `x` (other inputs give unspecified values), with
/// the same bits.
#[inline(always)]
pub fn log_normal(x: f32) -> f32 {
    ln_core(Scalar, &Tables::new(Scalar, &HI, &LO), x, 0, None)
}

/// `ln(1 + x)`, accurate near 0.
#[inline(always)]
pub fn log1p(x: f32) -> f32 {
    let parts = split_1p(Scalar, x);
    log_special(
        parts.0,
        log1p_of(Scalar, &Tables::new(Scalar, &HI, &LO), x, parts),
    )
}

/// `atanh(x)` for `|x| < 1` (`a = |x|`): `ln(u)/2` with `u = 1 + w` rounded, `w` =
/// [`atanh_operand`], and `u`'s rounding error `c = w - (u - 1)` folded into the reduced
/// argument, `r = (u + c) 2^-k c_i - 1 = r_u + c (c_i 2^-k)` in one fused multiply-add
/// ([`ci_over_2k`]). `u` is then positive, normal and finite (`1 - a >= 2^-24`).
#[inline(always)]
fn atanh_inside<L: Lanes>(l: L, t: &Tables<L>, x: L::F, a: L::F) -> L::F {
    let w = atanh_operand(l, a);
    let u = l.add(l.splat(1.0), w);
    let c = l.sub(w, l.sub(u, l.splat(1.0)));
    let Reduced { i, k, kf, c: ci, r } = reduce(l, t, u, l.splat_i(0));
    let r = l.fma(c, ci_over_2k(l, ci, k), r);
    let tail = l.fma(kf, l.splat(LN2_LO), l.lookup(t.lo, i));
    let y = ln_sum(l, t, i, kf, r, tail);
    l.copysign(l.mul(l.splat(0.5), y), x)
}

/// Inverse hyperbolic tangent: `±inf` at `±1`, NaN past.
#[inline(always)]
pub fn atanh(x: f32) -> f32 {
    let a = x.abs();
    if a < 1.0 {
        atanh_inside(Scalar, &Tables::new(Scalar, &HI, &LO), x, a)
    } else if a == 1.0 {
        f32::INFINITY.copysign(x)
    } else {
        f32::NAN
    }
}

/// Inverse hyperbolic sine: `log1p(a + a²/(1 + sqrt(1 + a²)))`, or `ln(2a)` past
/// `a = 8192` (`ln(a)` with the exponent raised by one).
#[inline(always)]
pub fn asinh(x: f32) -> f32 {
    let a = x.abs();
    let y = if a > ASINH_LARGE {
        log_special(
            a,
            ln_core(Scalar, &Tables::new(Scalar, &HI, &LO), a, 1, None),
        )
    } else {
        log1p(asinh_operand(Scalar, a))
    };
    y.copysign(x)
}

// The vector forms below return `None` where a lane's logarithm operand is not positive,
// normal and finite (the block then takes the scalar function).

/// [`log`] on a vector.
#[inline(always)]
fn log_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    l.all_positive_normal(x)
        .then(|| ln_core(l, t, x, l.splat_i(0), None))
}

/// [`log1p`] on a vector.
#[inline(always)]
fn log1p_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    let parts = split_1p(l, x);
    l.all_positive_normal(parts.0)
        .then(|| log1p_of(l, t, x, parts))
}

/// [`atanh`] on a vector; `None` unless every lane is below 1 in magnitude.
#[inline(always)]
fn atanh_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
    let a = l.abs(x);
    l.all(l.gt(l.splat(1.0), a))
        .then(|| atanh_inside(l, t, x, a))
}

/// [`asinh`] on a vector; `None` also where a lane is above [`ASINH_LARGE`] (rare: the
/// scalar function takes the block).
#[inline(always)]
fn asinh_lanes<L: Lanes>(l: L, t: &Tables<L>, x: L::F) -> Option<L::F> {
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
    f32,
    tables: |l| Tables::new(l, &HI, &LO),
    log_lanes,
    log
);
lanes_loop!(
    /// `out[i] = ln(1 + a[i])`.
    log1p_loop,
    f32,
    tables: |l| Tables::new(l, &HI, &LO),
    log1p_lanes,
    log1p
);
lanes_loop!(
    /// `out[i] = asinh(a[i])`.
    asinh_loop,
    f32,
    tables: |l| Tables::new(l, &HI, &LO),
    asinh_lanes,
    asinh
);
lanes_loop!(
    /// `out[i] = atanh(a[i])`.
    atanh_loop,
    f32,
    tables: |l| Tables::new(l, &HI, &LO),
    atanh_lanes,
    atanh
);

#[cfg(test)]
mod tests {
    use super::super::lanes::map_blocks;
    use super::super::log_table::INVC;
    use super::*;

    /// The tables are what the module doc says: `T_i = -ln(c_i)` in `f64`, its first part
    /// the nearest multiple of `2^-16`, the rest rounded (its last bit may differ with
    /// another libm); `ln 2`'s first part likewise.
    #[test]
    fn tables_are_what_the_doc_says() {
        for i in 0..16 {
            let t = -(INVC[i] as f64).ln();
            assert_eq!(HI[i] as f64, (t * 65536.0).round() / 65536.0, "hi {i}");
            let lo = (t - HI[i] as f64) as f32;
            assert!((LO[i] - lo).abs() <= lo.abs() * 2e-7, "lo {i}");
        }
        let ln2 = std::f64::consts::LN_2;
        assert_eq!(LN2_HI as f64, (ln2 * 65536.0).round() / 65536.0);
    }

    /// Inputs for the bit-for-bit checks: positive numbers of every binade, a block with
    /// special values, values near 0, across `(-1, 1)`, and past `±1`.
    fn inputs() -> Vec<f32> {
        let mut a: Vec<f32> = (0..40_000u32)
            .map(|i| f32::from_bits(0x0080_0000 + i.wrapping_mul(53_687)))
            .collect();
        let specials = [
            0.0,
            -0.0,
            -1.0,
            1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e-40,
            0.98,
            -0.999_999_94,
            3e7,
            -3e7,
            8192.0,
            8192.001,
            -2.0,
            1.000_000_1,
            -1.000_000_1,
            5e-8,
        ];
        a[4000..4000 + specials.len()].copy_from_slice(&specials);
        a.extend((0..4000).map(|i| -1.0 + i as f32 * 5e-4)); // across 0 and up to 1
        a.extend((0..1000).map(|i| i as f32 * 1e-9));
        a
    }

    /// Every copy of each loop gives the scalar function's bits: the dispatched loop, and
    /// the AVX2 copy also on a CPU with AVX-512.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        let a = inputs();
        let bits = |v: &[f32]| v.iter().map(|o| o.to_bits()).collect::<Vec<u32>>();
        macro_rules! check {
            ($run:ident, $lanes:ident, $f:ident) => {{
                let want: Vec<u32> = a.iter().map(|&x| $f(x).to_bits()).collect();
                let mut out = vec![0.0; a.len()];
                $run(&mut out, &a);
                assert_eq!(bits(&out), want, stringify!($run));
                #[cfg(target_arch = "x86_64")]
                if let Some(l) = super::super::lanes::Avx2::detect() {
                    let t = Tables::new(l, &HI, &LO);
                    out.fill(0.0);
                    map_blocks(l, &mut out, &a, |l, x| $lanes(l, &t, x), $f);
                    assert_eq!(bits(&out), want, stringify!($lanes));
                }
            }};
        }
        check!(log_loop, log_lanes, log);
        check!(log1p_loop, log1p_lanes, log1p);
        check!(atanh_loop, atanh_lanes, atanh);
        check!(asinh_loop, asinh_lanes, asinh);
        for &x in a.iter().filter(|x| x.is_normal() && **x > 0.0) {
            assert_eq!(log_normal(x).to_bits(), log(x).to_bits());
        }
    }

    /// Hand-worked values: `ln(1) = 0`, `ln(e)` rounded, `log1p` keeping tiny arguments and the
    /// sign of zero, `atanh`'s ends.
    #[test]
    fn hand_worked_values() {
        assert_eq!(log(1.0).to_bits(), 0);
        // The `f32` nearest e is below it: its logarithm is 1 - 3.04e-8, nearer 1 - 2^-24.
        assert_eq!(log(std::f32::consts::E), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(log(2.0), std::f32::consts::LN_2);
        assert_eq!(log1p(1e-30), 1e-30);
        assert_eq!(log1p(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(log1p(-1.0), f32::NEG_INFINITY);
        assert!(log1p(-1.5).is_nan());
        assert_eq!(atanh(1.0), f32::INFINITY);
        assert_eq!(atanh(-1.0), f32::NEG_INFINITY);
        assert!(atanh(3e7).is_nan());
        assert_eq!(atanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(asinh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(asinh(f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert_eq!(asinh(1e30), (2e30f64).ln() as f32);
    }
}
