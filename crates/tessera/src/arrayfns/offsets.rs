//! 64-bit integer lanes whose keys span less than `2^32` (indices, counts, labels: most
//! `int64` data) sorted as 32-bit offsets from their least key: the network and the
//! vectorised quicksort then hold 16 keys to a register instead of 8, half the registers and
//! the comparisons (docs/performance.md, "Sorting network").
//!
//! The keys are the values' order-preserving `u64` keys (`radix.rs`: the sign bit flipped
//! for `int64`, every bit for a descending sort), so `key - least` fits 32 bits exactly when
//! the lane's range does, and `least + offset` gives each key back unchanged.

use super::network::NET_MAX;
use super::quicksort;
use crate::error::Result;
use crate::storage::try_vec;

/// Sorts the keys `v ^ mask` of a lane when they span less than `2^32` and the CPU has
/// AVX-512 ([`quicksort::available`]), writing the sorted values back into `v`; `false`,
/// with `v` untouched, otherwise.
///
/// # Errors
/// A lane longer than [`NET_MAX`] whose offset buffer cannot be allocated.
pub(crate) fn sort_as_offsets(v: &mut [u64], mask: u64, par: bool) -> Result<bool> {
    if v.is_empty() || !quicksort::available() {
        return Ok(false);
    }
    let Some(least) = least_if_narrow(v, mask) else {
        return Ok(false);
    };
    if v.len() <= NET_MAX {
        let mut keys = [0u32; NET_MAX];
        sort_offsets(v, mask, least, &mut keys[..v.len()], par);
    } else {
        sort_offsets(v, mask, least, &mut try_vec(0u32, v.len())?, par);
    }
    Ok(true)
}

/// The least key of `v ^ mask` (not empty) when every key is within `u32::MAX` of it;
/// `None` otherwise.
fn least_if_narrow(v: &[u64], mask: u64) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    let (lo, hi) = if crate::kernels::simd::has_avx512() {
        // SAFETY: the CPU has the features `range_avx512` is compiled for (checked above).
        unsafe { range_avx512(v, mask) }
    } else {
        range(v, mask)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (lo, hi) = range(v, mask);
    (hi - lo <= u64::from(u32::MAX)).then_some(lo)
}

/// The least and greatest key of `v ^ mask` (not empty).
#[inline(always)]
fn range(v: &[u64], mask: u64) -> (u64, u64) {
    v.iter().fold((u64::MAX, 0), |(lo, hi), &x| {
        let k = x ^ mask;
        (lo.min(k), hi.max(k))
    })
}

/// [`range`] compiled for AVX-512, which has unsigned 64-bit `min` and `max` (AVX2 builds
/// them from compares and blends).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
fn range_avx512(v: &[u64], mask: u64) -> (u64, u64) {
    range(v, mask)
}

/// The offsets of `v`'s keys from `least` into `keys`, sorted, and written back as values.
fn sort_offsets(v: &mut [u64], mask: u64, least: u64, keys: &mut [u32], par: bool) {
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::simd::has_avx512() {
        // SAFETY: the CPU has the features the two passes are compiled for (checked above).
        unsafe { narrow_avx512(v, mask, least, keys) };
        let sorted = quicksort::sort(keys, par);
        debug_assert!(sorted, "the caller checked AVX-512");
        // SAFETY: as above.
        unsafe { widen_avx512(v, mask, least, keys) };
        return;
    }
    let _ = (v, mask, least, keys, par);
    unreachable!("`quicksort::available` is false off x86-64");
}

/// `keys[i] = (v[i] ^ mask) - least`, which fits 32 bits ([`least_if_narrow`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
fn narrow_avx512(v: &[u64], mask: u64, least: u64, keys: &mut [u32]) {
    for (k, &x) in keys.iter_mut().zip(v) {
        *k = ((x ^ mask) - least) as u32;
    }
}

/// `v[i] = (least + keys[i]) ^ mask`: each key back as its value.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
fn widen_avx512(v: &mut [u64], mask: u64, least: u64, keys: &[u32]) {
    for (x, &k) in v.iter_mut().zip(keys) {
        *x = (least + u64::from(k)) ^ mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the standard library's sort of the values, for narrow and wide ranges, both
    /// masks, network-sized and longer lanes, and at the edges of the 32-bit span.
    #[test]
    fn offsets_sort_like_the_values() {
        if !quicksort::available() {
            return;
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (n, span) in [
            (2, 10),
            (37, 1000),
            (256, 1 << 20),
            (256, u64::from(u32::MAX)),
            (257, 1 << 31),
            (5000, 77),
            (300, u64::from(u32::MAX) + 1),
            (256, u64::MAX),
        ] {
            for (mask, descending) in [(1u64 << 63, false), (!(1u64 << 63), true)] {
                let base = next();
                let vals: Vec<i64> = (0..n)
                    .map(|_| {
                        let off = if span == u64::MAX {
                            next()
                        } else {
                            next() % (span + 1)
                        };
                        base.wrapping_add(off) as i64
                    })
                    .collect();
                let mut bits: Vec<u64> = vals.iter().map(|&x| x as u64).collect();
                let keys: Vec<u64> = bits.iter().map(|&b| b ^ mask).collect();
                let narrow =
                    keys.iter().max().unwrap() - keys.iter().min().unwrap() <= u32::MAX as u64;
                assert_eq!(sort_as_offsets(&mut bits, mask, false).unwrap(), narrow);
                if narrow {
                    let mut want = vals.clone();
                    want.sort_unstable();
                    if descending {
                        want.reverse();
                    }
                    let got: Vec<i64> = bits.iter().map(|&b| b as i64).collect();
                    assert_eq!(got, want, "n {n} span {span} descending {descending}");
                } else {
                    let untouched: Vec<u64> = vals.iter().map(|&x| x as u64).collect();
                    assert_eq!(bits, untouched);
                }
            }
        }
    }
}
