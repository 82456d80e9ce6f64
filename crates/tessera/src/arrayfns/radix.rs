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

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::storage::{try_vec, try_with_capacity};

/// Below this length a `(key, index)` comparison sort wins over radix passes.
pub(crate) const MIN_LEN: usize = 512;

/// Below this length the comparison sorts of the values win over computing keys (and the
/// buffers they need).
pub(crate) const KEYED_MIN: usize = 32;

/// The key of a float widened to `f64` (64 bits).
#[inline]
fn f64_key(x: f64) -> u64 {
    if x.is_nan() {
        return u64::MAX;
    }
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    if b >> 63 == 1 {
        !b
    } else {
        b ^ (1 << 63)
    }
}

/// The key of a float that is exact in `f32` (32 bits).
#[inline]
fn f32_key(x: f32) -> u64 {
    if x.is_nan() {
        return u32::MAX as u64;
    }
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    (if b >> 31 == 1 { !b } else { b ^ (1 << 31) }) as u64
}

/// The order-preserving key of `T`'s values, when `T` has one.
pub(crate) fn key_fn<T: Element>() -> Option<fn(&T) -> u64> {
    fn int<T: Element, const MIN: i64>(x: &T) -> u64 {
        x.to_i64().wrapping_sub(MIN) as u64
    }
    Some(match T::DTYPE {
        DType::F64 => |x: &T| f64_key(x.to_f64()),
        DType::F32 | DType::F16 | DType::BF16 => |x: &T| f32_key(x.to_f64() as f32),
        DType::I64 => int::<T, { i64::MIN }>,
        DType::I32 => int::<T, { i32::MIN as i64 }>,
        DType::I16 => int::<T, { i16::MIN as i64 }>,
        DType::I8 => int::<T, { i8::MIN as i64 }>,
        DType::U8 | DType::U16 | DType::U32 | DType::Bool => int::<T, 0>,
        // `uint64` does not widen to `i64`, complex values have no order key: the comparison
        // sorts.
        _ => return None,
    })
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
pub(crate) fn argsort<T>(
    v: &[T],
    key: fn(&T) -> u64,
    descending: bool,
    order: &mut [i64],
) -> Result<()> {
    let n = v.len();
    if n == 0 {
        return Ok(());
    }
    let mut keys: Vec<u64> = try_with_capacity(n)?;
    keys.extend(v.iter().map(|x| {
        let k = key(x);
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
            packed.sort_unstable();
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

/// Sorts `v` stably by `key` (descending: by the complemented key): its [`argsort`], then a
/// gather.
pub(crate) fn sort_by_key<T: Copy + Default>(
    v: &mut [T],
    key: fn(&T) -> u64,
    descending: bool,
) -> Result<()> {
    let mut order = try_vec(0i64, v.len())?;
    argsort(v, key, descending, &mut order)?;
    let mut orig: Vec<T> = try_with_capacity(v.len())?;
    orig.extend_from_slice(v);
    for (o, &i) in v.iter_mut().zip(&order) {
        *o = orig[i as usize];
    }
    Ok(())
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
