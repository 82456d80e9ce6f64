//! The validated contents of a shape descriptor: dims, strides and the facts derived from them.

use smallvec::SmallVec;

use crate::error::{ErrorKind, Result, TesseraError};

/// Rank up to which [`DimVec`] stores its elements inline.
pub(crate) const DIM_INLINE: usize = 6;

/// Dims or strides of one shape; inline up to rank [`DIM_INLINE`].
pub(crate) type DimVec<T> = SmallVec<[T; DIM_INLINE]>;

/// Dims, strides (in elements, signed) and derived facts, checked for overflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) dims: DimVec<usize>,
    pub(crate) strides: DimVec<isize>,
    pub(crate) numel: usize,
    pub(crate) c_contiguous: bool,
    pub(crate) f_contiguous: bool,
    /// The strides are exactly [`contiguous_strides`] of the dims (size-1 and size-0 dims
    /// included), the layout a fresh row-major tensor gets.
    pub(crate) row_major: bool,
    /// Hash of `(rank, dims, strides)`: picks the lock stripe and the front-cache slot.
    pub(crate) hash: u64,
    /// The lowest and highest element offsets reachable from the base (`lo <= 0 <= hi`;
    /// both 0 for an empty shape, which reaches nothing): what a bounds check against a
    /// storage needs, kept so that the check costs no walk over the dims.
    pub(crate) span: (isize, isize),
}

impl Geometry {
    /// Validates `dims`/`strides` and derives the descriptor facts.
    ///
    /// Errors: rank mismatch between dims and strides, a dim above `isize::MAX`, an element
    /// count above `isize::MAX`, or a reachable offset that does not fit in `isize`.
    pub(crate) fn new(dims: &[usize], strides: &[isize]) -> Result<Geometry> {
        if dims.len() != strides.len() {
            return Err(ErrorKind::InvalidShape(format!(
                "{} dims but {} strides",
                dims.len(),
                strides.len()
            ))
            .into());
        }
        let numel = checked_numel(dims)?;
        let mut span = (0isize, 0isize);
        if numel > 0 {
            // The furthest element from the base must be addressable: sum of (d-1)*|s|.
            let mut reach_all: isize = 0;
            for (&d, &s) in dims.iter().zip(strides) {
                let step = (d as isize - 1)
                    .checked_mul(s.checked_abs().ok_or_else(|| overflow(dims, "stride"))?)
                    .ok_or_else(|| overflow(dims, "offset"))?;
                reach_all = reach_all
                    .checked_add(step)
                    .ok_or_else(|| overflow(dims, "offset"))?;
                // Within `reach_all` in magnitude, so neither sum overflows.
                if s < 0 {
                    span.0 -= step;
                } else {
                    span.1 += step;
                }
            }
        }
        Ok(Geometry {
            dims: dims.into(),
            strides: strides.into(),
            numel,
            c_contiguous: is_contiguous(dims.iter().rev().zip(strides.iter().rev()), numel),
            f_contiguous: is_contiguous(dims.iter().zip(strides), numel),
            row_major: contiguous_strides(dims).is_ok_and(|c| c.as_slice() == strides),
            hash: hash_key(dims, strides),
            span,
        })
    }

    /// The trie key `[rank, dims.., strides..]`.
    pub(crate) fn key(&self) -> SmallVec<[i64; 13]> {
        let mut key = SmallVec::with_capacity(1 + 2 * self.dims.len());
        key.push(self.dims.len() as i64);
        key.extend(self.dims.iter().map(|&d| d as i64));
        key.extend(self.strides.iter().map(|&s| s as i64));
        key
    }
}

fn overflow(dims: &[usize], what: &str) -> TesseraError {
    ErrorKind::ShapeOverflow(format!("{what} of shape {dims:?} does not fit in isize")).into()
}

/// Element count of `dims`, or an error if it exceeds `isize::MAX` (or a dim does).
///
/// Like NumPy, the product of the non-zero dims must fit even when another dim is 0, so
/// `(0, 2^40, 2^40)` is rejected rather than silently accepted as empty.
pub(crate) fn checked_numel(dims: &[usize]) -> Result<usize> {
    checked_byte_size(dims, 1)
}

/// Byte size of a C-contiguous buffer of `dims` with `itemsize`-byte elements: the product of
/// the non-zero dims times `itemsize` must fit in `isize` (NumPy's rule). Returns 0 for an empty
/// shape.
pub(crate) fn checked_byte_size(dims: &[usize], itemsize: usize) -> Result<usize> {
    let mut n: usize = itemsize;
    for &d in dims {
        if d > isize::MAX as usize {
            return Err(ErrorKind::ShapeOverflow(format!(
                "dim {d} of shape {dims:?} exceeds isize::MAX"
            ))
            .into());
        }
        if d != 0 {
            n = n
                .checked_mul(d)
                .filter(|&n| n <= isize::MAX as usize)
                .ok_or_else(|| {
                    ErrorKind::ShapeOverflow(if itemsize == 1 {
                        format!("element count of shape {dims:?} exceeds isize::MAX")
                    } else {
                        format!(
                            "shape {dims:?} of {itemsize}-byte elements exceeds isize::MAX bytes"
                        )
                    })
                })?;
        }
    }
    Ok(if dims.contains(&0) { 0 } else { n })
}

/// C-order strides (in elements) for `dims`; errors if a stride does not fit in `isize`.
pub(crate) fn contiguous_strides(dims: &[usize]) -> Result<DimVec<isize>> {
    let mut strides: DimVec<isize> = SmallVec::from_elem(0, dims.len());
    let mut acc: isize = 1;
    for (i, &d) in dims.iter().enumerate().rev() {
        strides[i] = acc;
        let d = isize::try_from(d).map_err(|_| overflow(dims, "dim"))?;
        // An empty shape still gets strides; they only need to be representable.
        acc = acc
            .checked_mul(d.max(1))
            .ok_or_else(|| overflow(dims, "stride"))?;
    }
    Ok(strides)
}

/// Contiguity in the order the iterator walks (innermost first), ignoring size-1 dims (V6).
pub(crate) fn is_contiguous<'a>(
    dims_strides: impl Iterator<Item = (&'a usize, &'a isize)>,
    numel: usize,
) -> bool {
    if numel == 0 {
        return true;
    }
    let mut expected: isize = 1;
    for (&d, &s) in dims_strides {
        if d == 1 {
            continue;
        }
        if s != expected {
            return false;
        }
        expected *= d as isize;
    }
    true
}

/// FxHash-style mixing of `(rank, dims, strides)`, finished with an avalanche step so both the
/// low bits (front-cache slot) and the high bits (stripe) are well spread.
#[inline]
pub(crate) fn hash_key(dims: &[usize], strides: &[isize]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(K);
    // Two independent lanes (dims, strides): half the dependent multiply chain of one lane.
    let mut a = mix(0, dims.len() as u64);
    let mut b = mix(0x2545_f491_4f6c_dd1d, strides.len() as u64);
    for &d in dims {
        a = mix(a, d as u64);
    }
    for &s in strides {
        b = mix(b, s as u64);
    }
    let mut h = a ^ b.rotate_left(32);
    h ^= h >> 32;
    h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}
