//! A bitonic sorting network held in AVX-512 registers: the sort of short lanes (up to
//! [`NET_MAX`] keys) behind `sort`, `argsort` and the set functions, where a comparison sort
//! pays a mispredicted branch per comparison and radix passes pay their 256-bucket counts
//! (docs/performance.md, "Sorting network").
//!
//! The keys are `u64` (8 to a register) or `u32` (16 to a register), compared as integers
//! (`radix.rs`'s order-preserving keys, packed with their index where the sort must be
//! stable), or `f64` / `f32` values without NaNs, compared as floats. They are padded with the
//! largest key to `L * R` keys (`L` lanes a register, `R` a power of two), loaded into `R`
//! registers, and sorted by Batcher's bitonic network: for each block size
//! `k = 2, 4, ..., L * R` and each distance `j = k/2, ..., 1`, every key `g` is compared with
//! key `g ^ j` and the pair is put in ascending order when `g & k == 0`, descending otherwise.
//! Distances of `L` and more pair whole registers (one `min` and one `max`); shorter ones
//! pair lanes of one register (a permute, a `max` and a masked `min`). The padding keys sort
//! last, so the first `n` keys out are the input's, sorted.
//!
//! One pass keeps at most [`HELD`] registers of keys, every register index a constant
//! (`unroll!`), so that they stay in registers; 32 registers (256 `u64` keys) sort in passes
//! over their halves.

/// The longest slice [`sort`] takes (32 registers of 8 `u64` keys, as many
/// registers as AVX-512 has).
pub(crate) const NET_MAX: usize = 256;

/// Registers of keys one pass of the network holds: half of AVX-512's 32, leaving the other
/// half for each layer's partners, results and permutation indices. A network over more
/// registers (the 32 of 256 `u64` keys) runs in passes over halves of its keys.
const HELD: usize = 16;

/// The lane length above which [`sort`] first checks whether the lane is sorted already.
const SORTED_CHECK_FROM: usize = 64;

/// A type the network sorts: the integer keys `u64` (8 to a register) and `u32` (16, half
/// the registers and the layers' work), compared by integer `min`/`max`, and the floats `f64`
/// and `f32`, compared by float `min`/`max` (a standalone loop here ran those 1.5x faster than
/// the 64-bit integer ones; a 256-element `f64` lane took 0.70 us against 1.05 as keys). The
/// caller keeps NaNs out of a float lane.
pub(crate) trait NetSort: Copy + PartialOrd + 'static {
    /// Sorts `v` ascending in registers.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and `v.len() <= NET_MAX`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn sort_in_registers(v: &mut [Self]);
}

/// An integer key type the network sorts ([`NetSort`]).
pub(crate) trait NetKey:
    NetSort + Ord + std::ops::BitXor<Output = Self> + Into<u64>
{
    /// The zero key.
    const ZERO: Self;
    /// The largest key (the padding, and the complement mask of a descending sort).
    const MAX: Self;
    /// `k` cut to this width (the caller's keys fit it).
    fn from_u64(k: u64) -> Self;
}

impl NetKey for u64 {
    const ZERO: u64 = 0;
    const MAX: u64 = u64::MAX;
    fn from_u64(k: u64) -> u64 {
        k
    }
}

impl NetKey for u32 {
    const ZERO: u32 = 0;
    const MAX: u32 = u32::MAX;
    fn from_u64(k: u64) -> u32 {
        k as u32
    }
}

/// Implements [`NetSort`] for each type by its network module.
macro_rules! net_sort {
    ($($t:ty => $module:ident),*) => {
        $(
            impl NetSort for $t {
                #[cfg(target_arch = "x86_64")]
                unsafe fn sort_in_registers(v: &mut [$t]) {
                    // SAFETY: the caller's contract is the module's `sort`'s.
                    unsafe { $module::sort(v) }
                }
            }
        )*
    };
}

