//! Stable LSD radix sort on 64-bit keys that preserve the [`nan_last`](super::sort::nan_last)
//! order: the fast path of `sort`, `argsort` and the set functions for the dtypes whose
//! values widen exactly to `f64` or `i64`.
//!
//! Keys: a float maps to its `f64` bits with the sign bit flipped (negatives: all bits
//! flipped), so that unsigned order is numeric order; `-0.0` takes `+0.0`'s key and every NaN
//! the largest key, so that elements equal under `nan_last` have equal keys and the stable
//! sort keeps them in input order (signed zeros and NaN payloads included). An integer maps
//! to its `i64` value with the sign bit flipped. One pass per byte (8-bit digits), skipping
//! bytes that are the same in every key.

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::storage::try_vec;

/// Below this length the comparison sorts win.
pub(crate) const MIN_LEN: usize = 512;

/// The key of a float (widened to `f64`).
#[inline]
fn float_key(x: f64) -> u64 {
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

/// The order-preserving key function for `T`, when `T` has one.
pub(crate) fn key_fn<T: Element>() -> Option<fn(&T) -> u64> {
    match T::DTYPE {
        DType::F64 | DType::F32 | DType::F16 | DType::BF16 => Some(|x: &T| float_key(x.to_f64())),
        DType::I64 | DType::I32 | DType::I8 | DType::U8 | DType::Bool => {
            Some(|x: &T| (x.to_i64() as u64) ^ (1 << 63))
        }
        // Dtypes without an exact widening (later unsigned and complex types) keep the
        // comparison sorts.
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Sorts `v` stably by `key` (descending: by the complemented key).
pub(crate) fn sort_by_key<T: Copy + Default>(
    v: &mut [T],
    key: impl Fn(&T) -> u64,
    descending: bool,
) -> Result<()> {
    let n = v.len();
    let k = |x: &T| if descending { !key(x) } else { key(x) };
    let mut counts = vec![[0usize; 256]; 8];
    for x in v.iter() {
        let kx = k(x);
        for (d, c) in counts.iter_mut().enumerate() {
            c[((kx >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut tmp = try_vec(T::default(), n)?;
    let mut in_v = true;
    for (d, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue; // every key has the same byte here
        }
        let mut offs = [0usize; 256];
        let mut s = 0;
        for (o, &m) in offs.iter_mut().zip(c) {
            *o = s;
            s += m;
        }
        let (src, dst): (&[T], &mut [T]) = if in_v { (v, &mut tmp) } else { (&tmp, v) };
        for x in src {
            let b = ((k(x) >> (8 * d)) & 0xff) as usize;
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
