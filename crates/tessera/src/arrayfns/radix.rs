//! Sorting by integer keys that preserve the [`nan_last`](super::sort::nan_last) order: the
//! fast path of `sort`, `argsort` and the set functions for the dtypes whose values widen
//! exactly to `f64` or `i64`.
//!
//! Keys: a float maps to its bits with the sign bit flipped (negatives: all bits flipped), so
//! that unsigned order is numeric order; `-0.0` takes `+0.0`'s key and every NaN the largest
//! key, so that elements equal under `nan_last` have equal keys and a stable sort keeps them
//! in input order (signed zeros and NaN payloads included). `f32`, `f16` and `bf16` use the
//! `f32` bits (32-bit keys), `f64` its own. An integer maps to its distance from its dtype's
//! minimum, so a 32-bit or narrower integer has a 32-bit key.
//!
//! Each key is computed once (the key function is chosen at run time, one indirect call per
//! element); [`argsort`] says how the keys are sorted, and `sort` gathers by its order.

use std::any::TypeId;

use super::network::{self, NetKey, NetSort, NET_MAX};
use super::offsets;
use super::quicksort::{self, QuickSort};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::simd::with_simd;
use crate::storage::{try_vec, try_with_capacity};

/// Below this length a `(key, index)` comparison sort wins over radix passes.
pub(crate) const MIN_LEN: usize = 512;

/// Below this length the comparison sorts of the values win over computing keys (and the
/// buffers they need), unless the network sorts the lane ([`sorts_by_key`]).
pub(crate) const KEYED_MIN: usize = 32;

/// The longest `i64` or `u64` lane [`sort_untied_into`] sorts by value in the network (8 to a
/// register, signed or unsigned `min`/`max`), in one pass from the input into the output.
/// Longer lanes whose values span less than `2^32` sort faster as 32-bit offsets (16 to a
/// register, `offsets.rs`), after a copy, a pass for the range and one for the offsets.
/// Measured on one thread (`sort` along the last axis, values in `[-300, 300]`, us per
/// call, offsets / by value): 1024 lanes of 16, 90 / 58; 256 of 64, 34.0 / 29.4; 1024 of
/// 96, 205-219 / 232-239; 512 of 128, 106-114 / 118-120. A 4 x 4 `int64` sort along
/// either axis gained 0.12-0.15 us of its 0.48 (last axis) and 0.88 (first axis).
pub(crate) const DIRECT_INT64_MAX: usize = 64;

/// Whether [`sort_by_key`] is the sort of a lane of `n` elements: from [`KEYED_MIN`], and
/// below it whenever the network takes the lane. A 16-element `int64` lane took 210 ns in
/// the standard library's insertion sort (a mispredicted branch every few comparisons) and
/// about 50 through the network (NumPy 32).
pub(crate) fn sorts_by_key(n: usize) -> bool {
    n >= KEYED_MIN || (n > 1 && network::takes(n))
}

/// The key of a float widened to `f64` (64 bits). Branch-free (selects, shifts and xors),
/// so that the loops over a lane vectorise: with branches, the sign of random data was a
/// mispredicted branch per element, half the time of a short sort.
#[inline]
fn f64_key(x: f64) -> u64 {
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    // Negative: every bit flipped; positive: the sign bit set.
    let k = b ^ (((b as i64) >> 63) as u64 | 1 << 63);
    if x.is_nan() {
        u64::MAX
    } else {
        k
    }
}

/// The key of a float that is exact in `f32` (32 bits); branch-free as [`f64_key`].
#[inline]
fn f32_key(x: f32) -> u64 {
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    let k = b ^ (((b as i32) >> 31) as u32 | 1 << 31);
    (if x.is_nan() { u32::MAX } else { k }) as u64
}

/// The `f64` bits of a key made by [`f64_key`] (`+0.0` for a zero, one NaN for the NaNs).
#[inline]
fn f64_bits(k: u64) -> u64 {
    // Top bit set (a positive value's key): the sign bit cleared; else every bit flipped.
    k ^ (!(((k as i64) >> 63) as u64) | 1 << 63)
}

/// The `f32` bits of a key made by [`f32_key`].
#[inline]
fn f32_bits(k: u32) -> u32 {
    k ^ (!(((k as i32) >> 31) as u32) | 1 << 31)
}

