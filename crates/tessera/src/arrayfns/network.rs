//! A sorting network held in AVX-512 registers: the sort of short lanes (up to [`NET_MAX`]
//! keys) behind `sort`, `argsort` and the set functions, where a comparison sort pays a
//! mispredicted branch per comparison and radix passes pay their 256-bucket counts
//! (docs/performance.md, "Sorting network").
//!
//! The keys are `u64` (8 to a register) or `u32` (16 to a register), compared as integers
//! (`radix.rs`'s order-preserving keys, packed with their index where the sort must be
//! stable), `i64` / `i32` values compared as signed integers, or `f64` / `f32` values
//! without NaNs, compared as floats. They are padded with the
//! largest key to `L * R` keys (`L` lanes a register, `R` a power of two) and loaded into `R`
//! registers, key `g` in lane `g % L` of register `g / L`. The network then works on the
//! `R x L` matrix of keys in two phases:
//! 1. each column (one lane position across the registers) is sorted by Batcher's odd-even
//!    merge network on `R` inputs, whole-register `min` and `max` only (191 pairs for 32
//!    registers);
//! 2. neighbouring blocks of sorted columns merge pairwise, 1 + 1 columns into 2, 2 + 2
//!    into 4, up to `L`: a bitonic merge whose layers between registers pair register `i`
//!    with `R - 1 - i` (the second block's columns reversed by a permute), and whose last
//!    layers pair lanes inside each register (a permute, a `max` and a masked `min`).
//!
//! Every layer of the usual bitonic sort at a distance under `L` keys is a permute and two
//! comparisons per register; here the first phase has none, and the second only
//! `log2(L) (log2(L) + 1) / 2` of them, against `log2(L R) (log2(L R) + 1) / 2`, which is
//! where the time went. The padding keys sort last, so the first `n` keys out are the input's,
//! sorted. Every register index is a constant (`unroll!`), so that all `R` registers stay in
//! registers.

/// The longest slice [`sort`] takes (32 registers of 8 `u64` keys, as many
/// registers as AVX-512 has).
pub(crate) const NET_MAX: usize = 256;

/// The lane length above which [`sort`] first checks whether the lane is sorted already.
const SORTED_CHECK_FROM: usize = 64;

/// A type the network sorts: the integer keys `u64` (8 to a register) and `u32` (16, half
/// the registers and the layers' work), compared by integer `min`/`max`, the signed `i64`
/// and `i32` likewise (signed `min`/`max`: an integer lane sorts by value, with no keys),
/// and the floats `f64`
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

    /// Writes `src` sorted ascending into `dst` (of the same length) and returns `true`,
    /// unless `src` holds a tie: a float equal to zero or a NaN (an integer key is never
    /// one), which a float sort must put back in input order afterwards. Then it returns
    /// `false` and leaves `dst` as it is. One pass over the lane, not three (a copy, a scan
    /// for ties and the sort in place).
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and `src.len() == dst.len() <= NET_MAX`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn sort_untied_into(src: &[Self], dst: &mut [Self]) -> bool;
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

                #[cfg(target_arch = "x86_64")]
                unsafe fn sort_untied_into(src: &[$t], dst: &mut [$t]) -> bool {
                    // SAFETY: the caller's contract is the module's `sort_untied_into`'s.
                    unsafe { $module::sort_untied_into(src, dst) }
                }
            }
        )*
    };
}

net_sort!(
    u64 => wide,
    u32 => narrow,
    i64 => wide_i64,
    i32 => narrow_i32,
    f64 => wide_f64,
    f32 => narrow_f32
);

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

