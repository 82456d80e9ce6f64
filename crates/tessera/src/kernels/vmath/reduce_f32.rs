//! `f32` arguments reduced by π/2 in `f32` arithmetic, for `sin`, `cos` and `tan` (sixteen
//! lanes a vector in the AVX-512 loops; the reduction in `f64` it replaced took twice the
//! time): [`reduce_pio2_f32_split`] for every `|x| <=` [`TRIG_LIMIT`], and
//! [`reduce_pio2_f32_small`], half the operations, for `|x| <=` [`SMALL_TRIG_LIMIT`].

#[cfg(doc)]
use super::TRIG_LIMIT;

/// π/2 as four `f32`s, about 95 bits: the `f32` nearest π/2, then each time the `f32` nearest
/// what is left (bit patterns; `tests::f32_pieces_of_pi_2` checks them against the `f64`
/// pieces in `vmath`).
const PIO2_F32: [f32; 4] = [
    f32::from_bits(0x3fc9_0fdb),
    f32::from_bits(0xb33b_bd2e),
    f32::from_bits(0xa6f7_2ced),
    f32::from_bits(0x194c_5170),
];

/// `x s` rounded to the nearest integer, as a float and as an integer, with one rounding (a
/// fused multiply-add with `1.5 2^23`) where rounding `x * s` would take two (`|x s| < 2^22`;
/// other inputs give unspecified values, never UB).
#[inline(always)]
fn round_scaled_f32(x: f32, s: f32) -> (f32, i32) {
    const MAGIC: f32 = 12_582_912.0;
    let y = x.mul_add(s, MAGIC);
    (y - MAGIC, y.to_bits().wrapping_sub(MAGIC.to_bits()) as i32)
}

/// `(n, hi, lo)` with `x = n π/2 + hi + lo` for an `f32` `|x| <= TRIG_LIMIT`, in `f32`
/// arithmetic (sixteen lanes a vector in the AVX-512 loops; the reduction in `f64` it
/// replaced took twice the time of this one, half of `tan`'s loop):
/// - `n` is `x 2/π` rounded to an integer in one fused multiply-add (`round_scaled_f32`; the
///   constant `2/π` is off by at most `2^-25`, so `|x 2/π - n| <= 1/2 + 2^-6` and
///   `|hi + lo| < 0.81`, a little over π/4: the polynomials that use it are fitted on that);
/// - `r1 = x - n P1` is exact (one fused multiply-add): `x` and `n P1` are multiples of
///   `2^-23` from `|x| >= 1` on (below, `n` is 0 or `x` and `P1` are in one binade), and
///   `|r1| < 1`;
/// - `n P2` is `p + pe` exactly (`pe` from a fused multiply-add), and `r1 - p` is `hi + e`
///   exactly (Knuth's two-sum, six additions);
/// - `lo = e - (pe + n P3 + n P4)` rounds only in terms already below `2^-24 |hi|`, except at
///   the `f32`s nearest a multiple of π/2, where `hi` is as small as `2^-28` and exact.
///
/// Measured over every `f32` up to `TRIG_LIMIT`: `hi + lo` within `2^-33.9` of `x - n π/2`
/// relative (tests sample it).
#[inline(always)]
pub(super) fn reduce_pio2_f32_split(x: f32) -> (i32, f32, f32) {
    let [p1, p2, p3, p4] = PIO2_F32;
    let (nf, n) = round_scaled_f32(x, std::f64::consts::FRAC_2_PI as f32);
    let r1 = (-nf).mul_add(p1, x);
    let p = nf * p2;
    let pe = nf.mul_add(p2, -p);
    let hi = r1 - p;
    let v = hi - r1;
    let e = (r1 - (hi - v)) + (-p - v);
    (n, hi, e - nf.mul_add(p3, nf.mul_add(p4, pe)))
}

/// As `reduce_pio2_f64` (in `vmath`) for an `f32` argument ([`reduce_pio2_f32_split`],
/// `r = hi + lo` rounded once).
#[inline(always)]
pub(super) fn reduce_pio2_f32(x: f32) -> (i32, f32) {
    let (n, hi, lo) = reduce_pio2_f32_split(x);
    (n, hi + lo)
}

/// The largest `|x|` that [`reduce_pio2_f32_small`] takes: `|n| <= 2608`.
pub const SMALL_TRIG_LIMIT: f32 = 4096.0;