/// The order-preserving key of `T`'s values ([`Key::of`]), when `T` has one.
pub(crate) fn key_fn<T: Element>() -> Option<Key<T>> {
    match T::DTYPE {
        // Complex values have no order key: the comparison sorts. (`uint64`'s key is its
        // bits: `to_i64` wraps, so `int(0)` below is the identity, and every use of the keys
        // is unsigned arithmetic.)
        DType::C64 | DType::C128 => None,
        _ => Some(Key(std::marker::PhantomData)),
    }
}

/// The key function of `T` (made by [`key_fn`]): a type rather than a function pointer, so
/// that the per-element calls inline (through a pointer they were a third of a short sort).
#[derive(Clone, Copy)]
pub(crate) struct Key<T>(std::marker::PhantomData<fn(&T)>);

impl<T: Element> Key<T> {
    /// How many bits the keys of `T` take: 64 for the 64-bit dtypes, else 32 (every other
    /// dtype with a key is at most 32 bits wide, `float16`/`bfloat16` through `f32`).
    #[inline(always)]
    pub(crate) fn bits(self) -> u32 {
        match T::DTYPE {
            DType::F64 | DType::I64 | DType::U64 | DType::C64 | DType::C128 => 64,
            _ => 32,
        }
    }

    /// The key of `x` (the dtype's branch is chosen at compile time).
    #[inline(always)]
    pub(crate) fn of(self, x: &T) -> u64 {
        let int = |min: i64| x.to_i64().wrapping_sub(min) as u64;
        match T::DTYPE {
            DType::F64 => f64_key(x.to_f64()),
            DType::F32 | DType::F16 | DType::BF16 => f32_key(x.to_f64() as f32),
            DType::I64 => int(i64::MIN),
            DType::I32 => int(i32::MIN as i64),
            DType::I16 => int(i16::MIN as i64),
            DType::I8 => int(i8::MIN as i64),
            _ => int(0),
        }
    }

    /// The value of key `k`, for the dtypes whose keys are one-to-one on their values but
    /// for the signed zeros and the NaNs (which come back as `+0.0` and one NaN): all of
    /// them ([`key_fn`] makes no key for the others).
    #[inline(always)]
    fn value(self, k: u64) -> T {
        let int = |min: i64| T::from_i64((k as i64).wrapping_add(min));
        match T::DTYPE {
            DType::F64 => T::from_f64(f64::from_bits(f64_bits(k))),
            DType::F32 | DType::F16 | DType::BF16 => {
                T::from_f64(f32::from_bits(f32_bits(k as u32)) as f64)
            }
            DType::I64 => int(i64::MIN),
            DType::I32 => int(i32::MIN as i64),
            DType::I16 => int(i16::MIN as i64),
            DType::I8 => int(i8::MIN as i64),
            _ => int(0),
        }
    }
}