/// Writes `src` sorted ascending into `dst` (`src.len() == dst.len()`) and returns `true`
/// when the CPU has AVX-512, `src.len() <=` [`NET_MAX`] and no element of `src` is a tie
/// ([`NetSort::sort_untied_into`]: a float zero or NaN, whose input order a stable sort
/// keeps); otherwise returns `false` and leaves `dst` as it is.
pub(crate) fn sort_untied_into<K: NetSort>(src: &[K], dst: &mut [K]) -> bool {
    assert_eq!(src.len(), dst.len(), "a lane and its sorted copy");
    #[cfg(target_arch = "x86_64")]
    if takes(src.len()) {
        // A sorted lane (as in [`sort`]) is its own sorted copy, ties in input order.
        if src.len() > SORTED_CHECK_FROM && src.is_sorted() {
            dst.copy_from_slice(src);
            return true;
        }
        // SAFETY: the CPU has AVX-512F and the lengths are checked just above.
        return unsafe { K::sort_untied_into(src, dst) };
    }
    let _ = (src, dst);
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

/// Room for the comparators of a column network ([`columns`]): Batcher's network on 32
/// inputs has 191; [`unroll!`] twice over runs up to 256.
const MAX_COMPARATORS: usize = 256;

/// Batcher's odd-even merge sort on `n` inputs (`n` a power of two, at most 32): the pairs
/// `(a, b)`, `a < b`, in the order they run, and how many there are. Sorting the registers
/// `r[0 .. n]` lane by lane is putting `min` in `r[a]` and `max` in `r[b]` for each pair.
const fn columns(n: usize) -> ([(u8, u8); MAX_COMPARATORS], usize) {
    let mut out = [(0u8, 0u8); MAX_COMPARATORS];
    let mut len = 0;
    let mut p = 1;
    while p < n {
        let mut k = p;
        while k >= 1 {
            let mut j = k % p;
            while j + k < n {
                let mut i = 0;
                while i < k && i + j + k < n {
                    if (i + j) / (2 * p) == (i + j + k) / (2 * p) {
                        out[len] = ((i + j) as u8, (i + j + k) as u8);
                        len += 1;
                    }
                    i += 1;
                }
                j += 2 * k;
            }
            k /= 2;
        }
        p *= 2;
    }
    (out, len)
}

/// Runs `$body` with `$i` bound to each of `0 .. $n` (`$n` at most 32), written out, so that
/// every register index is a constant. Loops over the registers did not unroll at 32
/// registers, and the keys then lived on the stack (the network took three times as long).
macro_rules! unroll {
    ($n:expr, |$i:ident| $body:block) => {
        unroll!(@ $n, $i, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
            24 25 26 27 28 29 30 31)
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
    ($name:ident, $word:ty, $pad:expr, $lanes:literal, $mask:ty, $vec:ty, $idx:ty,
     $set1:ident, $mask_load:ident, $mask_store:ident, $min:ident, $max:ident,
     $mask_min:ident, $permute:ident, tied = |$tx:ident| $tied:expr) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use std::arch::x86_64::*;

            use super::{columns, lanes_with, NET_MAX};

            /// Keys a register holds.
            const L: usize = $lanes;

            /// The most registers a lane takes.
            const MAX_R: usize = NET_MAX / L;

            /// Sorts `v` (`v.len() <= NET_MAX`) ascending in registers.
            ///
            /// # Safety
            /// The CPU must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn sort(v: &mut [$word]) {
                let p = v.as_mut_ptr();
                // SAFETY: `p` is valid for reads and writes of `v.len()` keys, and every load
                // comes before the first store.
                let sorted = unsafe { by_length::<false>(p, p, v.len()) };
                debug_assert!(sorted, "no ties to find");
            }

            /// [`super::NetSort::sort_untied_into`].
            ///
            /// # Safety
            /// The CPU must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn sort_untied_into(src: &[$word], dst: &mut [$word]) -> bool {
                assert_eq!(src.len(), dst.len(), "a lane and its sorted copy");
                // SAFETY: `src` is valid for reads and `dst` (which it cannot overlap, being
                // borrowed mutably) for writes of `src.len()` keys.
                unsafe { by_length::<true>(src.as_ptr(), dst.as_mut_ptr(), src.len()) }
            }

            /// Sorts the `n <= NET_MAX` keys at `src` into `dst`, in as few registers as hold
            /// them (a power of two); when `UNTIED`, returns `false` before any store if one
            /// is a tie ([`tied`]).
            ///
            /// # Safety
            /// `src` must be valid for reads and `dst` for writes of `n` keys, and the CPU
            /// must have AVX-512F.
            #[target_feature(enable = "avx512f")]
            unsafe fn by_length<const UNTIED: bool>(
                src: *const $word,
                dst: *mut $word,
                n: usize,
            ) -> bool {
                assert!(n <= NET_MAX, "the lane fits in the registers");
                // SAFETY (every arm): the caller's contract, and `n <= L R` for the `R` of
                // the arm (the powers of two up to `MAX_R`, `MAX_R L == NET_MAX`).
                unsafe {
                    match n.div_ceil(L).next_power_of_two() {
                        1 => direct::<1, UNTIED>(src, dst, n),
                        2 => direct::<2, UNTIED>(src, dst, n),
                        4 => direct::<4, UNTIED>(src, dst, n),
                        8 => direct::<8, UNTIED>(src, dst, n),
                        16 if MAX_R > 16 => direct::<16, UNTIED>(src, dst, n),
                        _ => direct::<MAX_R, UNTIED>(src, dst, n),
                    }
                }
            }

            /// The lanes of `x` that hold a tie (for the floats: zero or NaN).
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn tied($tx: $vec) -> $mask {
                $tied
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

            /// Sorts the `n <= L * R` keys at `src` into `dst` in `R` registers loaded under
            /// masks, the lanes past the end holding the padding key (which sorts last), and
            /// stored under the same masks. Key `g` of the lane is lane `g % L` of register
            /// `g / L`. When `UNTIED`, returns `false` before the network if a key is a tie.
            ///
            /// Two phases (docs/performance.md, "Sorting network"):
            /// 1. [`sort_columns`]: every lane position ("column") is sorted across the `R`
            ///    registers, by whole-register `min`/`max` only.
            /// 2. [`merge`] at widths `S = 2, 4, .., L`: each pair of neighbouring sorted
            ///    blocks of `S / 2` columns merges into one block of `S` columns, read row by
            ///    row (key `r * S + c` of a block is its column `c` in register `r`). After
            ///    width `L` the registers hold the sorted keys in order.
            ///
            /// # Safety
            /// As for [`by_length`], and `n <= L * R`.
            #[target_feature(enable = "avx512f")]
            unsafe fn direct<const R: usize, const UNTIED: bool>(
                src: *const $word,
                dst: *mut $word,
                n: usize,
            ) -> bool {
                debug_assert!(n <= L * R);
                let padding = $set1($pad as _);
                let mut r = [padding; R];
                let mut ties: $mask = 0;
                unroll!(R, |i| {
                    if i * L < n {
                        // SAFETY: the lanes the mask selects are the keys `i L ..
                        // min(n, (i + 1) L)` at `src`; a masked load or store touches no other
                        // lane's memory (and faults on none).
                        r[i] = unsafe {
                            $mask_load(padding, low_lanes(n - i * L), src.add(i * L).cast())
                        };
                        if UNTIED {
                            ties |= tied(r[i]);
                        }
                    }
                });
                if ties != 0 {
                    return false;
                }
                // Written out, not a loop of calls: the registers stay in registers only
                // while every index is a constant.
                sort_columns::<R>(&mut r);
                merge::<R, 2>(&mut r);
                merge::<R, 4>(&mut r);
                merge::<R, 8>(&mut r);
                merge::<R, 16>(&mut r);
                unroll!(R, |i| {
                    if i * L < n {
                        // SAFETY: as for the loads, at `dst`.
                        unsafe { $mask_store(dst.add(i * L).cast(), low_lanes(n - i * L), r[i]) };
                    }
                });
                true
            }

            /// Puts the smaller keys of registers `a` and `b` in `a`, lane by lane, and the
            /// larger in `b`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn exchange<const R: usize>(r: &mut [$vec; R], a: usize, b: usize) {
                let (x, y) = (r[a], r[b]);
                r[a] = $min(x, y);
                r[b] = $max(x, y);
            }

            /// Phase 1: Batcher's network ([`columns`]) over the `R` registers.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn sort_columns<const R: usize>(r: &mut [$vec; R]) {
                const { assert!(R <= 32) };
                let (pairs, len) = const { columns(R) };
                // 8 x 32 indices cover the 191 comparators of 32 inputs.
                unroll!(8, |hi| {
                    unroll!(32, |lo| {
                        let k = hi * 32 + lo;
                        if k < len {
                            let (a, b) = pairs[k];
                            exchange(r, a as usize, b as usize);
                        }
                    });
                });
            }

            /// Phase 2 at block width `S` (nothing when `S > L`). The blocks of `S / 2`
            /// columns pair up (`X` the lower, `Y` the upper), and each pair merges as a
            /// bitonic sequence: `X` followed by `Y` read backwards. Reading `Y` backwards is
            /// reversing its register order and, inside each register, its columns: the
            /// register exchanges of [`cross`] pair register `i` with register `R - 1 - i`
            /// after reversing the columns of each block in the second, and each half then
            /// holds a bitonic sequence again, down to single registers; [`within`] finishes
            /// inside each register.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn merge<const R: usize, const S: usize>(r: &mut [$vec; R]) {
                if S > L {
                    return;
                }
                cross::<R, S, 32>(r);
                cross::<R, S, 16>(r);
                cross::<R, S, 8>(r);
                cross::<R, S, 4>(r);
                cross::<R, S, 2>(r);
                within::<R, S>(r);
            }

            /// One level of [`merge`]'s register exchanges: in each group of `G` registers
            /// (nothing when `G > R`), reverse the columns within every `S`-block of the
            /// upper `G / 2` registers, then exchange register `i` of the group with
            /// register `G - 1 - i`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn cross<const R: usize, const S: usize, const G: usize>(r: &mut [$vec; R]) {
                if G > R {
                    return;
                }
                let reverse = partners(S - 1);
                unroll!(R, |a| {
                    if a % G >= G / 2 {
                        r[a] = $permute(reverse, r[a]);
                    }
                });
                unroll!(R, |a| {
                    if a % G < G / 2 {
                        exchange(r, a, a - a % G + G - 1 - a % G);
                    }
                });
            }

            /// The layers of [`merge`] inside each register, at column distances `S / 2,
            /// .., 1` within each `S`-block: the first pairs column `c` with `S - 1 - c` (the
            /// block reversed), the others `c` with `c ^ D` (`D` the distance). The lower
            /// column of each pair keeps the smaller key.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn within<const R: usize, const S: usize>(r: &mut [$vec; R]) {
                unroll!(R, |a| {
                    let mut x = r[a];
                    x = layer(x, S - 1, S / 2);
                    if 4 < S / 2 {
                        x = layer(x, 4, 4);
                    }
                    if 2 < S / 2 {
                        x = layer(x, 2, 2);
                    }
                    if 1 < S / 2 {
                        x = layer(x, 1, 1);
                    }
                    r[a] = x;
                });
            }

            /// One layer of [`within`]: column `c` meets column `c ^ flip`, and keeps the
            /// smaller key when `c & step == 0`.
            #[inline]
            #[target_feature(enable = "avx512f")]
            fn layer(x: $vec, flip: usize, step: usize) -> $vec {
                let other = $permute(partners(flip), x);
                let keep_min = !lanes_with(step, L) as $mask;
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
    _mm512_set1_epi64,
    _mm512_mask_loadu_epi64,
    _mm512_mask_storeu_epi64,
    _mm512_min_epu64,
    _mm512_max_epu64,
    _mm512_mask_min_epu64,
    _mm512_permutexvar_epi64,
    tied = |_x| 0
);
network_module!(
    narrow,
    u32,
    u32::MAX,
    16,
    __mmask16,
    __m512i,
    u32,
    _mm512_set1_epi32,
    _mm512_mask_loadu_epi32,
    _mm512_mask_storeu_epi32,
    _mm512_min_epu32,
    _mm512_max_epu32,
    _mm512_mask_min_epu32,
    _mm512_permutexvar_epi32,
    tied = |_x| 0
);
network_module!(
    wide_i64,
    i64,
    i64::MAX,
    8,
    __mmask8,
    __m512i,
    u64,
    _mm512_set1_epi64,
    _mm512_mask_loadu_epi64,
    _mm512_mask_storeu_epi64,
    _mm512_min_epi64,
    _mm512_max_epi64,
    _mm512_mask_min_epi64,
    _mm512_permutexvar_epi64,
    tied = |_x| 0
);
network_module!(
    narrow_i32,
    i32,
    i32::MAX,
    16,
    __mmask16,
    __m512i,
    u32,
    _mm512_set1_epi32,
    _mm512_mask_loadu_epi32,
    _mm512_mask_storeu_epi32,
    _mm512_min_epi32,
    _mm512_max_epi32,
    _mm512_mask_min_epi32,
    _mm512_permutexvar_epi32,
    tied = |_x| 0
);
network_module!(
    wide_f64,
    f64,
    f64::INFINITY,
    8,
    __mmask8,
    __m512d,
    u64,
    _mm512_set1_pd,
    _mm512_mask_loadu_pd,
    _mm512_mask_storeu_pd,
    _mm512_min_pd,
    _mm512_max_pd,
    _mm512_mask_min_pd,
    _mm512_permutexvar_pd,
    tied = |x| _mm512_cmp_pd_mask::<_CMP_EQ_UQ>(x, _mm512_setzero_pd())
);
network_module!(
    narrow_f32,
    f32,
    f32::INFINITY,
    16,
    __mmask16,
    __m512,
    u32,
    _mm512_set1_ps,
    _mm512_mask_loadu_ps,
    _mm512_mask_storeu_ps,
    _mm512_min_ps,
    _mm512_max_ps,
    _mm512_mask_min_ps,
    _mm512_permutexvar_ps,
    tied = |x| _mm512_cmp_ps_mask::<_CMP_EQ_UQ>(x, _mm512_setzero_ps())
);

#[cfg(test)]
mod tests;