/// π/2 in three `f32`s for [`reduce_pio2_f32_small`]: the `f32` below π/2 (so that the
/// second piece is positive), eleven significant bits of the rest (a multiple of `2^-34`),
/// and the `f32` nearest what is left; π/2 is their sum within `2^-62`. `tests` check them
/// against the `f64` pieces.
const PIO2_SMALL: [f32; 3] = [
    f32::from_bits(0x3fc9_0fda),
    f32::from_bits(0x33a2_2000),
    f32::from_bits(0x2c34_611a),
];

/// `(odd, hi, neg_lo)` with `x = n π/2 + hi - neg_lo` and `odd` whether `n` is odd, for an
/// `f32` `|x| <=` [`SMALL_TRIG_LIMIT`] (other arguments give unspecified values, never UB):
/// seven operations where [`reduce_pio2_f32_split`] takes fifteen, because a small `n` lets
/// the second piece of π/2 have few bits.
/// - `n` as in [`reduce_pio2_f32_split`]; its parity is the low bit of the rounding sum
///   (`1.5 2^23 + n`, whose bits are even plus `n`).
/// - `r1 = x - n P1` is exact, as there (`P1` here is the `f32` below π/2).
/// - `hi = r1 - n P2` rounds once (a fused multiply-add), and `hi - r1` is exact: with
///   `|n| < 2^12`, `n P2` is a multiple of `2^-34` below `2^-11`; where `|hi| >= 2^-11`,
///   `hi` and `r1` are multiples of `2^-34` too and `|hi - r1| < 2^-10`, and below that
///   `hi` is exact.
/// - So `n P2 + (hi - r1)` is `hi`'s rounding error exactly, and adding `n P3` rounds once
///   more, in a term below `2^-27`.
///
/// The low part comes negated so that `-0` survives: at `x = -0`, `hi = -0` (the product
/// `0 P2` is `+0`, and `-0 - +0 = -0`) and `neg_lo = +0`, so `hi - neg_lo` and any
/// `y - neg_lo` with `y = -0` stay `-0`, where `hi + lo` would be `+0`.
///
/// Measured on the `f32`s nearest the multiples of π/2 up to the limit (where `r` is
/// smallest) and every 7th `f32`: `hi - neg_lo` within `3.8e-9` (just above `2^-28`) of
/// `x - n π/2` relative, at `x = 2238.3848` (`|r| ≈ 1e-7`, `n = 1425`: the rounding of `n P3` and the
/// dropped rest of π/2 together). That is a sixteenth of the result's ulp; the split
/// reduction's `2^-33.9` takes eight more operations.
#[inline(always)]
pub(super) fn reduce_pio2_f32_small(x: f32) -> (bool, f32, f32) {
    const MAGIC: f32 = 12_582_912.0;
    let [p1, p2, p3] = PIO2_SMALL;
    let y = x.mul_add(std::f64::consts::FRAC_2_PI as f32, MAGIC);
    let nf = y - MAGIC;
    let r1 = (-nf).mul_add(p1, x);
    let hi = (-nf).mul_add(p2, r1);
    (
        y.to_bits() & 1 != 0,
        hi,
        nf.mul_add(p3, nf.mul_add(p2, hi - r1)),
    )
}

#[cfg(test)]
mod tests {
    use super::super::{PIO2_1, PIO2_2, PIO2_3, PIO2_4, TRIG_LIMIT};
    use super::*;

    /// `x - n π/2` in `f64` with the four `f64` pieces (products by `n < 2^20` exact, each
    /// difference rounded relative to what is left): far more precise than the `f32` method.
    fn reference(x: f32, n: i32) -> f64 {
        let (x, n) = (x as f64, n as f64);
        (((x - n * PIO2_1) - n * PIO2_2) - n * PIO2_3) - n * PIO2_4
    }

    #[test]
    fn f32_pieces_of_pi_2() {
        // Each piece is the `f32` nearest what the ones before it leave of π/2 (the `f64`
        // pieces hold 150 bits; the differences below are exact in `f64` up to the third).
        let [p1, p2, p3, p4] = PIO2_F32.map(f64::from);
        assert_eq!(p1 as f32, (PIO2_1 + PIO2_2) as f32);
        let rest2 = (PIO2_1 - p1) + PIO2_2 + PIO2_3;
        assert_eq!(p2 as f32, rest2 as f32);
        let rest3 = ((PIO2_1 - p1) - p2) + PIO2_2 + PIO2_3 + PIO2_4;
        assert_eq!(p3 as f32, rest3 as f32);
        let rest4 = ((((PIO2_1 - p1) - p2) + PIO2_2) - p3) + PIO2_3 + PIO2_4;
        assert_eq!(p4 as f32, rest4 as f32);
    }