/// The permutation that sorts `v` stably by `key` (descending: by the complemented key),
/// written into `order` (`order.len() == v.len()`).
///
/// The keys are taken relative to their minimum. When they then fit in 32 bits (every 32-bit
/// dtype, and 64-bit ones over a narrow range), each is packed above its index into one
/// `u64`, else they pair with their index. Below [`MIN_LEN`] elements the standard library's
/// unstable sort orders them (radix passes cost more there: 256-bucket counts per pass,
/// measured 1.4x slower on 256 elements); from there, radix passes over the key bytes that
/// are not the same in every key (integers in `±30 000`: two passes). The index makes every
/// path stable.
pub(crate) fn argsort<T: Element>(
    v: &[T],
    key: Key<T>,
    descending: bool,
    order: &mut [i64],
) -> Result<()> {
    let n = v.len();
    if n == 0 {
        return Ok(());
    }
    let mut keys: Vec<u64> = try_with_capacity(n)?;
    keys.extend(v.iter().map(|x| {
        let k = key.of(x);
        if descending {
            !k
        } else {
            k
        }
    }));
    let (lo, hi) = keys
        .iter()
        .fold((u64::MAX, 0), |(l, h), &k| (l.min(k), h.max(k)));
    let span = hi - lo;
    if span <= u32::MAX as u64 && n <= u32::MAX as usize {
        // The keys' buffer, reused.
        let mut packed = keys;
        for (p, i) in packed.iter_mut().zip(0u64..) {
            *p = ((*p - lo) << 32) | i;
        }
        if n < MIN_LEN {
            // Distinct keys (the index is part of each): any sort is stable.
            if !network::sort(&mut packed) {
                packed.sort_unstable();
            }
        } else {
            // The key's bytes sit above the 4 bytes of the index.
            let key_bytes = (u64::BITS - span.leading_zeros()).div_ceil(8) as usize;
            radix(&mut packed, 4..4 + key_bytes, |&p| p)?;
        }
        for (o, p) in order.iter_mut().zip(&packed) {
            *o = (p & u32::MAX as u64) as i64;
        }
    } else if n < MIN_LEN {
        let mut pairs: Vec<(u64, u32)> = try_with_capacity(n)?;
        pairs.extend(keys.iter().zip(0u32..).map(|(&k, i)| (k, i)));
        pairs.sort_unstable();
        for (o, p) in order.iter_mut().zip(&pairs) {
            *o = p.1 as i64;
        }
    } else {
        let mut keyed: Vec<(u64, i64)> = try_with_capacity(n)?;
        keyed.extend(keys.iter().zip(0i64..).map(|(&k, i)| (k - lo, i)));
        radix(&mut keyed, 0..8, |p| p.0)?;
        for (o, p) in order.iter_mut().zip(&keyed) {
            *o = p.1;
        }
    }
    Ok(())
}

/// Sorts `v` stably by `key` (descending: by the complemented key): in registers where the
/// CPU and the lane allow ([`sort_in_registers`]; large partitions in parallel when `par`),
/// else by its [`argsort`], then a gather.
pub(crate) fn sort_by_key<T: Element>(
    v: &mut [T],
    key: Key<T>,
    descending: bool,
    par: bool,
) -> Result<()> {
    if sort_in_registers(v, key, descending, par)? {
        return Ok(());
    }
    let mut order = try_vec(0i64, v.len())?;
    argsort(v, key, descending, &mut order)?;
    let mut orig: Vec<T> = try_with_capacity(v.len())?;
    orig.extend_from_slice(v);
    for (o, &i) in v.iter_mut().zip(&order) {
        *o = orig[i as usize];
    }
    Ok(())
}

/// Writes the ascending sort of the lane `src` into `dst` in one pass through the network
/// ([`network::sort_untied_into`]) and returns `true`, when the CPU and the lane allow: an
/// `f64` or `f32` lane holding no zero or NaN (the ties that need [`restore_ties`]), an
/// `i32` or `u32` lane, or an `i64` or `u64` lane of at most [`DIRECT_INT64_MAX`] elements
/// (equal integers are indistinguishable: never a tie). Otherwise returns `false` and leaves
/// `dst` as it is (the caller copies and sorts in place).
pub(crate) fn sort_untied_into<T: Element>(src: &[T], dst: &mut [T]) -> bool {
    if src.len() < 2 {
        dst.copy_from_slice(src);
        return true;
    }
    let t = TypeId::of::<T>();
    if t == TypeId::of::<f64>() {
        // SAFETY: `T` is `f64` (same `TypeId`).
        return unsafe { untied_as::<T, f64>(src, dst) };
    }
    if t == TypeId::of::<f32>() {
        // SAFETY: `T` is `f32` (same `TypeId`).
        return unsafe { untied_as::<T, f32>(src, dst) };
    }
    // SAFETY (each arm below): `T` is the type named (same `TypeId`).
    if src.len() <= DIRECT_INT64_MAX {
        if t == TypeId::of::<i64>() {
            return unsafe { untied_as::<T, i64>(src, dst) };
        }
        if t == TypeId::of::<u64>() {
            return unsafe { untied_as::<T, u64>(src, dst) };
        }
    }
    if t == TypeId::of::<i32>() {
        return unsafe { untied_as::<T, i32>(src, dst) };
    }
    if t == TypeId::of::<u32>() {
        return unsafe { untied_as::<T, u32>(src, dst) };
    }
    false
}

