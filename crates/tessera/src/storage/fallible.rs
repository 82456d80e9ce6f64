//! Fallible vector allocation for buffers sized by user input (docs/design.md: an oversized
//! request is [`ErrorKind::Allocation`] or [`ErrorKind::ShapeOverflow`], never an
//! abort of the process).

use crate::error::{ErrorKind, Result, TesseraError};

/// Bytes of `n` elements of `T`, or [`ErrorKind::ShapeOverflow`] when that overflows
/// `isize` (the most any allocation may hold).
pub fn checked_vec_bytes<T>(n: usize) -> Result<usize> {
    n.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            ErrorKind::ShapeOverflow(format!(
                "{n} elements of {} bytes do not fit in memory",
                std::mem::size_of::<T>()
            ))
            .into()
        })
}

/// An empty vector with room for `n` elements, or [`ErrorKind::ShapeOverflow`] /
/// [`ErrorKind::Allocation`] (with the byte count) when that much cannot be had.
pub fn try_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let bytes = checked_vec_bytes::<T>(n)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| TesseraError::from(ErrorKind::Allocation(bytes)))?;
    Ok(v)
}

/// `vec![value; n]`, fallibly (see [`try_with_capacity`]).
pub fn try_vec<T: Clone>(value: T, n: usize) -> Result<Vec<T>> {
    let mut v = try_with_capacity(n)?;
    v.resize(n, value);
    Ok(v)
}

/// A vector of `n` default (zero) values, fallibly (see [`try_with_capacity`]).
pub fn try_zeroed_vec<T: Clone + Default>(n: usize) -> Result<Vec<T>> {
    try_vec(T::default(), n)
}

/// The product of `dims` (an element count), or [`ErrorKind::ShapeOverflow`].
pub fn checked_numel(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            TesseraError::from(ErrorKind::ShapeOverflow(format!(
                "{dims:?} has too many elements"
            )))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot simulate a refused allocation")]
    fn oversized_requests_are_errors_not_aborts() {
        assert!(matches!(
            try_vec(0u64, usize::MAX / 4).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ));
        // Fits in isize but not in any machine's memory: the allocator refuses it.
        assert!(matches!(
            try_zeroed_vec::<u8>(1 << 60).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Allocation(b)) if *b == 1 << 60
        ));
        assert_eq!(try_vec(7u16, 3).unwrap(), vec![7, 7, 7]);
        assert!(matches!(
            checked_numel(&[1 << 40, 1 << 40])
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ));
        assert_eq!(checked_numel(&[3, 0, 5]).unwrap(), 0);
    }
}
