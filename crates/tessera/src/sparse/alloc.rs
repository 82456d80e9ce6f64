//! Fallible allocation for the sparse kernels' buffers (issue 15 item 3): every buffer whose
//! size comes from a user shape (a dense output, row pointers, a scratch vector) is sized with
//! checked arithmetic and allocated with `try_reserve_exact`, so a size that overflows is
//! `ErrorKind::ShapeOverflow` and one the allocator refuses is `ErrorKind::Allocation`,
//! never an abort of the process. Dense outputs are `Tensor::zeros`, which checks the same way.

use crate::error::{ErrorKind, Result, TesseraError};

/// `a * b`, or `ShapeOverflow` naming `what`.
pub(crate) fn mul(a: usize, b: usize, what: &str) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| {
        TesseraError::from(ErrorKind::ShapeOverflow(format!(
            "{what}: {a} x {b} overflows"
        )))
    })
}

/// `a + b`, or `ShapeOverflow` naming `what`.
pub(crate) fn add(a: usize, b: usize, what: &str) -> Result<usize> {
    a.checked_add(b).ok_or_else(|| {
        TesseraError::from(ErrorKind::ShapeOverflow(format!(
            "{what}: {a} + {b} overflows"
        )))
    })
}

/// The product of `dims`, or `ShapeOverflow` naming `what`.
pub(crate) fn product(dims: &[usize], what: &str) -> Result<usize> {
    dims.iter().try_fold(1usize, |acc, &d| mul(acc, d, what))
}

/// An empty vector with room for exactly `n` elements: `ShapeOverflow` if `n` elements do not
/// fit in `isize::MAX` bytes, `Allocation` if the allocator refuses.
pub(crate) fn with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        let size = std::mem::size_of::<T>();
        match n.checked_mul(size).filter(|&b| b <= isize::MAX as usize) {
            Some(bytes) => ErrorKind::Allocation(bytes),
            None => ErrorKind::ShapeOverflow(format!(
                "{n} elements of {size} bytes exceed isize::MAX bytes ({e})"
            )),
        }
    })?;
    Ok(v)
}

/// A vector of `n` copies of `value`, allocated as by [`with_capacity`].
pub(crate) fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>> {
    let mut v = with_capacity(n)?;
    v.resize(n, value);
    Ok(v)
}

/// The items of `it` (which yields exactly `n`) in a vector allocated as by [`with_capacity`].
pub(crate) fn collect<T>(n: usize, it: impl IntoIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = with_capacity(n)?;
    v.extend(it.into_iter().take(n));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_that_overflow_or_are_refused_are_errors() {
        assert!(matches!(
            with_capacity::<u64>(usize::MAX / 4)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ));
        assert!(matches!(
            filled(1usize << 40, 0.0f64).as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::Allocation(b)) if *b == 8 << 40
        ));
        assert!(matches!(
            product(&[1 << 40, 1 << 40], "x")
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ));
        assert_eq!(product(&[0, usize::MAX, 2], "x").unwrap(), 0);
        assert_eq!(product(&[], "x").unwrap(), 1);
        assert_eq!(collect(3, 0..10).unwrap(), vec![0, 1, 2]);
        assert_eq!(filled(2, 7u8).unwrap(), vec![7, 7]);
    }
}
