//! A bitonic sorting network over integer keys held in AVX-512 registers: the sort of short
//! lanes (up to [`NET_MAX`] keys) behind `sort`, `argsort` and the set functions, where a
//! comparison sort pays a mispredicted branch per comparison and radix passes pay their
//! 256-bucket counts (docs/performance.md, "Sorting network").
//!
//! The keys (`radix.rs`: order-preserving, and packed with their index where the sort must be
//! stable) are `u64` (8 to a register) or `u32` (16 to a register). They are padded with the
//! largest key to `L * R` keys (`L` lanes a register, `R` a power of two), loaded into `R`
//! registers, and sorted by Batcher's bitonic network: for each block size
//! `k = 2, 4, ..., L * R` and each distance `j = k/2, ..., 1`, every key `g` is compared with
//! key `g ^ j` and the pair is put in ascending order when `g & k == 0`, descending otherwise.
//! Distances of `L` and more pair whole registers (one `min` and one `max`); shorter ones
//! pair lanes of one register (a permute, a `min`, a `max` and a blend). The padding keys
//! sort last, so the first `n` keys out are the input's, sorted.

/// The longest slice [`sort`] takes (32 registers of 8 `u64` keys, as many
/// registers as AVX-512 has).
pub(crate) const NET_MAX: usize = 256;

/// A key type the network sorts: `u64` (8 to a register) or `u32` (16, half the registers
/// and the layers' work).
pub(crate) trait NetKey:
    Copy + Ord + std::ops::BitXor<Output = Self> + Into<u64> + 'static
{
    /// The zero key.
    const ZERO: Self;
    /// The largest key (the padding, and the complement mask of a descending sort).
    const MAX: Self;
    /// `k` cut to this width (the caller's keys fit it).
    fn from_u64(k: u64) -> Self;
    /// Sorts `v` ascending in registers.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and `v.len() <= NET_MAX`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn sort_in_registers(v: &mut [Self]);
}

impl NetKey for u64 {
    const ZERO: u64 = 0;
    const MAX: u64 = u64::MAX;
    fn from_u64(k: u64) -> u64 {
        k
    }
    #[cfg(target_arch = "x86_64")]
    unsafe fn sort_in_registers(v: &mut [u64]) {
        // SAFETY: the caller's contract is `wide::sort`'s.
        unsafe { wide::sort(v) }
    }
}

impl NetKey for u32 {
    const ZERO: u32 = 0;
    const MAX: u32 = u32::MAX;
    fn from_u64(k: u64) -> u32 {
        k as u32
    }
    #[cfg(target_arch = "x86_64")]
    unsafe fn sort_in_registers(v: &mut [u32]) {
        // SAFETY: the caller's contract is `narrow::sort`'s.
        unsafe { narrow::sort(v) }
    }
}