/// [`network::sort_untied_into`] of the slices of `T` read as slices of `F`.
///
/// # Safety
/// `T` must be `F`.
unsafe fn untied_as<T, F: NetSort>(src: &[T], dst: &mut [T]) -> bool {
    // SAFETY: `T` is `F` (the caller's contract), so both are slices of `F`, reborrowed for
    // the call.
    let (s, d) = unsafe {
        (
            std::slice::from_raw_parts(src.as_ptr().cast::<F>(), src.len()),
            std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<F>(), dst.len()),
        )
    };
    network::sort_untied_into(s, d)
}

/// Sorts a lane in AVX-512 registers (the network up to [`NET_MAX`] elements, the vectorised
/// quicksort above): `f64` and `f32` lanes by their values ([`sort_floats_in_registers`]),
/// the others by their bare keys (`u32` keys for the dtypes whose keys fit 32 bits: twice as
/// many to a register), turned back into values. `false`, with `v` untouched, where the CPU
/// does not allow.
fn sort_in_registers<T: Element>(
    v: &mut [T],
    key: Key<T>,
    descending: bool,
    par: bool,
) -> Result<bool> {
    let (p, n) = (v.as_mut_ptr(), v.len());
    let t = TypeId::of::<T>();
    // SAFETY (both arms): `T` is the type named (same `TypeId`), so `v` is a slice of it,
    // reborrowed for the call.
    if t == TypeId::of::<f64>() {
        return sort_floats_in_registers(
            unsafe { std::slice::from_raw_parts_mut(p.cast::<f64>(), n) },
            descending,
            par,
        );
    }
    if t == TypeId::of::<f32>() {
        return sort_floats_in_registers(
            unsafe { std::slice::from_raw_parts_mut(p.cast::<f32>(), n) },
            descending,
            par,
        );
    }
    // The 32- and 64-bit integers are their own keys up to one xor (the sign bit for the
    // signed ones, every bit for a descending sort): sorted in place, with no key buffer.
    let flip = |sign: u64| sign ^ if descending { u64::MAX } else { 0 };
    // SAFETY (all four arms): `T` is the type named (same `TypeId`), and it has the size and
    // alignment of the unsigned integer `v` is reborrowed as (every bit pattern valid).
    if t == TypeId::of::<i64>() || t == TypeId::of::<u64>() {
        let sign = if t == TypeId::of::<i64>() { 1 << 63 } else { 0 };
        let bits = unsafe { std::slice::from_raw_parts_mut(p.cast::<u64>(), n) };
        if offsets::sort_as_offsets(bits, flip(sign), par)? {
            return Ok(true);
        }
        return sort_bits_in_place(bits, flip(sign), par);
    }
    if t == TypeId::of::<i32>() || t == TypeId::of::<u32>() {
        let sign = if t == TypeId::of::<i32>() { 1 << 31 } else { 0 };
        let bits = unsafe { std::slice::from_raw_parts_mut(p.cast::<u32>(), n) };
        return sort_bits_in_place(bits, flip(sign) as u32, par);
    }
    if key.bits() <= 32 {
        sort_keys_in_registers::<T, u32>(v, key, descending, par)
    } else {
        sort_keys_in_registers::<T, u64>(v, key, descending, par)
    }
}

/// Sorts the integers `v` by their keys `x ^ mask` (`mask` the sign bit of a signed type,
/// complemented for a descending sort) in place: each element becomes its key, the keys
/// sort, and each becomes an element again. `false`, with `v` untouched, where the CPU does
/// not allow.
fn sort_bits_in_place<K: NetKey + QuickSort>(v: &mut [K], mask: K, par: bool) -> Result<bool> {
    if !quicksort::available() {
        return Ok(false);
    }
    with_simd(|| v.iter_mut().for_each(|x| *x = *x ^ mask));
    let sorted = quicksort::sort(v, par);
    debug_assert!(sorted, "the quicksort runs here (checked above)");
    with_simd(|| v.iter_mut().for_each(|x| *x = *x ^ mask));
    Ok(true)
}

