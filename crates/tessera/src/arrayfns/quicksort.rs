//! A quicksort whose partitions run in AVX-512 registers: the sort of lanes longer than the
//! sorting network takes ([`NET_MAX`]; [`sort`] hands shorter ones to the network), behind
//! `sort`: `f64` and `f32` lanes by value, the
//! other dtypes by their order-preserving `u64` or `u32` keys (docs/performance.md,
//! "Vectorised quicksort").
//!
//! A float lane holds no NaN (the caller turns them into infinities and puts them back, as for the
//! network). Each step picks the median of a sample as the pivot and partitions in place: a
//! register's elements below the pivot go to the front of the lane and the others to its back,
//! each group compressed in a register and stored under a mask, and the loop reads blocks of
//! registers from whichever end has less free room, so that the writes never reach an element
//! not yet read (the registers read first from both ends keep that room). Slices of at most [`NET_MAX`] elements go to the network. A pivot that is the
//! smallest element leaves the front empty: the lane is partitioned again by `<= pivot`, and the
//! front, all equal to the pivot, is done (so equal keys cannot stall it). A recursion deeper
//! than twice the lane's bit length falls back to the standard library's sort (an adversarial
//! input cannot make it quadratic).

use std::cmp::Ordering;

use super::network::{self, NetSort, NET_MAX};

/// Samples the pivot is the median of, for long slices (sorted in the network).
const SAMPLES: usize = 64;

/// Samples for slices shorter than [`SAMPLES_FROM`].
const FEW_SAMPLES: usize = 16;

/// The slice length from which [`SAMPLES`] are drawn.
const SAMPLES_FROM: usize = 16 * 1024;

/// The slice length from which the two sides of a partition sort on rayon's pool (when the
/// caller asks for it): below it a side sorts in well under the cost of a hand-off.
const PAR_MIN: usize = 1 << 16;

/// Registers the partition reads from one end at a time (8 or 16 of the 32; the partition
/// has fewer branches to mispredict and the loads of a block go out together).
const UNROLL: usize = 8;

/// A type the quicksort partitions in registers: the floats `f64` (8 to a register) and `f32`
/// (16), and the integer keys `u64` and `u32` (`radix.rs`'s order-preserving keys of the
/// other dtypes), compared unsigned.
pub(crate) trait QuickSort: NetSort + Send {
    /// Moves the elements of `v` below `pivot` (`<= pivot` when `OR_EQUAL`) to the front of
    /// `v` and the others after them, each group in no particular order; returns how many
    /// went to the front.
    ///
    /// # Safety
    /// The CPU must have AVX-512F (and `popcnt`, which every AVX-512 CPU has), and
    /// `v.len() >= 2 * 16` (two registers of either type).
    #[cfg(target_arch = "x86_64")]
    unsafe fn partition<const OR_EQUAL: bool>(v: &mut [Self], pivot: Self) -> usize;
}

/// True when [`sort`] runs here: the CPU has AVX-512.
#[inline]
pub(crate) fn available() -> bool {
    crate::kernels::simd::has_avx512()
}

/// Sorts `v` (no NaNs) ascending: in the network up to [`NET_MAX`] elements, by partitions
/// above (the two sides of large partitions in parallel when `par`). `false`, with `v`
/// untouched, where the CPU has no AVX-512 ([`available`]).
pub(crate) fn sort<F: QuickSort>(v: &mut [F], par: bool) -> bool {
    if v.len() <= NET_MAX {
        return network::sort(v);
    }
    if !available() {
        return false;
    }
    if v.is_sorted() {
        return true;
    }
    let depth = 2 * (usize::BITS - v.len().leading_zeros());
    steps(v, depth, par);
    true
}

/// Sorts `v` (AVX-512 checked at the top) by partitioning, at most `depth` levels deep.
fn steps<F: QuickSort>(v: &mut [F], depth: u32, par: bool) {
    let n = v.len();
    if n <= NET_MAX {
        let sorted = network::sort(v);
        debug_assert!(sorted, "the CPU has AVX-512 (checked by `sort`)");
        return;
    }
    if depth == 0 {
        // No NaNs: the float order is total here (`sort::nan_last` is not imported, since
        // `sort` reaches this module through `radix`: the module graph stays acyclic).
        v.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
        return;
    }
    let pivot = pivot_of(v);
    let (front, back) = split(v, pivot);
    sides(front, back, depth - 1, par);
}