net_sort!(u64 => wide, u32 => narrow, f64 => wide_f64, f32 => narrow_f32);

/// True when [`sort`] takes a lane of `n` elements: the CPU has AVX-512 and `n <=`
/// [`NET_MAX`].
#[inline]
pub(crate) fn takes(n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    return n <= NET_MAX && crate::kernels::simd::has_avx512();
    #[cfg(not(target_arch = "x86_64"))]
    return {
        let _ = n;
        false
    };
}

/// Sorts `v` ascending and returns `true` when the CPU has AVX-512 and `v.len() <=`
/// [`NET_MAX`]; otherwise leaves `v` as it is and returns `false` (the caller sorts another
/// way).
pub(crate) fn sort<K: NetSort>(v: &mut [K]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if takes(v.len()) {
        // Sorted already (a constant lane, such as a broadcast input's): one early-exiting
        // pass instead of the whole network, which costs the same for every input. Not for
        // the shortest lanes, whose network costs little more than the check: on random
        // input its first comparison was a mispredicted branch, a fifth of a 16-key sort.
        if v.len() <= SORTED_CHECK_FROM || !v.is_sorted() {
            // SAFETY: the CPU has AVX-512F (checked just above), the one feature the
            // networks are compiled for, and the length is checked just above.
            unsafe { K::sort_in_registers(v) };
        }
        return true;
    }
    let _ = v;
    false
}

/// The mask of the lanes `l < lanes` with `l & bit != 0` (a const fn, so that every mask of
/// the network is a constant).
const fn lanes_with(bit: usize, lanes: usize) -> u32 {
    let (mut m, mut l) = (0, 0);
    while l < lanes {
        if l & bit != 0 {
            m |= 1 << l;
        }
        l += 1;
    }
    m
}