/// The zeros and NaNs of a float lane, in order (none for an integer dtype, with no scan):
/// the elements a sort by key or by value may reorder among themselves, which
/// [`restore_ties`] puts back in input order. One branch-free pass counts them (none, in
/// most lanes) before the filtering one.
fn float_ties<T: Element>(v: &[T]) -> Result<Vec<T>> {
    if !T::DTYPE.is_float() {
        return Ok(Vec::new());
    }
    // A count, not a fold of `bool`s: LLVM reduced the `bool` fold one vector at a time
    // (an extract and an `or` per vector, a fifth of an f64 lane's sort in perf). Counted in
    // `u32` lanes, chunk by chunk: a `usize` count widened every compare's lanes to 64 bits
    // (three instructions per four f32s, a sixth of a 256-element f32 sort in perf). Each
    // closure in one place only (docs: `kernels/simd.rs`). Compared in `T` itself: through
    // `to_f64`, `f16`'s conversion (an F16C function of `half`) stayed out of line in the
    // AVX2 copy (`scripts/check-simd`).
    let zero = T::default();
    #[allow(clippy::eq_op)]
    let tied: usize = with_simd(|| {
        v.chunks(u32::MAX as usize)
            .map(|c| {
                c.iter()
                    .map(|x| (*x == zero || *x != *x) as u32)
                    .sum::<u32>() as usize
            })
            .sum()
    });
    if tied == 0 {
        return Ok(Vec::new());
    }
    // Fallible: a long lane of zeros keeps as many.
    let mut ties = try_with_capacity(tied)?;
    ties.extend(
        v.iter()
            .copied()
            .filter(|x| x.to_f64() == 0.0 || x.to_f64().is_nan()),
    );
    Ok(ties)
}

/// [`sort_in_registers`] of a float lane by value, in the network up to [`NET_MAX`]
/// elements and by the vectorised quicksort above: NaNs become the infinity that sorts where
/// they go (last; first when descending), a descending sort sorts the negated values, and
/// afterwards the NaN slots get NaNs back and [`restore_ties`] the input's zeros and NaNs
/// (signs and payloads) in input order.
fn sort_floats_in_registers<F>(v: &mut [F], descending: bool, par: bool) -> Result<bool>
where
    F: Element + QuickSort + std::ops::Neg<Output = F>,
{
    if !quicksort::available() {
        return Ok(false);
    }
    let ties = float_ties(v)?;
    let inf = F::from_f64(f64::INFINITY);
    let fill = if descending { -inf } else { inf };
    // The loops before and after the network in AVX2 copies (as built, they ran 128 bits
    // wide). The flag and the fill are moved in: captured by reference, `descending` was
    // read from memory on every element (the writes through `x` might alias it) and the
    // loop stayed scalar (perf: `setp` and `cmpb` per element, a sixth of a cold lane's sort).
    // The NaNs are counted first, read-only: an ascending lane without NaNs (the usual one)
    // needs no rewrite, and the rewrite of one, where only the NaN slots change, was built as
    // `vmaskmovps` stores, microcoded on AMD (a quarter of a 256-element f32 sort in perf).
    // The NaNs are among the ties (none in most lanes: then no second pass over the lane).
    let nans = ties.iter().filter(|x| x.to_f64().is_nan()).count();
    if descending || nans > 0 {
        let lane = &mut *v;
        with_simd(move || {
            for x in lane.iter_mut() {
                #[allow(clippy::eq_op)]
                let nan = *x != *x;
                let y = if descending { -*x } else { *x };
                *x = if nan { fill } else { y };
            }
        });
    }
    let sorted = quicksort::sort(v, par);
    debug_assert!(sorted, "the quicksort runs here (checked above)");
    if descending {
        with_simd(|| {
            for x in v.iter_mut() {
                *x = -*x;
            }
        });
    }
    let n = v.len();
    let nan_slots = if descending { 0..nans } else { n - nans..n };
    v[nan_slots].fill(F::from_f64(f64::NAN));
    if !ties.is_empty() {
        restore_ties(v, &ties);
    }
    Ok(true)
}

/// [`sort_in_registers`] with keys of type `K` (wide enough for every key of `T`), in a
/// buffer sized for the lane ([`with_keys`]). The only equal keys of unequal elements are the
/// signed zeros and the NaNs, which go back in their input order afterwards (stability).
fn sort_keys_in_registers<T: Element, K: NetKey + QuickSort>(
    v: &mut [T],
    key: Key<T>,
    descending: bool,
    par: bool,
) -> Result<bool> {
    let n = v.len();
    if !quicksort::available() {
        return Ok(false);
    }
    let flip = if descending { K::MAX } else { K::ZERO };
    with_keys::<K, _>(n, |keys| {
        for (k, x) in keys.iter_mut().zip(v.iter()) {
            *k = K::from_u64(key.of(x)) ^ flip;
        }
        let sorted = quicksort::sort(keys, par);
        debug_assert!(sorted, "the quicksort runs here (checked above)");
        let restore = float_ties(v)?;
        for (o, &k) in v.iter_mut().zip(keys.iter()) {
            *o = key.value((k ^ flip).into());
        }
        if !restore.is_empty() {
            restore_ties(v, &restore);
        }
        Ok(true)
    })?
}

