//! The first partition of a float sort that makes a copy, done from the input into the output
//! (design A2, docs/performance.md "A sort's first partition writes the copy"): `sort`
//! returns a new array, and copying the input first and then partitioning the copy in place
//! passes over a long lane twice where this passes once. The same pass looks for the
//! elements a sort by value must put back in input order (zeros, whose signs it would mix,
//! and NaNs, which it cannot compare): where it finds one, the caller sorts the ordinary way.

use std::any::TypeId;

use super::quicksort::{self, QuickSort};
use crate::dtype::Element;

/// Lanes from this length take [`sort_from`] (a shorter one is in cache after its copy, so
/// the second pass costs little).
pub(crate) const SORT_FROM_MIN: usize = 1 << 16;

/// A float the copying partition moves in AVX-512 registers: `f64` (8 to a register) and
/// `f32` (16).
pub(crate) trait PartitionCopy: QuickSort {
    /// Writes the elements of `src` below `pivot` to the front of `dst` and the others to its
    /// back (each group in no particular order) and returns how many went to the front; `None`
    /// at the first zero or NaN of `src` (`==` unordered with zero is true for both), with
    /// `dst` partly written.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and `popcnt`, and `dst.len() == src.len()`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn partition_copy(src: &[Self], dst: &mut [Self], pivot: Self) -> Option<usize>;
}

/// Sorts `src` ascending into `dst` (of the same length): one copying partition, then the
/// quicksort on both sides in place (in parallel when `par`). `false`, with `dst` in no
/// particular state, where the CPU has no AVX-512, `src` is shorter than [`SORT_FROM_MIN`],
/// already sorted (the caller's copy and check are the faster way then), or holds a zero or
/// a NaN.
pub(crate) fn sort_from<F: PartitionCopy>(src: &[F], dst: &mut [F], par: bool) -> bool {
    assert_eq!(
        src.len(),
        dst.len(),
        "a sort copies into a lane of its length"
    );
    if src.len() < SORT_FROM_MIN || !quicksort::available() || src.is_sorted() {
        return false;
    }
    let pivot = quicksort::pivot_of(src);
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `available` saw AVX-512 (with `popcnt`), and the lengths are equal.
        let Some(below) = (unsafe { F::partition_copy(src, dst, pivot) }) else {
            return false;
        };
        quicksort::sort_sides(dst, below, par);
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = pivot;
        unreachable!("`available` is false off x86-64: {}", dst.len())
    }
}

/// [`sort_from`] for a lane of any element type: ascending `f64` and `f32` lanes take it;
/// other types and descending sorts get `false`, with `dst` untouched.
pub(crate) fn sort_copy<T: Element>(src: &[T], dst: &mut [T], descending: bool, par: bool) -> bool {
    if descending || src.len() != dst.len() {
        return false;
    }
    let (s, d, n) = (src.as_ptr(), dst.as_mut_ptr(), src.len());
    let t = TypeId::of::<T>();
    // SAFETY (both arms): `T` is the type named (same `TypeId`), so `src` and `dst` are slices
    // of it, reborrowed for the call (`dst` mutably, as the caller lent it).
    if t == TypeId::of::<f64>() {
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(s.cast::<f64>(), n),
                std::slice::from_raw_parts_mut(d.cast::<f64>(), n),
            )
        };
        return sort_from(s, d, par);
    }
    if t == TypeId::of::<f32>() {
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(s.cast::<f32>(), n),
                std::slice::from_raw_parts_mut(d.cast::<f32>(), n),
            )
        };
        return sort_from(s, d, par);
    }
    false
}