/// Runs `$body` with `$i` bound to each of `0 .. $n` (`$n` at most 16: [`HELD`]), written
/// out, so that every register index is a constant. Loops over the registers did not unroll
/// at 32 registers, and the keys then lived on the stack (the network took three times as
/// long as it does now).
macro_rules! unroll {
    ($n:expr, |$i:ident| $body:block) => {
        unroll!(@ $n, $i, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $n:expr, $i:ident, $body:block, $($k:literal)*) => {
        $(
            if $k < $n {
                let $i: usize = $k;
                $body
            }
        )*
    };
}

/// The network's module for one key type: `$word` keys, `$lanes` to a register, and the
/// AVX-512F intrinsics for that lane width.
macro_rules! network_module {
    ($name:ident, $word:ty, $pad:expr, $lanes:literal, $mask:ty, $vec:ty, $idx:ty, $load:ident,
     $store:ident, $mask_load:ident, $mask_store:ident, $zero:ident, $min:ident, $max:ident,
     $mask_min:ident, $permute:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use std::arch::x86_64::*;

            use super::{lanes_with, HELD, NET_MAX};

            /// Keys a register holds.
            const L: usize = $lanes;

            /// The keys, padded: `NET_MAX` of them.
            type Keys = [$word; NET_MAX];

            /// Sorts `v` (`v.len() <= NET_MAX`) ascending: in registers loaded from it under
            /// masks when it fits in [`HELD`] of them, else through a padded buffer (the
            /// network over 32 registers runs in passes over memory).
            ///
            /// # Safety
            /// The CPU must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn sort(v: &mut [$word]) {
                let n = v.len();
                debug_assert!(n <= NET_MAX);
                match n.div_ceil(L).next_power_of_two() {
                    1 => direct::<1>(v),
                    2 => direct::<2>(v),
                    4 => direct::<4>(v),
                    8 => direct::<8>(v),
                    16 => direct::<16>(v),
                    // More registers than one pass holds: 32 of `u64` keys (`u32` keys
                    // never need more than 16).
                    _ => {
                        if let Ok(full) = <&mut Keys>::try_from(&mut *v) {
                            // A full lane needs no padding: sorted where it is.
                            return halves(full);
                        }
                        let mut buf: Keys = [$pad; NET_MAX];
                        buf[..n].copy_from_slice(v);
                        halves(&mut buf);
                        v.copy_from_slice(&buf[..n]);
                    }
                }
            }

            /// The mask of the lowest `min(k, L)` lanes.
            #[inline]
            fn low_lanes(k: usize) -> $mask {
                if k >= L {
                    <$mask>::MAX
                } else {
                    ((1u32 << k) - 1) as $mask
                }
            }

            /// Sorts `v` (`v.len() <= L * R`, `R <= HELD`) in `R` registers loaded from it
            /// under masks, the lanes past its end holding the padding key, and stored back
            /// under the same masks: no buffer to fill and copy (which, for a 16-element lane,
            /// took longer than its network).
            #[target_feature(enable = "avx512f")]
            fn direct<const R: usize>(v: &mut [$word]) {
                let n = v.len();
                assert!(n <= L * R, "the lane fits in the registers");
                let pad = [$pad; L];
                // SAFETY: `pad` is `L` keys, 64 bytes; the load is unaligned.
                let padding = unsafe { $load(pad.as_ptr().cast()) };
                let mut r = [padding; R];
                let p = v.as_mut_ptr();
                unroll!(R, |i| {
                    if i * L < n {
                        // SAFETY: the lanes the mask selects are the keys `i L ..
                        // min(n, (i + 1) L)` of `v`; a masked load or store touches no other
                        // lane's memory (and faults on none).
                        r[i] = unsafe {
                            $mask_load(padding, low_lanes(n - i * L), p.add(i * L).cast())
                        };
                    }
                });
                // Written out, not a function: one holding the registers was not always
                // inlined, and they then went through memory.
                stage_upto::<R, 0, 2>(&mut r);
                stage_upto::<R, 0, 4>(&mut r);
                stage_upto::<R, 0, 8>(&mut r);
                stage_upto::<R, 0, 16>(&mut r);
                stage_upto::<R, 0, 32>(&mut r);
                stage_upto::<R, 0, 64>(&mut r);
                stage_upto::<R, 0, 128>(&mut r);
                stage_upto::<R, 0, 256>(&mut r);
                unroll!(R, |i| {
                    if i * L < n {
                        // SAFETY: as for the loads.
                        unsafe { $mask_store(p.add(i * L).cast(), low_lanes(n - i * L), r[i]) };
                    }
                });
            }

            /// Registers in each half of a full buffer.
            const HALF: usize = NET_MAX / L / 2;

            /// Sorts the whole of `buf` in passes over its halves (`HALF` registers each, at
            /// most `HELD`): every stage within a half on each half (the second half's last
            /// one descending, as the network puts it), then the last stage's layer between
            /// the halves (register distance `HALF`, in memory), then the rest of the last
            /// stage on each half.
            #[target_feature(enable = "avx512f")]
            fn halves(buf: &mut Keys) {
                const { assert!(HALF <= HELD && HALF * L * 2 == NET_MAX) };
                // The low half through `direct` (its masks all full) rather than a `pass` from
                // register 0: two functions running the stages of registers `0 .. HALF` made
                // LLVM stop inlining the stages (each then had two callers), and the
                // registers went through memory at every stage.
                direct::<HALF>(&mut buf[..NET_MAX / 2]);
                pass::<HALF, HALF>(buf);
                let (low, high) = buf.split_at_mut(NET_MAX / 2);
                for (a, b) in low.chunks_exact_mut(L).zip(high.chunks_exact_mut(L)) {
                    // SAFETY: `a` and `b` are `L` keys each, 64 bytes; the accesses are
                    // unaligned.
                    unsafe {
                        let (x, y) = ($load(a.as_ptr().cast()), $load(b.as_ptr().cast()));
                        $store(a.as_mut_ptr().cast(), $min(x, y));
                        $store(b.as_mut_ptr().cast(), $max(x, y));
                    }
                }
                last_pass::<0>(buf);
                last_pass::<HALF>(buf);
            }

            /// Loads registers `B .. B + R` of `buf`, runs every stage whose blocks fit in
            /// them (each block in the network's direction), and stores them back. The
            /// registers never leave this function, whose callees inline: passed between
            /// functions, they went through the stack.
            #[target_feature(enable = "avx512f")]
            fn pass<const R: usize, const B: usize>(buf: &mut Keys) {
                let mut r = load::<R>(buf, B);
                stage_upto::<R, B, 2>(&mut r);
                stage_upto::<R, B, 4>(&mut r);
                stage_upto::<R, B, 8>(&mut r);
                stage_upto::<R, B, 16>(&mut r);
                stage_upto::<R, B, 32>(&mut r);
                stage_upto::<R, B, 64>(&mut r);
                stage_upto::<R, B, 128>(&mut r);
                stage_upto::<R, B, 256>(&mut r);
                store(buf, B, &r);
            }

            /// The register distances below `HALF` and the lane distances of the last stage
            /// of [`halves`] (all ascending), on registers `B .. B + HALF` of `buf`.
            #[target_feature(enable = "avx512f")]
            fn last_pass<const B: usize>(buf: &mut Keys) {
                let mut r = load::<HALF>(buf, B);
                stage::<HALF, B, NET_MAX>(&mut r);
                store(buf, B, &r);
            }

            /// Registers `first .. first + R` of `buf` (`L` keys each).
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn load<const R: usize>(buf: &Keys, first: usize) -> [$vec; R] {
                let mut r = [$zero(); R];
                unroll!(R, |i| {
                    let keys = &buf[L * (first + i)..][..L];
                    // SAFETY: `keys` is `L` keys, 64 bytes; the load is unaligned.
                    r[i] = unsafe { $load(keys.as_ptr().cast()) };
                });
                r
            }

            /// Writes `r` back as registers `first ..` of `buf`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn store<const R: usize>(buf: &mut Keys, first: usize, r: &[$vec; R]) {
                unroll!(R, |i| {
                    let keys = &mut buf[L * (first + i)..][..L];
                    // SAFETY: as for the loads.
                    unsafe { $store(keys.as_mut_ptr().cast(), r[i]) };
                });
            }

            /// Stage `K` when its blocks fit in `R` registers (else nothing).
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn stage_upto<const R: usize, const B: usize, const K: usize>(r: &mut [$vec; R]) {
                if K <= L * R {
                    stage::<R, B, K>(r);
                }
            }

            /// The layers of stage `K` (blocks of `K` keys) that pair keys within `r`:
            /// register distances below `R` (those of at most `K / 2L` registers), then the
            /// lane distances. A block longer than `L * R` keys needs its larger distances
            /// done before (`halves`).
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn stage<const R: usize, const B: usize, const K: usize>(r: &mut [$vec; R]) {
                registers::<R, B, K, 8>(r);
                registers::<R, B, K, 4>(r);
                registers::<R, B, K, 2>(r);
                registers::<R, B, K, 1>(r);
                lanes::<R, B, K>(r);
            }

            /// The layer at a distance of `D` registers (`L * D` keys) within blocks of `K`
            /// keys, when `D < R` and the block is that long (else nothing); a register's
            /// direction is its block's.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn registers<const R: usize, const B: usize, const K: usize, const D: usize>(
                r: &mut [$vec; R],
            ) {
                if D >= R || 2 * L * D > K {
                    return;
                }
                unroll!(R, |a| {
                    if a & D == 0 {
                        let b = a | D;
                        let (lo, hi) = ($min(r[a], r[b]), $max(r[a], r[b]));
                        let ascending = (L * (B + a)) & K == 0;
                        (r[a], r[b]) = if ascending { (lo, hi) } else { (hi, lo) };
                    }
                });
            }

            /// The layers at lane distances `min(K / 2, L / 2), ..., 1` within blocks of `K`
            /// keys, all of them on one register before the next.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn lanes<const R: usize, const B: usize, const K: usize>(r: &mut [$vec; R]) {
                unroll!(R, |a| {
                    // The lanes whose block (`g & K` for key `g = L * (B + a) + l`) sorts
                    // descending: blocks shorter than a register alternate within it,
                    // longer ones cover it.
                    let descending = if K < L {
                        const { lanes_with(K, L) }
                    } else if (L * (B + a)) & K != 0 {
                        const { (1u32 << L) - 1 }
                    } else {
                        0
                    };
                    let mut x = r[a];
                    x = lane_layer::<K, 8>(x, descending);
                    x = lane_layer::<K, 4>(x, descending);
                    x = lane_layer::<K, 2>(x, descending);
                    x = lane_layer::<K, 1>(x, descending);
                    r[a] = x;
                });
            }

            /// The layer at lane distance `D` within blocks of `K` keys on register `x`, when
            /// `D < L` and the block is that long (else `x`); `descending` has the lanes whose
            /// block sorts descending. Lane `l`'s partner is `l ^ D`: every lane takes the
            /// larger key of its pair, then the lanes that keep the smaller one (the lower
            /// lane of an ascending pair, the upper of a descending one) take the smaller.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn lane_layer<const K: usize, const D: usize>(x: $vec, descending: u32) -> $vec {
                if D >= L || 2 * D > K {
                    return x;
                }
                let other = $permute(partners(D), x);
                let keep_min = !(lanes_with(D, L) ^ descending) as $mask;
                $mask_min($max(x, other), keep_min, x, other)
            }

            /// The permutation that moves lane `l ^ d` to lane `l`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn partners(d: usize) -> __m512i {
                let mut idx = [0 as $idx; L];
                for (l, i) in idx.iter_mut().enumerate() {
                    *i = (l ^ d) as $idx;
                }
                // SAFETY: `idx` is `L` keys, 64 bytes; the load is unaligned.
                unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) }
            }
        }
    };
}