    /// Every `step`-th `f32` up to `limit`, the `f32`s on both sides of every multiple of π/2
    /// there, and both signs.
    fn samples(limit: f64, step: usize) -> impl Iterator<Item = f32> {
        let top = (limit as f32).to_bits();
        let strided = (0..=top).step_by(step).map(f32::from_bits);
        let near = (1..=(limit / std::f64::consts::FRAC_PI_2) as i64).flat_map(|k| {
            let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            [c.next_down(), c, c.next_up()]
        });
        let limit = limit as f32;
        strided
            .chain(near)
            .flat_map(|x| [x, -x])
            .filter(move |x| x.abs() <= limit)
    }

    /// The largest relative error of `r` against [`reference`] (`x` where it is 0 must give
    /// 0), asserting `|r| < 0.81` on the way.
    fn worst_relative(x: f32, n: i32, r: f64, worst: &mut f64) {
        let exact = reference(x, n);
        assert!(exact.abs() < 0.81, "x = {x:e}: |r| = {exact}");
        if exact != 0.0 {
            *worst = worst.max((r - exact).abs() / exact.abs());
        } else {
            assert_eq!(r, 0.0, "x = {x:e}");
        }
    }

    /// The `f32` reduction against [`reference`] on every 61st `f32` up to `TRIG_LIMIT` and
    /// the `f32`s nearest the multiples of π/2.
    #[test]
    fn f32_reduction_keeps_2_to_the_minus_33() {
        let mut worst = 0.0f64;
        for x in samples(TRIG_LIMIT, 61) {
            let (n, hi, lo) = reduce_pio2_f32_split(x);
            worst_relative(x, n, hi as f64 + lo as f64, &mut worst);
        }
        assert!(worst < 2f64.powi(-33), "worst relative error {worst:e}");
    }

    #[test]
    fn small_pieces_of_pi_2() {
        // The first piece is the `f32` below π/2, the second is what is left rounded to a
        // multiple of `2^-34`, the third the `f32` nearest the rest (the `f64` pieces hold
        // 150 bits; each difference below is exact in `f64` up to the third).
        let [p1, p2, p3] = PIO2_SMALL.map(f64::from);
        assert_eq!(p1 as f32, PIO2_F32[0].next_down());
        assert!(p1 < PIO2_1 + PIO2_2);
        let rest2 = (PIO2_1 - p1) + PIO2_2 + PIO2_3;
        let grid = 2f64.powi(-34);
        assert_eq!(p2, (rest2 / grid).round() * grid);
        assert!(p2 > 0.0);
        let rest3 = ((PIO2_1 - p1) - p2) + PIO2_2 + PIO2_3 + PIO2_4;
        assert_eq!(p3 as f32, rest3 as f32);
        let rest4 = ((((PIO2_1 - p1) - p2) + PIO2_2) - p3) + PIO2_3 + PIO2_4;
        assert!(rest4.abs() < 2f64.powi(-62));
    }

    /// The small reduction against [`reference`] on every 7th `f32` up to its limit and the
    /// `f32`s nearest the multiples of π/2; its parity against the full reduction's `n`, and
    /// `-0` kept.
    #[test]
    fn small_reduction_keeps_3_8e_minus_9() {
        let (mut worst, mut at) = (0.0f64, 0.0f32);
        for x in samples(SMALL_TRIG_LIMIT as f64, 7) {
            let (odd, hi, neg_lo) = reduce_pio2_f32_small(x);
            let n = reduce_pio2_f32_split(x).0;
            assert_eq!(odd, n & 1 != 0, "x = {x:e}");
            let before = worst;
            worst_relative(x, n, hi as f64 - neg_lo as f64, &mut worst);
            if worst > before {
                at = x;
            }
        }
        assert!(worst < 3.8e-9, "worst relative error {worst:e} at {at:e}");
        let (odd, hi, neg_lo) = reduce_pio2_f32_small(-0.0);
        assert!(!odd);
        assert_eq!((hi - neg_lo).to_bits(), (-0.0f32).to_bits());
    }
}