/// Sorts the two sides of a partition, at most `depth` levels deep: on rayon's pool when
/// `par` and they are long.
fn sides<F: QuickSort>(front: &mut [F], back: &mut [F], depth: u32, par: bool) {
    if par && front.len() + back.len() >= PAR_MIN {
        rayon::join(|| steps(front, depth, true), || steps(back, depth, true));
    } else {
        steps(front, depth, false);
        steps(back, depth, false);
    }
}

/// Sorts `v` whose first `below` elements are below a pivot and the rest not (the first
/// partition done elsewhere: `partition_copy.rs`), as [`sort`] goes on after its first
/// partition; `below == 0` sorts `v` whole. The CPU has AVX-512 (the caller checked), and
/// `v.len() > NET_MAX`.
pub(crate) fn sort_sides<F: QuickSort>(v: &mut [F], below: usize, par: bool) {
    debug_assert!(v.len() > NET_MAX, "a lane the first partition was for");
    let depth = 2 * (usize::BITS - v.len().leading_zeros()) - 1;
    let (front, back) = v.split_at_mut(below);
    sides(front, back, depth, par);
}

/// Partitions `v` around `pivot` (an element of `v`) into the two slices left to sort: below
/// the pivot and the rest, or, when nothing is below it, the elements above it alone (the
/// ones equal to it are in place).
fn split<F: QuickSort>(v: &mut [F], pivot: F) -> (&mut [F], &mut [F]) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `steps` runs only when `sort` saw AVX-512, and `v.len() > NET_MAX >= 32`.
        let below = unsafe { F::partition::<false>(v, pivot) };
        if below > 0 {
            return v.split_at_mut(below);
        }
        // SAFETY: as above.
        let equal = unsafe { F::partition::<true>(v, pivot) };
        let (_, above) = v.split_at_mut(equal);
        (&mut [], above)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = pivot;
        unreachable!(
            "`takes` is false off x86-64, so `steps` never runs: {}",
            v.len()
        )
    }
}

/// The median of evenly spaced samples of `v` (`v.len() > NET_MAX`; the CPU has AVX-512, as
/// for [`steps`]).
pub(crate) fn pivot_of<F: QuickSort>(v: &[F]) -> F {
    let count = if v.len() >= SAMPLES_FROM {
        SAMPLES
    } else {
        FEW_SAMPLES
    };
    let step = v.len() / count;
    let mut sample = [v[0]; SAMPLES];
    for (k, s) in sample[..count].iter_mut().enumerate() {
        *s = v[k * step + step / 2];
    }
    let sample = &mut sample[..count];
    let sorted = network::sort(sample);
    debug_assert!(sorted, "the CPU has AVX-512 (checked by `sort`)");
    sample[count / 2]
}

