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
//! A vector reads its three tables with one `vpermps` each on AVX-512 (two and a blend on
//! AVX2) and takes 17 arithmetic instructions, with a dependent chain of about 35 cycles. A
//! vector whose inputs are not all positive, normal and finite (one unsigned comparison of
//! the bits, then a mask test) goes element by element through the scalar function, which
//! scales subnormals and sets the special values of
//! [`log_special`](super::f32::log_special) (`log_b(0) = -inf`, `log_b(inf) = inf`, NaN
//! below 0). Every copy (AVX-512, AVX2, the portable loop) does the same operations in the
//! same order, so a result never depends on the path (tested bit for bit).

use std::f64::consts::{LOG10_2, LOG10_E, LOG2_E};

use super::f32::log_special;
use crate::kernels::simd::{has_avx2, has_avx512};

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

/// `log_b(x)` for a positive finite `x` whose exponent field, after any scaling, is
/// `k_adj` below its own (`k_adj` is 0, or -25 for a subnormal scaled by `2^25`). Every
/// copy of the loop below does exactly these operations.
#[inline(always)]
fn core(b: &Base, x: f32, k_adj: i32) -> f32 {
    let ix = x.to_bits();
    let tmp = ix.wrapping_sub(OFF);
    let i = (tmp >> 19) as usize & 15;
    let k = ((tmp as i32) >> 23) + k_adj;
    let z = f32::from_bits(ix.wrapping_sub(tmp & 0xff80_0000));
    let r = z.mul_add(INVC[i], -1.0);
    let kf = k as f32;
    let a = kf.mul_add(b.two_hi, b.hi[i]);
    let r2 = r * r;
    // Estrin's scheme: two independent pairs, then one step in `r²` (a shorter chain than
    // Horner's three steps, which set the loop's speed).
    let q = r2.mul_add(r.mul_add(b.q[3], b.q[2]), r.mul_add(b.q[1], b.q[0]));
    let tail = r2.mul_add(q, r.mul_add(b.e_lo, kf.mul_add(b.two_lo, b.lo[i])));
    a + r.mul_add(b.e_hi, tail)
}

/// `log_b(x)` for any `x`: subnormals scaled by `2^25` first, special values at the end.
#[inline(always)]
fn log_any(b: &Base, x: f32) -> f32 {
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * (1u32 << 25) as f32 } else { x };
    log_special(x, core(b, xs, if sub { -25 } else { 0 }))
}

/// Base-2 logarithm.
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    log_any(&LOG2, x)
}

/// [`log2`] of a positive, normal, finite `x`, with the same bits.
#[inline(always)]
pub fn log2_normal(x: f32) -> f32 {
    core(&LOG2, x, 0)
}

/// Base-10 logarithm.
#[inline(always)]
pub fn log10(x: f32) -> f32 {
    log_any(&LOG10, x)
}

/// [`log10`] of a positive, normal, finite `x`, with the same bits.
#[inline(always)]
pub fn log10_normal(x: f32) -> f32 {
    core(&LOG10, x, 0)
}

/// `out[i] = log2(a[i])` over equal-length slices ([`log_loop`]).
pub(crate) fn log2_loop(out: &mut [f32], a: &[f32]) {
    log_loop(&LOG2, out, a)
}

/// `out[i] = log10(a[i])` over equal-length slices ([`log_loop`]).
pub(crate) fn log10_loop(out: &mut [f32], a: &[f32]) {
    log_loop(&LOG10, out, a)
}

