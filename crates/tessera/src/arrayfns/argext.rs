//! `argmax`/`argmin` of one contiguous lane of `f32`, `f64` or `i64` in AVX-512 registers,
//! in one pass: each register lane keeps its best value and the block (of all registers'
//! lanes, 32 elements) where it first saw it (a compare into a mask, two masked moves; one
//! block counter serves every register), with two (f32) or four (f64, i64) registers in
//! flight; at the end the block numbers become indices, the registers are merged lane by
//! lane, the best value is reduced
//! across lanes, and the smallest index among the lanes that hold it is the first
//! occurrence. A NaN anywhere (tracked by a mask, never in the best values)
//! makes the answer the first NaN's index, found by a scalar scan (NumPy's rule, as the
//! portable scan in `search.rs`, which every other dtype, CPU and short lane takes).
//!
//! Lanes of at most [`SHORT_MAX_BYTES`] (the rows of a 256 x 256 matrix) take two passes
//! instead: the extreme (a `max` per register), then the first element equal to it, in
//! blocks of registers with one branch each. The one pass's index bookkeeping and final
//! merges cost as much as such a lane's scan (256 `int64`: 38 -> 31 ns a lane).
//!
//! The block scan it replaces folded each block to its extreme and then searched the block
//! again for the position: two passes and a horizontal fold per block (docs/performance.md).

#[cfg(target_arch = "x86_64")]
use std::any::TypeId;

use crate::dtype::Element;

/// Lanes shorter than this keep the portable scan (its setup is smaller).
#[cfg(any(target_arch = "x86_64", test))]
const MIN_LEN: usize = 32;

/// Lanes of up to this many bytes take two passes (the extreme, then its first position):
/// less work at each end of a lane than the one pass, whose setup and merges cost as much as
/// a 256-element lane's scan (docs/performance.md).
#[cfg(target_arch = "x86_64")]
const SHORT_MAX_BYTES: usize = 4096;