/// Runs `f` on a buffer of `n` zero keys: on the stack up to [`NET_MAX`] (32 keys for the
/// shortest lanes, whose sort took less time than zeroing the 256-key buffer), on the heap
/// above.
fn with_keys<K: NetKey, R>(n: usize, f: impl FnOnce(&mut [K]) -> R) -> Result<R> {
    const SHORT: usize = 32;
    Ok(if n <= SHORT {
        f(&mut [K::ZERO; SHORT][..n])
    } else if n <= NET_MAX {
        f(&mut [K::ZERO; NET_MAX][..n])
    } else {
        f(&mut try_vec(K::ZERO, n)?)
    })
}

/// Puts the zeros and the NaNs of a float lane sorted by key back in input order: the k-th
/// zero of `sorted` becomes the k-th zero of the input (`+0.0` or `-0.0`), and the k-th NaN
/// the k-th NaN (payload and sign). `ties` holds the input's zeros and NaNs, in order.
fn restore_ties<T: Element>(sorted: &mut [T], ties: &[T]) {
    let mut zeros = ties.iter().filter(|x| x.to_f64() == 0.0);
    let mut nans = ties.iter().filter(|x| x.to_f64().is_nan());
    for o in sorted.iter_mut() {
        let next = if o.to_f64() == 0.0 {
            zeros.next()
        } else if o.to_f64().is_nan() {
            nans.next()
        } else {
            None
        };
        if let Some(&x) = next {
            *o = x;
        }
    }
}

/// Sorts `v` stably by `key(item)`'s bytes `bytes` (0 the lowest): LSD radix passes, skipping
/// a byte that is the same in every item.
fn radix<X: Copy + Default>(
    v: &mut [X],
    bytes: std::ops::Range<usize>,
    key: impl Fn(&X) -> u64,
) -> Result<()> {
    let n = v.len();
    let mut counts = [[0usize; 256]; 8];
    for x in v.iter() {
        let k = key(x);
        for d in bytes.clone() {
            counts[d][((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut tmp = try_vec(X::default(), n)?;
    let mut in_v = true;
    for d in bytes {
        let c = &counts[d];
        if c.contains(&n) {
            continue; // every item has the same byte here
        }
        let mut offs = [0usize; 256];
        let mut s = 0;
        for (o, &m) in offs.iter_mut().zip(c) {
            *o = s;
            s += m;
        }
        let (src, dst) = if in_v {
            (&*v, &mut tmp[..])
        } else {
            (&tmp[..], &mut *v)
        };
        for x in src {
            let b = ((key(x) >> (8 * d)) & 0xff) as usize;
            dst[offs[b]] = *x;
            offs[b] += 1;
        }
        in_v = !in_v;
    }
    if !in_v {
        v.copy_from_slice(&tmp);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_order_values_and_map_back() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -5e-324,
            0.0,
            5e-324,
            1.0,
            1e300,
            f64::INFINITY,
        ];
        let keys: Vec<u64> = xs.iter().map(|&x| f64_key(x)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:x?}");
        for (&x, &k) in xs.iter().zip(&keys) {
            assert_eq!(f64_bits(k), x.to_bits());
            let y = x as f32;
            let k32 = f32_key(y) as u32;
            assert_eq!(f32_bits(k32), if y == 0.0 { 0 } else { y.to_bits() });
        }
        assert_eq!(f64_key(-0.0), f64_key(0.0));
        assert_eq!(f64_key(-f64::NAN), u64::MAX);
        assert_eq!(f32_key(-0.0), f32_key(0.0));
        assert_eq!(f32_key(f32::NAN), u32::MAX as u64);
        assert!(f32_key(f32::INFINITY) < f32_key(f32::NAN));
    }
}