/// Implements [`QuickSort`] for a type by its AVX-512 intrinsics: `$ge` and `$gt` are the
/// comparison predicates of `$cmp` for `>=` and `>` (ordered, for floats; unsigned, for the
/// integer keys), `$set1` and `$load` take the element type itself.
macro_rules! partition_in_registers {
    (
        $t:ty,
        $lanes:expr,
        $mask:ty,
        $set1:path,
        $load:path,
        $cmp:ident,
        $ge:ident,
        $gt:ident,
        $compress:ident,
        $store:ident
    ) => {
        impl QuickSort for $t {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn partition<const OR_EQUAL: bool>(v: &mut [$t], pivot: $t) -> usize {
                /// The partition reading `U` registers at a time from either end.
                ///
                /// # Safety
                /// AVX-512F and `popcnt`, and `v.len() >= 2 U L`.
                #[target_feature(enable = "avx512f,popcnt")]
                unsafe fn by<const OR_EQUAL: bool, const U: usize>(
                    v: &mut [$t],
                    pivot: $t,
                ) -> usize {
                    use std::arch::x86_64::*;
                    const L: usize = $lanes;
                    let n = v.len();
                    assert!(n >= 2 * U * L, "a partition reads 2 U registers first");
                    let p = v.as_mut_ptr();
                    let piv = $set1(pivot);
                    // Every read and write below is within `v`: reads at `p + i` for
                    // `i + L <= n` (loads of `L` elements), writes of `k` compressed elements
                    // under a mask at `p + s` into slots `[s, s + k)` already read (the room
                    // kept at each end).
                    // SAFETY (of this block): the invariants just stated.
                    unsafe {
                        // Next unread element from the front; end of the unread ones at the
                        // back.
                        let (mut left, mut right) = (U * L, n - U * L);
                        // Next free slot at the front; end of the free slots at the back.
                        let (mut front, mut back) = (0usize, n);
                        // The registers read first: `U L` free slots at each end.
                        let first: [_; U] = std::array::from_fn(|r| $load(p.add(r * L)));
                        let last: [_; U] = std::array::from_fn(|r| $load(p.add(right + r * L)));
                        // The mask of the lowest `k` lanes (`k <= L`).
                        let low = |k: u32| (((1u32 << k) - 1) as $mask);
                        // Writes the lanes `take` of `x`: those going back before `back`,
                        // the others at `front`.
                        macro_rules! put {
                            ($x:expr, $take:expr) => {{
                                let (x, take): (_, $mask) = ($x, $take);
                                let up = if OR_EQUAL {
                                    $cmp::<$gt>(x, piv)
                                } else {
                                    $cmp::<$ge>(x, piv)
                                } & take;
                                let down = !up & take;
                                // Compressed in registers, then stored under a mask: the
                                // compress-store to memory is microcoded on AMD's Zen 4.
                                let (nd, nu) = (down.count_ones(), up.count_ones());
                                $store(p.add(front).cast(), low(nd), $compress(down, x));
                                front += nd as usize;
                                back -= nu as usize;
                                $store(p.add(back).cast(), low(nu), $compress(up, x));
                            }};
                        }
                        // The elements past a whole number of registers, read at the front
                        // (`left + L <= n`): fewer than `L`, so they fit either end's room.
                        let rem = (n - 2 * U * L) % L;
                        if rem > 0 {
                            let x = $load(p.add(left));
                            left += rem;
                            put!(x, low(rem as u32));
                        }
                        // The room at both ends totals `2 U L`. Single registers until
                        // the rest is a whole number of `U`-register blocks: reading from
                        // the end with less room leaves at least `L` at each.
                        // (The work in each arm of the branch, as for the blocks below.)
                        while (right - left) % (U * L) != 0 {
                            if back - right < left - front {
                                right -= L;
                                put!($load(p.add(right)), <$mask>::MAX);
                            } else {
                                left += L;
                                put!($load(p.add(left - L)), <$mask>::MAX);
                            }
                        }
                        // Blocks of `U` registers from the end with less room, which leaves
                        // at least `U L` at each. The choice is a branch with the block's
                        // work in each arm: chosen by a select (as LLVM did with one load
                        // in the arms), the next loads' address waited on the last block's
                        // counts, and the loop ran at memory latency.
                        macro_rules! block {
                            ($at:expr) => {{
                                let at = $at;
                                let block: [_; U] =
                                    std::array::from_fn(|r| $load(p.add(at + r * L)));
                                for x in block {
                                    put!(x, <$mask>::MAX);
                                }
                            }};
                        }
                        while left < right {
                            if back - right < left - front {
                                right -= U * L;
                                block!(right);
                            } else {
                                left += U * L;
                                block!(left - U * L);
                            }
                        }
                        // Everything is read: the `2 U L` free slots are `[front, back)`.
                        for x in first.into_iter().chain(last) {
                            put!(x, <$mask>::MAX);
                        }
                        debug_assert_eq!(front, back);
                        front
                    }
                }
                // SAFETY: the caller's contract, and the length is checked for each form.
                unsafe {
                    if v.len() >= 2 * UNROLL * $lanes {
                        by::<OR_EQUAL, UNROLL>(v, pivot)
                    } else {
                        by::<OR_EQUAL, 1>(v, pivot)
                    }
                }
            }
        }
    };
}

partition_in_registers!(
    f64,
    8,
    u8,
    _mm512_set1_pd,
    _mm512_loadu_pd,
    _mm512_cmp_pd_mask,
    _CMP_GE_OQ,
    _CMP_GT_OQ,
    _mm512_maskz_compress_pd,
    _mm512_mask_storeu_pd
);
partition_in_registers!(
    f32,
    16,
    u16,
    _mm512_set1_ps,
    _mm512_loadu_ps,
    _mm512_cmp_ps_mask,
    _CMP_GE_OQ,
    _CMP_GT_OQ,
    _mm512_maskz_compress_ps,
    _mm512_mask_storeu_ps
);
partition_in_registers!(
    u64,
    8,
    u8,
    keys::set1_u64,
    keys::load_u64,
    _mm512_cmp_epu64_mask,
    _MM_CMPINT_NLT,
    _MM_CMPINT_NLE,
    _mm512_maskz_compress_epi64,
    _mm512_mask_storeu_epi64
);
partition_in_registers!(
    u32,
    16,
    u16,
    keys::set1_u32,
    keys::load_u32,
    _mm512_cmp_epu32_mask,
    _MM_CMPINT_NLT,
    _MM_CMPINT_NLE,
    _mm512_maskz_compress_epi32,
    _mm512_mask_storeu_epi32
);

