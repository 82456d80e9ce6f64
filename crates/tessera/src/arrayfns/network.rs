//! A bitonic sorting network over `u64` keys held in AVX-512 registers: the sort of short
//! lanes (up to [`NET_MAX`] keys) behind `sort`, `argsort` and the set functions, where a
//! comparison sort pays a mispredicted branch per comparison and radix passes pay their
//! 256-bucket counts (docs/performance.md, "Sorting").
//!
//! The keys (`radix.rs`: order-preserving, and packed with their index where the sort must be
//! stable) are padded with `u64::MAX` to `8 * R` keys, `R` a power of two, loaded into `R`
//! registers of 8 lanes, and sorted by Batcher's bitonic network: for each block size
//! `k = 2, 4, ..., 8R` and each distance `j = k/2, ..., 1`, every key `g` is compared with key
//! `g ^ j` and the pair is put in ascending order when `g & k == 0`, descending otherwise.
//! Distances of 8 and more pair whole registers (one `min` and one `max`); shorter ones pair
//! lanes of one register (a permute, a `min`, a `max` and a blend). The padding keys sort
//! last, so the first `n` keys out are the input's, sorted.

/// The longest slice [`sort`] takes: 32 registers of 8 keys, as many as AVX-512 has.
pub(crate) const NET_MAX: usize = 256;

/// Sorts `v` ascending and returns `true` when the CPU has AVX-512 and `v.len() <=`
/// [`NET_MAX`]; otherwise leaves `v` as it is and returns `false` (the caller sorts another
/// way).
pub(crate) fn sort(v: &mut [u64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if v.len() <= NET_MAX && crate::kernels::simd::has_avx512() {
        // SAFETY: the CPU has AVX-512F (checked just above), the one feature the function
        // is compiled for.
        unsafe { avx512::sort(v) };
        return true;
    }
    let _ = v;
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::NET_MAX;

    /// Sorts `v` (`v.len() <= NET_MAX`) ascending through a padded buffer.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sort(v: &mut [u64]) {
        let n = v.len();
        debug_assert!(n <= NET_MAX);
        if n < 2 {
            return;
        }
        let mut buf = [u64::MAX; NET_MAX];
        buf[..n].copy_from_slice(v);
        match n.div_ceil(8).next_power_of_two() {
            1 => network::<1>(&mut buf),
            2 => network::<2>(&mut buf),
            4 => network::<4>(&mut buf),
            8 => network::<8>(&mut buf),
            16 => network::<16>(&mut buf),
            _ => network::<32>(&mut buf),
        }
        v.copy_from_slice(&buf[..n]);
    }

    /// Sorts `buf[..8 * R]` ascending in `R` registers.
    ///
    /// Every layer's block size `K` and distance are constants, so that the layers unroll
    /// and the `R` keys' registers stay registers (with run-time distances they lived on
    /// the stack, at twice the time).
    #[target_feature(enable = "avx512f")]
    fn network<const R: usize>(buf: &mut [u64; NET_MAX]) {
        let mut r = [_mm512_setzero_si512(); R];
        for (i, reg) in r.iter_mut().enumerate() {
            // SAFETY: `8 * R <= NET_MAX` (R <= 32), so lanes `8i .. 8i + 8` are inside `buf`;
            // the load is unaligned.
            *reg = unsafe { _mm512_loadu_si512(buf.as_ptr().add(8 * i).cast()) };
        }
        // One stage per block size `K`: the register distances `K / 16, ..., 1` (a distance
        // of `8d` keys), then the lane distances `min(K / 2, 4), ..., 1`.
        macro_rules! stage {
            ($k:literal, [$($d:literal),*]) => {
                if $k <= 8 * R {
                    $(registers::<R, $k, $d>(&mut r);)*
                    lanes::<R, $k>(&mut r);
                }
            };
        }
        stage!(2, []);
        stage!(4, []);
        stage!(8, []);
        stage!(16, [1]);
        stage!(32, [2, 1]);
        stage!(64, [4, 2, 1]);
        stage!(128, [8, 4, 2, 1]);
        stage!(256, [16, 8, 4, 2, 1]);
        for (i, reg) in r.iter().enumerate() {
            // SAFETY: as for the loads.
            unsafe { _mm512_storeu_si512(buf.as_mut_ptr().add(8 * i).cast(), *reg) };
        }
    }

    /// One layer at a distance of `D` registers (`8D` keys) within blocks of `K` keys
    /// (`K >= 16`, so a register's direction is its block's).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn registers<const R: usize, const K: usize, const D: usize>(r: &mut [__m512i; R]) {
        for a in 0..R {
            if a & D != 0 {
                continue;
            }
            let b = a | D;
            let (lo, hi) = (_mm512_min_epu64(r[a], r[b]), _mm512_max_epu64(r[a], r[b]));
            let ascending = (8 * a) & K == 0;
            (r[a], r[b]) = if ascending { (lo, hi) } else { (hi, lo) };
        }
    }

    /// The layers at lane distances `min(K / 2, 4), ..., 1` within blocks of `K` keys, all
    /// of them on one register before the next.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lanes<const R: usize, const K: usize>(r: &mut [__m512i; R]) {
        // Lane `l`'s partner at distance `d` is `l ^ d`; it keeps the larger key of the pair
        // when it is the upper lane (`l & d != 0`) of an ascending pair or the lower lane of a
        // descending one.
        let layers = [
            (_mm512_set_epi64(3, 2, 1, 0, 7, 6, 5, 4), 0b1111_0000u8),
            (_mm512_set_epi64(5, 4, 7, 6, 1, 0, 3, 2), 0b1100_1100),
            (_mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1), 0b1010_1010),
        ];
        let first = match K {
            2 => 2,
            4 => 1,
            _ => 0,
        };
        for (a, reg) in r.iter_mut().enumerate() {
            // The lanes whose block (`g & K` for key `g = 8a + l`) sorts descending: blocks
            // of 2 and 4 keys alternate within a register, longer ones cover it.
            let descending = match K {
                2 => 0b1100_1100u8,
                4 => 0b1111_0000,
                _ if (8 * a) & K != 0 => 0b1111_1111,
                _ => 0,
            };
            let mut x = *reg;
            for &(partner, upper) in &layers[first..] {
                let other = _mm512_permutexvar_epi64(partner, x);
                let (lo, hi) = (_mm512_min_epu64(x, other), _mm512_max_epu64(x, other));
                x = _mm512_mask_blend_epi64(upper ^ descending, lo, hi);
            }
            *reg = x;
        }
    }
}

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
            return;
        }
        for n in 0..=NET_MAX {
            for (seed, spread) in [(1, 5), (2, 1000), (3, u64::MAX)] {
                let mut v = keys(n, seed + n as u64, spread);
                let mut want = v.clone();
                want.sort_unstable();
                assert!(sort(&mut v));
                assert_eq!(v, want, "n = {n}, spread {spread}");
            }
        }
        let mut long = vec![0u64; NET_MAX + 1];
        assert!(!sort(&mut long));
    }
}
