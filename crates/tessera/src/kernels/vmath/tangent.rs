//! The `f32` and `f64` tangents (docs/design.md P2), branch-free as the rest of `vmath`:
//! - `f64`: `sin r / cos r`, or `-cos r / sin r` in odd quadrants, on `sin`'s reduction.
//! - `f32`: `t = r + r³ P(r²)` with a minimax `P` in `f32` arithmetic, and in odd quadrants
//!   `-1/t` from one division corrected for its rounding and for `t`'s. The reduction to
//!   `hi + lo` is in `f32` arithmetic too, in one of two forms (`reduce_f32.rs`): the small
//!   form, about half the operations, for `|x| <=` [`SMALL_TRIG_LIMIT`], and the split form
//!   above. [`tan_f32`] chooses per element, so its value is one function of `x`;
//!   [`tan_f32_blocks`] computes the same bits a block at a time, and a block that the small
//!   form covers (the usual case) costs two thirds of one that needs both.

use super::f64::sin_cos;
use super::reduce_f32::{reduce_pio2_f32_small, reduce_pio2_f32_split, SMALL_TRIG_LIMIT};
use super::{reduce_pio2_f64, TRIG_LIMIT};

/// Tangent, for `|x| <= TRIG_LIMIT` (other arguments give unspecified values):
/// `sin r / cos r`, or `-cos r / sin r` in odd quadrants.
#[inline(always)]
pub fn tan_f64(x: f64) -> f64 {
    let (n, r) = reduce_pio2_f64(x);
    let y = quotient(n, sin_cos(r));
    if x == 0.0 {
        x
    } else {
        y
    }
}

/// `tan(n π/2 + r)` from `(sin r, cos r)`: `sin r / cos r`, or `-cos r / sin r` in odd
/// quadrants.
#[inline(always)]
fn quotient(n: i64, (s, c): (f64, f64)) -> f64 {
    if n & 1 == 0 {
        s / c
    } else {
        -c / s
    }
}

/// The minimax polynomial `P` of `tan r ≈ r + r³ P(r²)` on `|r| <= 0.8105` (the `f32`
/// reductions' range, a little over π/4), fitted to the relative error of `tan`
/// (`scripts/fit_poly.py tan_f32`): its own error is 0.07 of `f32`'s half ulp, so the `f32`
/// evaluation's roundings are what is left. (Six terms on π/4 until 2026-12-03: 0.43.)
/// Evaluated by plain Horner: the loop is bound by the count of operations, not by their
/// latency, and the second-order form costs one more.
const TAN_F32: [f32; 7] = [
    0.333_333_6,
    0.133_322_73,
    0.054_104_17,
    0.021_053_601,
    0.011_427_376,
    -0.000_657_962_5,
    0.004_743_294,
];

/// The `f32` tangent, for `|x| <= TRIG_LIMIT` (other arguments give unspecified values): the
/// small reduction up to `SMALL_TRIG_LIMIT` (4096), the split one above. Within 1.54 ulp over every
/// `f32` up to `TRIG_LIMIT` (measured exhaustively against `f64`; 1.52 with the split
/// reduction everywhere until 2026-12-05, 1.83 with the `f64` reduction and six-term
/// polynomial until 2026-12-03). Before that it was computed all in `f64` from the sine and
/// cosine series (within 1 ulp, at 3.5 times NumPy's time for 64 Ki elements).
#[inline(always)]
pub fn tan_f32(x: f32) -> f32 {
    if x.abs() <= SMALL_TRIG_LIMIT {
        tan_f32_small(x)
    } else {
        tan_f32_large(x)
    }
}

/// [`tan_f32`] for `|x| <= SMALL_TRIG_LIMIT`: the small reduction, whose negated low part
/// keeps `tan(-0) = -0` without a select.
#[inline(always)]
fn tan_f32_small(x: f32) -> f32 {
    let (odd, hi, neg_lo) = reduce_pio2_f32_small(x);
    let z = hi * hi;
    quadrant(odd, hi, (hi * z).mul_add(horner(z), -neg_lo))
}

/// [`tan_f32`] for `SMALL_TRIG_LIMIT < |x| <= TRIG_LIMIT` (so `x` is not a zero): the split
/// reduction.
#[inline(always)]
fn tan_f32_large(x: f32) -> f32 {
    let (n, hi, lo) = reduce_pio2_f32_split(x);
    let z = hi * hi;
    quadrant(n & 1 != 0, hi, (hi * z).mul_add(horner(z), lo))
}

/// `P(z)` by Horner's rule.
#[inline(always)]
fn horner(z: f32) -> f32 {
    let mut p = TAN_F32[TAN_F32.len() - 1];
    for &c in TAN_F32.iter().rev().skip(1) {
        p = p.mul_add(z, c);
    }
    p
}

/// `tan(n π/2 + r)` from `t = hi + small` (`tan r` with `r = hi + lo`, `small = hi³ P + lo`):
/// `t` in even quadrants; in odd ones `-1/t` as `q (1 + e)`, `q = -1/t` rounded and
/// `e = 1 + q (hi + small)`, the division's error and `t`'s rounding together, from two fused
/// multiply-adds (`1 + q hi` first: it cancels to about `small/t`, whose rounding stays below
/// `2^-26` of the result). That is three operations where the exact residual `1 + q t` and
/// `t`'s rounding error apart took five; the error stays within the same 1.54 ulp.
#[inline(always)]
fn quadrant(odd: bool, hi: f32, small: f32) -> f32 {
    let t = hi + small;
    if odd {
        let q = -1.0 / t;
        q.mul_add(q.mul_add(small, q.mul_add(hi, 1.0)), q)
    } else {
        t
    }
}