/// Broadcasts and loads of the unsigned integer keys, whose AVX-512 intrinsics take signed
/// integers (the same bits).
#[cfg(target_arch = "x86_64")]
mod keys {
    use std::arch::x86_64::*;

    /// `k` in every lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn set1_u64(k: u64) -> __m512i {
        _mm512_set1_epi64(k as i64)
    }

    /// `k` in every lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) fn set1_u32(k: u32) -> __m512i {
        _mm512_set1_epi32(k as i32)
    }

    /// Eight keys from `p` (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for reading eight `u64`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn load_u64(p: *const u64) -> __m512i {
        // SAFETY: the caller's contract.
        unsafe { _mm512_loadu_epi64(p.cast()) }
    }

    /// Sixteen keys from `p` (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for reading sixteen `u32`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn load_u32(p: *const u32) -> __m512i {
        // SAFETY: the caller's contract.
        unsafe { _mm512_loadu_epi32(p.cast()) }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the tests need no seed crate.
    pub(in crate::arrayfns) fn draws(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    /// Lengths around the register and network sizes, and long ones.
    fn lengths() -> Vec<usize> {
        let mut lens: Vec<usize> = (NET_MAX - 2..NET_MAX + 40).collect();
        lens.extend([1000, 4099, 20_000, 100_003]);
        lens
    }

    /// Whether this CPU runs the quicksort; says so on stderr when it does not, so that a
    /// skipped test is visible.
    fn runs_here() -> bool {
        let here = available();
        if !here {
            eprintln!("no AVX-512 here: the quicksort and its partition are not exercised");
        }
        here
    }

    /// `sort` against the standard library's on lengths around the register and network
    /// sizes, with few and many distinct values, sorted and reversed input.
    #[test]
    fn sorts_as_the_standard_library() {
        if !runs_here() {
            return;
        }
        for (i, n) in lengths().into_iter().enumerate() {
            let x = draws(n, i as u64 + 1);
            let cases = [
                x.clone(),
                x.iter().map(|v| (v * 8.0).round()).collect(),
                vec![1.5; n],
                (0..n).map(|k| k as f64).collect(),
                (0..n).rev().map(|k| k as f64).collect(),
                x.iter().map(|v| if *v < 0.3 { 0.0 } else { *v }).collect(),
            ];
            for c in cases {
                let mut want = c.clone();
                want.sort_by(f64::total_cmp);
                let mut got = c.clone();
                assert!(sort(&mut got, n > 20_000), "n = {n}: the sort declined");
                assert_eq!(got, want, "f64, n = {n}");
                let mut want32: Vec<f32> = c.iter().map(|&v| v as f32).collect();
                let mut got32 = want32.clone();
                want32.sort_by(f32::total_cmp);
                assert!(sort(&mut got32, false));
                assert_eq!(got32, want32, "f32, n = {n}");
            }
        }
    }

    /// The recursion limit's fallback (`std`'s sort) and the split of a slice whose pivot is
    /// its minimum (many equal values) give sorted slices.
    #[test]
    fn depth_limit_and_repeated_minimum() {
        if !runs_here() {
            return;
        }
        for depth in [0, 1, 3] {
            let mut v = draws(5000, 7 + depth as u64);
            let mut want = v.clone();
            want.sort_by(f64::total_cmp);
            steps(&mut v, depth, false);
            assert_eq!(v, want, "depth {depth}");
        }
        // Nine in ten elements are the minimum: the median sample is the minimum.
        let mut v: Vec<f64> = draws(3001, 3)
            .iter()
            .map(|&x| if x < 0.4 { -1.0 } else { x })
            .collect();
        let mut want = v.clone();
        want.sort_by(f64::total_cmp);
        assert!(sort(&mut v, false));
        assert_eq!(v, want);
    }

    /// The partition itself, for both types and both comparisons: the front holds exactly
    /// the elements below the pivot (or not above it), the back the others, and the slice is
    /// a permutation of the input bit for bit (a `-0.0` must not become `0.0`). Lengths cover
    /// both the one-register and the block form and every remainder; values include the
    /// infinities and both zeros; pivots are the minimum, the maximum and a middle element.
    fn check_partition<F: QuickSort + std::fmt::Debug>(x: &[F], bits: impl Fn(&F) -> u64) {
        let lo = *x.iter().min_by(|a, b| a.partial_cmp(b).unwrap()).unwrap();
        let hi = *x.iter().max_by(|a, b| a.partial_cmp(b).unwrap()).unwrap();
        for pivot in [lo, hi, x[x.len() / 2]] {
            for or_equal in [false, true] {
                let mut v = x.to_vec();
                // SAFETY: the callers check AVX-512, and every length is at least 32.
                let k = unsafe {
                    if or_equal {
                        F::partition::<true>(&mut v, pivot)
                    } else {
                        F::partition::<false>(&mut v, pivot)
                    }
                };
                let front = |a: &F| if or_equal { *a <= pivot } else { *a < pivot };
                let n = x.len();
                assert_eq!(k, x.iter().filter(|a| front(a)).count(), "n = {n}");
                assert!(v[..k].iter().all(front), "n = {n}, pivot {pivot:?}");
                assert!(!v[k..].iter().any(front), "n = {n}, pivot {pivot:?}");
                let mut got: Vec<u64> = v.iter().map(&bits).collect();
                let mut want: Vec<u64> = x.iter().map(&bits).collect();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "n = {n}: not a permutation");
            }
        }
    }

    /// The integer keys (`u64`, `u32`), compared unsigned: keys with the top bit set (half of
    /// the bit patterns of random floats) must sort after the others, which a signed
    /// comparison would get wrong. Sort against `sort_unstable`, and the partition checked
    /// as for the floats.
    #[test]
    fn integer_keys_sort_and_partition_unsigned() {
        if !runs_here() {
            return;
        }
        for (i, n) in lengths().into_iter().enumerate() {
            let x = draws(n, i as u64 + 101);
            let cases: [Vec<u64>; 4] = [
                x.iter().map(|v| v.to_bits()).collect(),
                x.iter()
                    .map(|v| ((v + 0.5) * 8.0) as u64 | 1 << 63)
                    .collect(),
                vec![u64::MAX; n],
                (0..n as u64).rev().collect(),
            ];
            for c in cases {
                let mut want = c.clone();
                want.sort_unstable();
                let mut got = c.clone();
                assert!(sort(&mut got, n > 20_000), "n = {n}");
                assert_eq!(got, want, "u64, n = {n}");
                let c32: Vec<u32> = c.iter().map(|&k| (k >> 32) as u32 ^ k as u32).collect();
                let mut want32 = c32.clone();
                want32.sort_unstable();
                let mut got32 = c32;
                assert!(sort(&mut got32, false));
                assert_eq!(got32, want32, "u32, n = {n}");
            }
        }
        for n in (32..300).chain([1023, 1024, 1025, 4097]) {
            let keys: Vec<u64> = draws(n, n as u64 + 7).iter().map(|v| v.to_bits()).collect();
            check_partition(&keys, |a: &u64| *a);
            let few: Vec<u32> = keys
                .iter()
                .map(|&k| (k >> 61) as u32 * 0x2000_0000)
                .collect();
            check_partition(&few, |a: &u32| *a as u64);
        }
    }

    #[test]
    fn partition_splits_at_the_pivot() {
        if !runs_here() {
            return;
        }
        let specials = [f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0];
        let mut lens: Vec<usize> = (32..300).collect();
        lens.extend([1023, 1024, 1025, 4097]);
        for &n in &lens {
            let r = draws(n, n as u64);
            let cases: [Vec<f64>; 3] = [
                r.iter().map(|v| (v * 16.0).round()).collect(),
                r.iter()
                    .map(|v| specials[((v + 0.5) * 5.0) as usize % 5])
                    .collect(),
                r.iter()
                    .enumerate()
                    .map(|(i, &v)| if i % 3 == 0 { specials[i % 5] } else { v })
                    .collect(),
            ];
            for x in &cases {
                check_partition(x, |a: &f64| a.to_bits());
                let x32: Vec<f32> = x.iter().map(|&a| a as f32).collect();
                check_partition(&x32, |a: &f32| a.to_bits() as u64);
            }
        }
    }
}