/// Implements [`PartitionCopy`] for a float type by its AVX-512 intrinsics.
macro_rules! partition_copy {
    ($t:ty, $lanes:expr, $mask:ty, $set1:ident, $loadz:ident, $cmp:ident, $compress:ident, $store:ident) => {
        impl PartitionCopy for $t {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,popcnt")]
            unsafe fn partition_copy(src: &[$t], dst: &mut [$t], pivot: $t) -> Option<usize> {
                use std::arch::x86_64::*;
                const L: usize = $lanes;
                let n = src.len();
                assert_eq!(n, dst.len(), "the caller's contract");
                let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
                let (piv, zero) = ($set1(pivot), $set1(0.0));
                // Next free slot at the front of `dst`; end of the free slots at its back.
                let (mut front, mut back) = (0usize, n);
                // The mask of the lowest `k` lanes (`k <= L`).
                let low = |k: usize| (((1u32 << k) - 1) as $mask);
                let mut i = 0;
                while i < n {
                    let take = if n - i >= L { <$mask>::MAX } else { low(n - i) };
                    // SAFETY: the masked load reads only the lanes of `take`, `src[i..n]` (a
                    // masked-off lane is not accessed and cannot fault).
                    let x = unsafe { $loadz(take, s.add(i)) };
                    // A zero or a NaN ends the pass: the caller sorts the ordinary way (a
                    // predictable branch, as the lanes that hold one are few).
                    if $cmp::<_CMP_EQ_UQ>(x, zero) & take != 0 {
                        return None;
                    }
                    let up = $cmp::<_CMP_GE_OQ>(x, piv) & take;
                    let down = !up & take;
                    let (nd, nu) = (down.count_ones() as usize, up.count_ones() as usize);
                    // SAFETY: `front + nd + nu <= back`: the lanes placed so far and these
                    // are at most `n` in all, so both masked stores stay within `dst`, in
                    // slots not yet written.
                    unsafe {
                        $store(d.add(front), low(nd), $compress(down, x));
                        back -= nu;
                        $store(d.add(back), low(nu), $compress(up, x));
                    }
                    front += nd;
                    i += L;
                }
                debug_assert_eq!(front, back);
                Some(front)
            }
        }
    };
}

partition_copy!(
    f64,
    8,
    u8,
    _mm512_set1_pd,
    _mm512_maskz_loadu_pd,
    _mm512_cmp_pd_mask,
    _mm512_maskz_compress_pd,
    _mm512_mask_storeu_pd
);
partition_copy!(
    f32,
    16,
    u16,
    _mm512_set1_ps,
    _mm512_maskz_loadu_ps,
    _mm512_cmp_ps_mask,
    _mm512_maskz_compress_ps,
    _mm512_mask_storeu_ps
);

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values of `quicksort`'s test generator in `[-0.5, 0.5)`, or `distinct` values (none
    /// of them zero) when given.
    fn draws(n: usize, seed: u64, distinct: Option<u64>) -> Vec<f64> {
        let v = quicksort::tests::draws(n, seed);
        match distinct {
            Some(k) => v
                .iter()
                .map(|x| ((x + 0.5) * k as f64).floor() + 0.5)
                .collect(),
            None => v,
        }
    }

    /// The copying sort against the standard library's, in both widths, at lengths around
    /// [`SORT_FROM_MIN`] and the register widths, with many and few distinct values.
    #[test]
    fn sorts_into_the_copy_as_the_standard_library() {
        if !quicksort::available() {
            eprintln!("no AVX-512 here: the copying partition is not exercised");
            return;
        }
        for n in [
            SORT_FROM_MIN,
            SORT_FROM_MIN + 1,
            SORT_FROM_MIN + 15,
            300_007,
        ] {
            for distinct in [None, Some(3), Some(1000)] {
                let src = draws(n, n as u64, distinct);
                let mut want = src.clone();
                want.sort_by(f64::total_cmp);
                for par in [false, true] {
                    let mut dst = vec![f64::NAN; n];
                    assert!(sort_from(&src, &mut dst, par), "n = {n}");
                    assert_eq!(dst, want, "f64, n = {n}, {distinct:?}");
                    let src32: Vec<f32> = src.iter().map(|&x| x as f32).collect();
                    let mut want32 = src32.clone();
                    want32.sort_by(f32::total_cmp);
                    let mut dst32 = vec![f32::NAN; n];
                    assert!(sort_from(&src32, &mut dst32, par), "n = {n}");
                    assert_eq!(dst32, want32, "f32, n = {n}, {distinct:?}");
                }
            }
        }
    }

    /// A zero or a NaN anywhere (the last element included, in the masked tail) sends the
    /// sort back to the caller; so do short and sorted lanes.
    #[test]
    fn declines_ties_short_and_sorted_lanes() {
        if !quicksort::available() {
            return;
        }
        let n = SORT_FROM_MIN + 3;
        for special in [0.0, -0.0, f64::NAN] {
            for at in [0, n / 2, n - 1] {
                let mut src = draws(n, 7, None);
                src[at] = special;
                let mut dst = vec![0.0; n];
                assert!(!sort_from(&src, &mut dst, false), "{special} at {at}");
            }
        }
        let short = draws(SORT_FROM_MIN - 1, 3, None);
        assert!(!sort_from(&short, &mut vec![0.0; short.len()], false));
        let mut sorted = draws(n, 5, None);
        sorted.sort_by(f64::total_cmp);
        assert!(!sort_from(&sorted, &mut vec![0.0; n], false));
    }
}