network_module!(
    wide,
    u64,
    u64::MAX,
    8,
    __mmask8,
    __m512i,
    u64,
    _mm512_loadu_si512,
    _mm512_storeu_si512,
    _mm512_mask_loadu_epi64,
    _mm512_mask_storeu_epi64,
    _mm512_setzero_si512,
    _mm512_min_epu64,
    _mm512_max_epu64,
    _mm512_mask_min_epu64,
    _mm512_permutexvar_epi64
);
network_module!(
    narrow,
    u32,
    u32::MAX,
    16,
    __mmask16,
    __m512i,
    u32,
    _mm512_loadu_si512,
    _mm512_storeu_si512,
    _mm512_mask_loadu_epi32,
    _mm512_mask_storeu_epi32,
    _mm512_setzero_si512,
    _mm512_min_epu32,
    _mm512_max_epu32,
    _mm512_mask_min_epu32,
    _mm512_permutexvar_epi32
);

network_module!(
    wide_f64,
    f64,
    f64::INFINITY,
    8,
    __mmask8,
    __m512d,
    u64,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_mask_loadu_pd,
    _mm512_mask_storeu_pd,
    _mm512_setzero_pd,
    _mm512_min_pd,
    _mm512_max_pd,
    _mm512_mask_min_pd,
    _mm512_permutexvar_pd
);
network_module!(
    narrow_f32,
    f32,
    f32::INFINITY,
    16,
    __mmask16,
    __m512,
    u32,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_mask_loadu_ps,
    _mm512_mask_storeu_ps,
    _mm512_setzero_ps,
    _mm512_min_ps,
    _mm512_max_ps,
    _mm512_mask_min_ps,
    _mm512_permutexvar_ps
);

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (the test needs no crate for it).
    fn keys(n: usize, seed: u64, spread: u64) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match (s >> 60) % 4 {
                    0 => u64::MAX,
                    _ => (s >> 17) % spread,
                }
            })
            .collect()
    }

    #[test]
    fn sorts_every_length_like_the_standard_sort() {
        if !crate::kernels::simd::has_avx512() {
            // The network is not used on this CPU: `sort` must leave the input alone.
            let mut v = vec![3u64, 1, 2];
            assert!(!sort(&mut v));
            assert_eq!(v, [3, 1, 2]);
            let mut v32 = vec![3u32, 1, 2];
            assert!(!sort(&mut v32));
            assert_eq!(v32, [3, 1, 2]);
            return;
        }
        for n in 0..=NET_MAX {
            for (seed, spread) in [(1, 5), (2, 1000), (3, u64::MAX)] {
                let mut v = keys(n, seed + n as u64, spread);
                let mut want = v.clone();
                want.sort_unstable();
                let mut v32: Vec<u32> = v.iter().map(|&k| (k >> 32) as u32 ^ k as u32).collect();
                let mut want32 = v32.clone();
                want32.sort_unstable();
                assert!(sort(&mut v));
                assert_eq!(v, want, "n = {n}, spread {spread}");
                assert!(sort(&mut v32));
                assert_eq!(v32, want32, "u32, n = {n}, spread {spread}");
            }
        }
        for n in [0, 1, 7, 8, 100, NET_MAX] {
            let mut sorted: Vec<u64> = (0..n as u64).map(|i| i / 3).collect();
            let want = sorted.clone();
            assert!(sort(&mut sorted));
            assert_eq!(sorted, want);
            let mut reversed: Vec<u64> = want.iter().rev().copied().collect();
            assert!(sort(&mut reversed));
            assert_eq!(reversed, want);
            let mut reversed32: Vec<u32> = want.iter().rev().map(|&k| k as u32).collect();
            assert!(sort(&mut reversed32));
            assert!(reversed32.is_sorted());
        }
        let mut long = vec![0u64; NET_MAX + 1];
        assert!(!sort(&mut long));
        assert!(!sort(&mut vec![0u32; NET_MAX + 1]));
    }

    #[test]
    fn sorts_floats_of_every_length_like_the_standard_sort() {
        if !crate::kernels::simd::has_avx512() {
            assert!(!sort(&mut [2.0f64, 1.0]));
            assert!(!sort(&mut [2.0f32, 1.0]));
            return;
        }
        // Ties, signed zeros, both infinities and values of every magnitude (no NaN: the
        // caller keeps them out).
        let value = |k: u64| match k % 7 {
            0 => f64::INFINITY,
            1 => f64::NEG_INFINITY,
            2 => -0.0,
            3 => 0.0,
            4 => (k % 5) as f64 - 2.0,
            _ => f64::from_bits(k >> 2) * if k & 1 == 0 { -1.0 } else { 1.0 },
        };
        for n in 0..=NET_MAX {
            for seed in [4, 5] {
                let v: Vec<f64> = keys(n, seed + n as u64, u64::MAX)
                    .into_iter()
                    .map(value)
                    .collect();
                let v: Vec<f64> = v
                    .into_iter()
                    .map(|x| if x.is_nan() { 1.5 } else { x })
                    .collect();
                let mut want = v.clone();
                want.sort_by(|a, b| a.partial_cmp(b).unwrap());
                let mut got = v.clone();
                assert!(sort(&mut got));
                assert_eq!(got, want, "f64, n = {n}");
                let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                let mut want32 = v32.clone();
                want32.sort_by(|a, b| a.partial_cmp(b).unwrap());
                let mut got32 = v32.clone();
                assert!(sort(&mut got32));
                assert_eq!(got32, want32, "f32, n = {n}");
            }
        }
    }
}