/// The index of the first maximum (`MAX`) or minimum of the non-empty lane `v`, the first
/// NaN winning, when `T` is `f32`, `f64` or `i64`, the CPU has AVX-512 and the lane is long
/// enough; `None` otherwise (the caller scans).
#[inline]
pub(crate) fn lane_avx512<T: Element, const MAX: bool>(v: &[T]) -> Option<i64> {
    #[cfg(target_arch = "x86_64")]
    if v.len() >= MIN_LEN && crate::kernels::simd::has_avx512() {
        let (p, n) = (v.as_ptr(), v.len());
        // SAFETY (each arm): `T` is the type named (same `TypeId`), so the slice is a slice
        // of it; the CPU has AVX-512 F/VL/DQ/BW (checked above), all these functions need.
        let t = TypeId::of::<T>();
        if t == TypeId::of::<f32>() && i32::try_from(n).is_ok() {
            return Some(unsafe { wide::f32s::<MAX>(std::slice::from_raw_parts(p.cast(), n)) });
        }
        if t == TypeId::of::<f64>() {
            return Some(unsafe { wide::f64s::<MAX>(std::slice::from_raw_parts(p.cast(), n)) });
        }
        if t == TypeId::of::<i64>() {
            return Some(unsafe { wide::i64s::<MAX>(std::slice::from_raw_parts(p.cast(), n)) });
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
    None
}

#[cfg(target_arch = "x86_64")]
mod wide {
    use std::arch::x86_64::*;

    /// The index of the first NaN of `v` (which holds one: the loop's NaN mask saw it).
    fn first_nan<T: PartialEq + Copy>(v: &[T]) -> i64 {
        #[allow(clippy::eq_op)]
        let at = v.iter().position(|&x| x != x);
        at.expect("the NaN mask saw a NaN") as i64
    }

    /// One kernel per type: `L` lanes a register of values `$t` with indices `$it` (the
    /// index vector ops after `;`), `ACC` registers in flight (a compare and a masked move a
    /// step are a chain of about 4 cycles per register).
    macro_rules! lane_kernel {
        ($name:ident, $t:ty, $reg:ty, $mask:ty, $l:expr, $acc:expr, $load:ident, $mload:ident,
         $set1:ident, $mov:ident, $gt:expr, $lt:expr, $unord:expr, $eq:expr, $vmax:ident,
         $vmin:ident, $rmax:ident, $rmin:ident, $lo:expr, $hi:expr;
         $it:ty, $iota:expr, $iset1:ident, $iadd:ident, $isll:ident, $imov:ident, $ilt:ident,
         $irmin:ident) => {
            /// [`super::lane_avx512`] for this type (for 32-bit indices, `v.len()` fits).
            ///
            /// # Safety
            /// The CPU must have AVX-512 F, VL, DQ and BW.
            #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
            pub(super) fn $name<const MAX: bool>(v: &[$t]) -> i64 {
                const L: usize = $l;
                const ACC: usize = $acc;
                /// A lane of at most [`super::SHORT_MAX_BYTES`] (in L1 after the first pass): its
                /// extreme (a `max` or `min` per register, `ACC` registers in flight, folded
                /// at the end), then the first element equal to it, a scan that stops there.
                /// A NaN anywhere makes the answer the first NaN's index.
                #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
                fn short<const MAX: bool>(v: &[$t]) -> i64 {
                    let id: $t = if MAX { $lo } else { $hi };
                    let ext = |a: $reg, x: $reg| if MAX { $vmax(a, x) } else { $vmin(a, x) };
                    let mut acc = [$set1(id); ACC];
                    let mut nan: $mask = 0;
                    let mut blocks = v.chunks_exact(ACC * L);
                    for block in &mut blocks {
                        for (k, a) in acc.iter_mut().enumerate() {
                            // SAFETY: `block` holds `ACC * L` elements.
                            let x = unsafe { $load(block.as_ptr().add(k * L).cast()) };
                            nan |= $unord(x);
                            *a = ext(*a, x);
                        }
                    }
                    // The rest in masked loads; lanes past the end read the identity.
                    for (part, a) in blocks.remainder().chunks(L).zip(&mut acc) {
                        let live = ((1u32 << part.len()) - 1) as $mask;
                        // SAFETY: the mask covers exactly `part.len()` elements, all in bounds.
                        let x = unsafe { $mload($set1(id), live, part.as_ptr().cast()) };
                        nan |= $unord(x);
                        *a = ext(*a, x);
                    }
                    if nan != 0 {
                        return first_nan(v);
                    }
                    let mut w = 1;
                    while w < ACC {
                        for k in (0..ACC).step_by(2 * w) {
                            acc[k] = ext(acc[k], acc[k + w]);
                        }
                        w *= 2;
                    }
                    let e = if MAX { $rmax(acc[0]) } else { $rmin(acc[0]) };
                    let m = $set1(e);
                    // The extreme is one of the lane's elements (the identity filled only lanes
                    // past the end): the first equal one is the answer. Blocks of `ACC`
                    // registers, their masks in one word (one branch a block), then the tail.
                    let mut blocks = v.chunks_exact(ACC * L);
                    for (b, block) in (&mut blocks).enumerate() {
                        let mut hits = 0u64;
                        for k in 0..ACC {
                            // SAFETY: `block` holds `ACC * L` elements.
                            let x = unsafe { $load(block.as_ptr().add(k * L).cast()) };
                            hits |= u64::from($eq(x, m)) << (k * L);
                        }
                        if hits != 0 {
                            return (b * ACC * L + hits.trailing_zeros() as usize) as i64;
                        }
                    }
                    let done = v.len() - blocks.remainder().len();
                    let at = blocks.remainder().iter().position(|&x| x == e);
                    (done + at.expect("the extreme is an element of the lane")) as i64
                }
                if std::mem::size_of_val(v) <= super::SHORT_MAX_BYTES {
                    return short::<MAX>(v);
                }
                let id: $t = if MAX { $lo } else { $hi };
                let beyond = |x: $reg, b: $reg| if MAX { $gt(x, b) } else { $lt(x, b) };
                // A register lane records the block (of `ACC * L` elements) where it took
                // its best, one counter for all registers; the index is made at the end.
                const BLOCK_BITS: u32 = (ACC * L).trailing_zeros();
                const { assert!(ACC * L == 1 << BLOCK_BITS && ACC.is_power_of_two()) };
                let mut best = [$set1(id); ACC];
                let mut at = [_mm512_setzero_si512(); ACC];
                let mut blk = _mm512_setzero_si512();
                let one = $iset1(1);
                let mut nan: $mask = 0;
                let mut blocks = v.chunks_exact(ACC * L);
                for block in &mut blocks {
                    for k in 0..ACC {
                        // SAFETY: `block` holds `ACC * L` elements.
                        let x = unsafe { $load(block.as_ptr().add(k * L).cast()) };
                        let m = beyond(x, best[k]);
                        nan |= $unord(x);
                        best[k] = $mov(best[k], m, x);
                        at[k] = $imov(at[k], m, blk);
                    }
                    blk = $iadd(blk, one);
                }
                // The rest (under `ACC * L`), in masked loads; lanes past the end read the
                // identity, which never replaces a best.
                for (k, part) in blocks.remainder().chunks(L).enumerate() {
                    let live = ((1u32 << part.len()) - 1) as $mask;
                    // SAFETY: the mask covers exactly `part.len()` elements, all in bounds.
                    let x = unsafe { $mload($set1(id), live, part.as_ptr().cast()) };
                    let m = beyond(x, best[k]);
                    nan |= $unord(x);
                    best[k] = $mov(best[k], m, x);
                    at[k] = $imov(at[k], m, blk);
                }
                if nan != 0 {
                    return first_nan(v);
                }
                // Block numbers to indices: the block times `ACC * L`, plus register `k`'s
                // offset in the block, plus the lane.
                for (k, at) in at.iter_mut().enumerate() {
                    let offset = $iadd($iota, $iset1((k * L) as $it));
                    *at = $iadd($isll::<BLOCK_BITS>(*at), offset);
                }
                // The registers into register 0, lane by lane (beyond, or equal at a smaller
                // index), in a tree (0 <- 1 and 2 <- 3, then 0 <- 2: two steps of latency
                // where a chain took three), then one horizontal step.
                let mut w = 1;
                while w < ACC {
                    for k in (0..ACC).step_by(2 * w) {
                        let (b, a) = (best[k + w], at[k + w]);
                        let take = beyond(b, best[k]) | ($eq(b, best[k]) & $ilt(a, at[k]));
                        best[k] = $mov(best[k], take, b);
                        at[k] = $imov(at[k], take, a);
                    }
                    w *= 2;
                }
                let m = if MAX { $rmax(best[0]) } else { $rmin(best[0]) };
                i64::from($irmin($eq(best[0], $set1(m)), at[0]))
            }
        };
    }

    lane_kernel!(f32s, f32, __m512, __mmask16, 16, 2, _mm512_loadu_ps, _mm512_mask_loadu_ps,
        _mm512_set1_ps, _mm512_mask_mov_ps,
        |x, b| _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, b),
        |x, b| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x, b),
        |x| _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x),
        |x, b| _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, b),
        _mm512_max_ps, _mm512_min_ps, _mm512_reduce_max_ps, _mm512_reduce_min_ps,
        f32::NEG_INFINITY, f32::INFINITY;
        i32, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32, _mm512_add_epi32, _mm512_slli_epi32, _mm512_mask_mov_epi32,
        _mm512_cmplt_epi32_mask, _mm512_mask_reduce_min_epi32);
    lane_kernel!(f64s, f64, __m512d, __mmask8, 8, 4, _mm512_loadu_pd, _mm512_mask_loadu_pd,
        _mm512_set1_pd, _mm512_mask_mov_pd,
        |x, b| _mm512_cmp_pd_mask::<_CMP_GT_OQ>(x, b),
        |x, b| _mm512_cmp_pd_mask::<_CMP_LT_OQ>(x, b),
        |x| _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(x, x),
        |x, b| _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(x, b),
        _mm512_max_pd, _mm512_min_pd, _mm512_reduce_max_pd, _mm512_reduce_min_pd,
        f64::NEG_INFINITY, f64::INFINITY;
        i64, _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64, _mm512_add_epi64,
        _mm512_slli_epi64, _mm512_mask_mov_epi64, _mm512_cmplt_epi64_mask,
        _mm512_mask_reduce_min_epi64);
    lane_kernel!(i64s, i64, __m512i, __mmask8, 8, 4, _mm512_loadu_si512,
        _mm512_mask_loadu_epi64, _mm512_set1_epi64, _mm512_mask_mov_epi64,
        _mm512_cmpgt_epi64_mask, _mm512_cmplt_epi64_mask, |_x| 0u8, _mm512_cmpeq_epi64_mask,
        _mm512_max_epi64, _mm512_min_epi64, _mm512_reduce_max_epi64, _mm512_reduce_min_epi64,
        i64::MIN, i64::MAX;
        i64, _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64, _mm512_add_epi64,
        _mm512_slli_epi64, _mm512_mask_mov_epi64, _mm512_cmplt_epi64_mask,
        _mm512_mask_reduce_min_epi64);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive rule: the first NaN, else the first extreme.
    fn reference<T: PartialOrd + Copy, const MAX: bool>(v: &[T]) -> i64 {
        #[allow(clippy::eq_op)]
        if let Some(i) = v.iter().position(|&x| x != x) {
            return i as i64;
        }
        let mut at = 0;
        for (i, &x) in v.iter().enumerate() {
            if (MAX && x > v[at]) || (!MAX && x < v[at]) {
                at = i;
            }
        }
        at as i64
    }

    #[test]
    fn wide_lanes_find_the_first_extreme_or_the_first_nan() {
        let pool = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            2.25,
        ];
        let mut seed = 99u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for n in (1usize..100).chain([255, 256, 257, 1000, 4099]) {
            for case in 0..6 {
                // Few distinct values (many ties), all equal, or a NaN somewhere.
                let mut v: Vec<f64> = (0..n).map(|_| pool[next() % pool.len()]).collect();
                if case == 1 {
                    v.iter_mut().for_each(|x| *x = f64::NEG_INFINITY);
                }
                if case == 2 {
                    v.iter_mut().for_each(|x| *x = f64::INFINITY);
                }
                if case >= 3 {
                    v[next() % n] = f64::NAN;
                }
                if case == 5 {
                    v[next() % n] = -f64::NAN;
                }
                let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                let i: Vec<i64> = v
                    .iter()
                    .map(|&x| {
                        if x.is_finite() {
                            (x * 4.0) as i64
                        } else {
                            i64::MIN + n as i64
                        }
                    })
                    .collect();
                // `None` only without AVX-512 or for short lanes; the portable scan answers
                // then (its own tests cover it).
                let wide = crate::kernels::simd::has_avx512() && n >= MIN_LEN;
                let got = |r: Option<i64>, want: i64| {
                    assert_eq!(r.is_some(), wide, "n {n}");
                    if let Some(r) = r {
                        assert_eq!(r, want, "n {n}, case {case}");
                    }
                };
                got(lane_avx512::<f64, true>(&v), reference::<f64, true>(&v));
                got(lane_avx512::<f64, false>(&v), reference::<f64, false>(&v));
                got(lane_avx512::<f32, true>(&f), reference::<f32, true>(&f));
                got(lane_avx512::<f32, false>(&f), reference::<f32, false>(&f));
                got(lane_avx512::<i64, true>(&i), reference::<i64, true>(&i));
                got(lane_avx512::<i64, false>(&i), reference::<i64, false>(&i));
            }
        }
        // A unique extreme at every position p of lanes of several lengths (every block and
        // tail position decides the answer), a later tie (which must not win), finite values.
        // (Up to `SHORT_MAX_BYTES` the two-pass kernel answers: 600 is past it for the
        // 8-byte types only, 1100 for all three.)
        for n in [32usize, 33, 47, 64, 100, 257, 600, 1100] {
            for p in 0..n {
                for tie in [false, true] {
                    let mut v: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
                    v[p] = 100.0;
                    if tie && p + 1 < n {
                        v[n - 1] = 100.0;
                    }
                    let w: Vec<f64> = v.iter().map(|x| -x).collect();
                    let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                    let i: Vec<i64> = v.iter().map(|&x| x as i64).collect();
                    // `None` where the CPU has no AVX-512 (the portable scan answers).
                    let want = crate::kernels::simd::has_avx512().then_some(p as i64);
                    assert_eq!(lane_avx512::<f64, true>(&v), want, "f64 max n {n} p {p}");
                    assert_eq!(lane_avx512::<f64, false>(&w), want, "f64 min n {n} p {p}");
                    assert_eq!(lane_avx512::<f32, true>(&f), want, "f32 n {n} p {p}");
                    assert_eq!(lane_avx512::<i64, true>(&i), want, "i64 n {n} p {p}");
                }
            }
        }
        // Other dtypes are not taken.
        assert_eq!(lane_avx512::<i32, true>(&[1; 64]), None);
    }
}