/// `out[i] = log_b(a[i])` over equal-length slices, in the widest copy the CPU runs.
#[inline(always)]
fn log_loop(b: &Base, out: &mut [f32], a: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: `x86::widest` only needs the features `has_avx512` has just confirmed.
        return unsafe { x86::widest(b, out, a) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: `x86::wide` only needs AVX2 and FMA, which `has_avx2` has just confirmed.
        return unsafe { x86::wide(b, out, a) };
    }
    for (o, &x) in out.iter_mut().zip(a) {
        *o = log_any(b, x);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The vector copies of [`log_loop`](super::log_loop): [`core`](super::core) on 16 or 8
    //! lanes, the table read by permutes.

    use super::{log_any, Base, INVC, OFF};
    use std::arch::x86_64::*;

    /// The bits of the smallest positive normal `f32`, and the span from them to infinity's.
    const MIN_BITS: i32 = f32::MIN_POSITIVE.to_bits() as i32;
    const SPAN: i32 = (f32::INFINITY.to_bits() - f32::MIN_POSITIVE.to_bits()) as i32;

    /// `out = log_b(a)` through the vector function `lanes`, `N` lanes a call, which returns
    /// false (before writing) when its inputs are not all positive, normal and finite: those
    /// `N`, and the last `a.len() % N`, go through `log_any`.
    #[inline(always)]
    fn vectors<const N: usize>(
        b: &Base,
        out: &mut [f32],
        a: &[f32],
        mut lanes: impl FnMut(&mut [f32; N], &[f32; N]) -> bool,
    ) {
        let (oc, ot) = out.as_chunks_mut::<N>();
        let (xc, xt) = a.as_chunks::<N>();
        for (o, x) in oc.iter_mut().zip(xc) {
            if !lanes(o, x) {
                for (o, &x) in o.iter_mut().zip(x) {
                    *o = log_any(b, x);
                }
            }
        }
        for (o, &x) in ot.iter_mut().zip(xt) {
            *o = log_any(b, x);
        }
    }

    /// The AVX-512 copy: 16 lanes, each table one `vpermps`.
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
    pub(super) fn widest(b: &Base, out: &mut [f32], a: &[f32]) {
        // SAFETY (the loads): each array has 16 elements.
        let (invc, hi, lo) = unsafe {
            (
                _mm512_loadu_ps(INVC.as_ptr()),
                _mm512_loadu_ps(b.hi.as_ptr()),
                _mm512_loadu_ps(b.lo.as_ptr()),
            )
        };
        let s = _mm512_set1_ps;
        let (e_hi, e_lo, two_hi, two_lo) = (s(b.e_hi), s(b.e_lo), s(b.two_hi), s(b.two_lo));
        let q = b.q.map(|c| s(c));
        let off = _mm512_set1_epi32(OFF as i32);
        let exp_mask = _mm512_set1_epi32(0xff80_0000u32 as i32);
        let (min_bits, span) = (_mm512_set1_epi32(MIN_BITS), _mm512_set1_epi32(SPAN));
        vectors::<16>(b, out, a, |o, x| {
            // SAFETY: `x` and `o` are 16 `f32`s each.
            let ix = unsafe { _mm512_loadu_si512(x.as_ptr().cast()) };
            // Positive, normal and finite: the bits minus the smallest normal's, unsigned,
            // below the span up to infinity's (zeros, subnormals and negatives wrap above).
            let normal = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ix, min_bits), span);
            if normal != u16::MAX {
                return false;
            }
            let tmp = _mm512_sub_epi32(ix, off);
            // `vpermps` reads the low four bits of each lane: `(tmp >> 19) & 15`.
            let i = _mm512_srli_epi32::<19>(tmp);
            let k = _mm512_srai_epi32::<23>(tmp);
            let z = _mm512_castsi512_ps(_mm512_sub_epi32(ix, _mm512_and_si512(tmp, exp_mask)));
            let r = _mm512_fmadd_ps(z, _mm512_permutexvar_ps(i, invc), s(-1.0));
            let kf = _mm512_cvtepi32_ps(k);
            let a = _mm512_fmadd_ps(kf, two_hi, _mm512_permutexvar_ps(i, hi));
            let r2 = _mm512_mul_ps(r, r);
            let p = _mm512_fmadd_ps(
                r2,
                _mm512_fmadd_ps(r, q[3], q[2]),
                _mm512_fmadd_ps(r, q[1], q[0]),
            );
            let t = _mm512_fmadd_ps(kf, two_lo, _mm512_permutexvar_ps(i, lo));
            let t = _mm512_fmadd_ps(r, e_lo, t);
            let t = _mm512_fmadd_ps(r2, p, t);
            let y = _mm512_add_ps(a, _mm512_fmadd_ps(r, e_hi, t));
            unsafe { _mm512_storeu_ps(o.as_mut_ptr(), y) };
            true
        });
    }

    /// `table[i & 15]` on 8 lanes: the two halves of the table permuted by `i & 7`, the upper
    /// taken where bit 3 of `i` is set.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lookup8(halves: (__m256, __m256), i: __m256i, upper: __m256) -> __m256 {
        _mm256_blendv_ps(
            _mm256_permutevar8x32_ps(halves.0, i),
            _mm256_permutevar8x32_ps(halves.1, i),
            upper,
        )
    }

    /// The AVX2 copy: 8 lanes, each table two `vpermps` and a blend.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn wide(b: &Base, out: &mut [f32], a: &[f32]) {
        // SAFETY (the loads): each array has 16 elements, read as two halves of 8.
        let halves = |t: &[f32; 16]| unsafe {
            (
                _mm256_loadu_ps(t.as_ptr()),
                _mm256_loadu_ps(t.as_ptr().add(8)),
            )
        };
        let (invc, hi, lo) = (halves(&INVC), halves(&b.hi), halves(&b.lo));
        let s = _mm256_set1_ps;
        let (e_hi, e_lo, two_hi, two_lo) = (s(b.e_hi), s(b.e_lo), s(b.two_hi), s(b.two_lo));
        let q = b.q.map(|c| s(c));
        let off = _mm256_set1_epi32(OFF as i32);
        let exp_mask = _mm256_set1_epi32(0xff80_0000u32 as i32);
        let (min_bits, span) = (_mm256_set1_epi32(MIN_BITS), _mm256_set1_epi32(SPAN));
        vectors::<8>(b, out, a, |o, x| {
            // SAFETY: `x` and `o` are 8 `f32`s each.
            let ix = unsafe { _mm256_loadu_si256(x.as_ptr().cast()) };
            // As in `widest`, the unsigned comparison made of two signed ones (`SPAN` is
            // below `2^31`): `0 <= v < SPAN`.
            let v = _mm256_sub_epi32(ix, min_bits);
            let normal = _mm256_andnot_si256(
                _mm256_cmpgt_epi32(_mm256_setzero_si256(), v),
                _mm256_cmpgt_epi32(span, v),
            );
            if _mm256_movemask_epi8(normal) != -1 {
                return false;
            }
            let tmp = _mm256_sub_epi32(ix, off);
            let i = _mm256_srli_epi32::<19>(tmp);
            // Bit 3 of the index moved to the sign bit, which `blendv` reads.
            let upper = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i));
            let k = _mm256_srai_epi32::<23>(tmp);
            let z = _mm256_castsi256_ps(_mm256_sub_epi32(ix, _mm256_and_si256(tmp, exp_mask)));
            let r = _mm256_fmadd_ps(z, lookup8(invc, i, upper), s(-1.0));
            let kf = _mm256_cvtepi32_ps(k);
            let a = _mm256_fmadd_ps(kf, two_hi, lookup8(hi, i, upper));
            let r2 = _mm256_mul_ps(r, r);
            let p = _mm256_fmadd_ps(
                r2,
                _mm256_fmadd_ps(r, q[3], q[2]),
                _mm256_fmadd_ps(r, q[1], q[0]),
            );
            let t = _mm256_fmadd_ps(kf, two_lo, lookup8(lo, i, upper));
            let t = _mm256_fmadd_ps(r, e_lo, t);
            let t = _mm256_fmadd_ps(r2, p, t);
            let y = _mm256_add_ps(a, _mm256_fmadd_ps(r, e_hi, t));
            unsafe { _mm256_storeu_ps(o.as_mut_ptr(), y) };
            true
        });
    }
}

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
    /// loops) and on blocks with special values, subnormals and negatives.
    #[test]
    fn every_copy_matches_the_scalar_function() {
        let mut a: Vec<f32> = (0..40_000u32)
            .map(|i| f32::from_bits(0x0080_0000 + i.wrapping_mul(53_687)))
            .collect();
        let specials = [0.0, -0.0, -1.0, f32::INFINITY, f32::NAN, 1e-40, 1.0, 0.98];
        a[4000..4008].copy_from_slice(&specials);
        a.extend((0..1000).map(|i| 0.9 + i as f32 * 2e-4)); // both sides of 1
        for b in [&LOG2, &LOG10] {
            let want: Vec<u32> = a.iter().map(|&x| log_any(b, x).to_bits()).collect();
            let mut out = vec![0.0; a.len()];
            log_loop(b, &mut out, &a);
            assert!(out.iter().zip(&want).all(|(o, w)| o.to_bits() == *w));
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                out.fill(0.0);
                // SAFETY: AVX2 and FMA were just confirmed.
                unsafe { x86::wide(b, &mut out, &a) };
                assert!(out.iter().zip(&want).all(|(o, w)| o.to_bits() == *w));
            }
            // Normal inputs: the `_normal` functions give the same bits.
            for &x in a.iter().filter(|x| x.is_normal() && **x > 0.0) {
                assert_eq!(core(b, x, 0).to_bits(), log_any(b, x).to_bits());
            }
        }
    }
}