/// Sorts `v` ascending and returns `true` when the CPU has AVX-512 and `v.len() <=`
/// [`NET_MAX`]; otherwise leaves `v` as it is and returns `false` (the caller sorts another
/// way).
pub(crate) fn sort<K: NetKey>(v: &mut [K]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if v.len() <= NET_MAX && crate::kernels::simd::has_avx512() {
        // Sorted already (a constant lane, such as a broadcast input's): one early-exiting
        // pass instead of the whole network, which costs the same for every input.
        if !v.is_sorted() {
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

/// The network's module for one key type: `$word` keys, `$lanes` to a register, and the
/// AVX-512F intrinsics for that lane width.
macro_rules! network_module {
    ($name:ident, $word:ty, $lanes:literal, $mask:ty, $min:ident, $max:ident, $permute:ident,
     $blend:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use std::arch::x86_64::*;

            use super::{lanes_with, NET_MAX};

            /// Keys a register holds.
            const L: usize = $lanes;

            /// Sorts `v` (`v.len() <= NET_MAX`) ascending through a padded buffer.
            ///
            /// # Safety
            /// The CPU must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn sort(v: &mut [$word]) {
                let n = v.len();
                debug_assert!(n <= NET_MAX);
                let mut buf = [<$word>::MAX; NET_MAX];
                buf[..n].copy_from_slice(v);
                match n.div_ceil(L).next_power_of_two() {
                    1 => network::<1>(&mut buf),
                    2 => network::<2>(&mut buf),
                    4 => network::<4>(&mut buf),
                    8 => network::<8>(&mut buf),
                    16 => network::<16>(&mut buf),
                    _ => network::<{ NET_MAX / L }>(&mut buf),
                }
                v.copy_from_slice(&buf[..n]);
            }

            /// Sorts `buf[..L * R]` ascending in `R` registers.
            ///
            /// Every layer's block size `K` and distance are constants, so that the layers
            /// unroll and the keys' registers stay registers (with run-time distances they
            /// lived on the stack, at twice the time).
            #[target_feature(enable = "avx512f")]
            fn network<const R: usize>(buf: &mut [$word; NET_MAX]) {
                let mut r = [_mm512_setzero_si512(); R];
                for (i, reg) in r.iter_mut().enumerate() {
                    // SAFETY: `L * R <= NET_MAX`, so keys `L*i .. L*i + L` are inside `buf`;
                    // the load is unaligned.
                    *reg = unsafe { _mm512_loadu_si512(buf.as_ptr().add(L * i).cast()) };
                }
                // One stage per block size `K` (those up to `L * R`): the register distances
                // `K / 2L, ..., 1` (a distance of `L * D` keys), then the lane distances.
                macro_rules! stage {
                    ($k:literal) => {
                        if $k <= L * R {
                            registers::<R, $k, 16>(&mut r);
                            registers::<R, $k, 8>(&mut r);
                            registers::<R, $k, 4>(&mut r);
                            registers::<R, $k, 2>(&mut r);
                            registers::<R, $k, 1>(&mut r);
                            lanes::<R, $k>(&mut r);
                        }
                    };
                }
                stage!(2);
                stage!(4);
                stage!(8);
                stage!(16);
                stage!(32);
                stage!(64);
                stage!(128);
                stage!(256);
                for (i, reg) in r.iter().enumerate() {
                    // SAFETY: as for the loads.
                    unsafe { _mm512_storeu_si512(buf.as_mut_ptr().add(L * i).cast(), *reg) };
                }
            }

            /// The layer at a distance of `D` registers (`L * D` keys) within blocks of `K`
            /// keys, when the block is that long (else nothing); a register's direction is
            /// its block's.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn registers<const R: usize, const K: usize, const D: usize>(r: &mut [__m512i; R]) {
                if 2 * L * D > K {
                    return;
                }
                for a in 0..R {
                    if a & D != 0 {
                        continue;
                    }
                    let b = a | D;
                    let (lo, hi) = ($min(r[a], r[b]), $max(r[a], r[b]));
                    let ascending = (L * a) & K == 0;
                    (r[a], r[b]) = if ascending { (lo, hi) } else { (hi, lo) };
                }
            }

            /// The layers at lane distances `min(K / 2, L / 2), ..., 1` within blocks of `K`
            /// keys, all of them on one register before the next.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn lanes<const R: usize, const K: usize>(r: &mut [__m512i; R]) {
                for (a, reg) in r.iter_mut().enumerate() {
                    // The lanes whose block (`g & K` for key `g = L*a + l`) sorts descending:
                    // blocks shorter than a register alternate within it, longer ones
                    // cover it.
                    let descending = if K < L {
                        const { lanes_with(K, L) }
                    } else if (L * a) & K != 0 {
                        const { (1u32 << L) - 1 }
                    } else {
                        0
                    };
                    let mut x = *reg;
                    let mut d = L / 2;
                    while d >= 1 {
                        if 2 * d <= K {
                            // Lane `l`'s partner is `l ^ d`; it keeps the larger key of the
                            // pair when it is the upper lane (`l & d != 0`) of an ascending
                            // pair or the lower lane of a descending one.
                            let partner = partners(d);
                            let other = $permute(partner, x);
                            let (lo, hi) = ($min(x, other), $max(x, other));
                            x = $blend((lanes_with(d, L) ^ descending) as $mask, lo, hi);
                        }
                        d /= 2;
                    }
                    *reg = x;
                }
            }

            /// The permutation that moves lane `l ^ d` to lane `l`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn partners(d: usize) -> __m512i {
                let mut idx = [0 as $word; L];
                for (l, i) in idx.iter_mut().enumerate() {
                    *i = (l ^ d) as $word;
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
    8,
    __mmask8,
    _mm512_min_epu64,
    _mm512_max_epu64,
    _mm512_permutexvar_epi64,
    _mm512_mask_blend_epi64
);
network_module!(
    narrow,
    u32,
    16,
    __mmask16,
    _mm512_min_epu32,
    _mm512_max_epu32,
    _mm512_permutexvar_epi32,
    _mm512_mask_blend_epi32
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
}