/// Inputs that [`tan_f32_blocks`] tests at a time: sixteen AVX-512 vectors, read again from
/// L1 by the computing loop (a block holding a huge argument or a NaN runs element by
/// element, so it is kept small).
const BLOCK: usize = 256;

/// [`tan_f32`] of any `f32`: above [`TRIG_LIMIT`] (and at the infinities) the C library's
/// `f64` tangent rounded, one element at a time.
#[inline(always)]
pub fn tan_f32_any(x: f32) -> f32 {
    if x.abs() > TRIG_LIMIT as f32 {
        (x as f64).tan() as f32
    } else {
        tan_f32(x)
    }
}

/// [`tan_f64`] of any `f64`: above [`TRIG_LIMIT`] (and at the infinities) the C library's.
#[inline(always)]
pub fn tan_f64_any(x: f64) -> f64 {
    if x.abs() > TRIG_LIMIT {
        x.tan()
    } else {
        tan_f64(x)
    }
}

/// `out[i] = tan_f32_any(a[i])` for `out` and `a` of one length, a block of [`BLOCK`] at a
/// time, by the largest magnitude in the block (and, past the small limit, the smallest):
/// - all at most [`SMALL_TRIG_LIMIT`]: the small form alone;
/// - one above [`TRIG_LIMIT`], an infinity or a NaN: [`tan_f32_any`], element by element (so
///   a huge argument costs its own block and not the whole tensor, as it does for `sin`
///   and `cos`);
/// - all above the small limit: the large form alone;
/// - else both and a select per lane, [`tan_f32`]'s own loop.
///
/// The magnitudes are compared as bits (non-negative floats order as their bits do, NaNs
/// above infinity), folded by an integer maximum or minimum, which vectorises. This replaces
/// the separate scan for huge arguments that `sin` and `cos` run first (a tenth of this
/// loop's time).
#[inline(always)]
pub(crate) fn tan_f32_blocks(out: &mut [f32], a: &[f32]) {
    const MAGNITUDE: u32 = u32::MAX >> 1;
    let small = SMALL_TRIG_LIMIT.to_bits();
    let huge = (TRIG_LIMIT as f32).to_bits();
    for (o, a) in out.chunks_mut(BLOCK).zip(a.chunks(BLOCK)) {
        let top = a.iter().fold(0, |m, x| m.max(x.to_bits() & MAGNITUDE));
        if top <= small {
            each(o, a, tan_f32_small);
        } else if top > huge {
            each(o, a, tan_f32_any);
        } else if a
            .iter()
            .fold(MAGNITUDE, |m, x| m.min(x.to_bits() & MAGNITUDE))
            > small
        {
            each(o, a, tan_f32_large);
        } else {
            each(o, a, tan_f32);
        }
    }
}

/// `out[i] = f(a[i])`, inlined with `f` (a function item) into the caller's loop.
#[inline(always)]
fn each(out: &mut [f32], a: &[f32], f: impl Fn(f32) -> f32) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block loop against [`tan_f32_any`] element by element, bit for bit (NaN as NaN):
    /// lengths around the block, and values at the limits, past them, near multiples of π/2
    /// on both sides of the small limit, and the special ones, mixed in varying proportions.
    #[test]
    fn blocks_give_tan_f32_any_of_each_element() {
        let limit = TRIG_LIMIT as f32;
        let mut pool = vec![
            SMALL_TRIG_LIMIT,
            SMALL_TRIG_LIMIT.next_up(),
            -SMALL_TRIG_LIMIT.next_up(),
            limit,
            limit.next_up(),
            -limit.next_up(),
            1e10,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            0.0,
            -0.0,
            1e-40,
        ];
        for k in [2606i32, 2607, 2608, 2609, 2610, -2608, 100_000] {
            let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            pool.extend([c.next_down(), c, c.next_up()]);
        }
        let mut state = 0x9e37_79b9_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        // Ordinary values: small, large (past 4096, where the small form would be wrong), or
        // either, so that blocks of each kind occur.
        let ordinary = |r: u32, kind: u32| {
            let small = (r % 20_000) as f32 * 0.3 - 3000.0;
            let large = ((r >> 1) % 360_000) as f32 * 0.1 + 4097.0;
            let large = if r & 1 == 0 { large } else { -large };
            match kind {
                0 => small,
                1 => large,
                _ if r & 2 == 0 => small,
                _ => large,
            }
        };
        for len in [1usize, 255, 256, 257, 513, 2048] {
            for (special_every, kind) in [
                (1u32, 2u32),
                (7, 2),
                (97, 0),
                (97, 1),
                (97, 2),
                (0, 0),
                (0, 1),
                (0, 2),
            ] {
                let a: Vec<f32> = (0..len)
                    .map(|_| {
                        let r = next();
                        if special_every > 0 && r % special_every == 0 {
                            pool[(r / special_every) as usize % pool.len()]
                        } else {
                            ordinary(r, kind)
                        }
                    })
                    .collect();
                let mut out = vec![0.0f32; len];
                tan_f32_blocks(&mut out, &a);
                for (&x, &y) in a.iter().zip(&out) {
                    let want = tan_f32_any(x);
                    assert!(
                        y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
                        "len {len}, every {special_every}: tan({x:e}) = {y:e}, want {want:e}"
                    );
                }
            }
        }
    }
}
