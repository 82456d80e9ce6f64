//! The short path of the elementwise drivers for small calls (docs/design.md P4): when every
//! operand is row-major contiguous over the call's dims and the call is below the parallel
//! threshold, the kernel is one slice loop, with no iteration plan, no per-run callback and no
//! self-overlap analysis (a contiguous destination cannot overlap itself).

/// Whether `strides` are the row-major contiguous strides of `dims` (dims of extent 1 may
/// have any stride).
fn is_row_major(dims: &[usize], strides: &[isize]) -> bool {
    let mut expect = 1usize;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        if d != 1 && usize::try_from(s).ok() != Some(expect) {
            return false;
        }
        expect = expect.saturating_mul(d);
    }
    strides.len() == dims.len()
}

/// One operand as the short path sees it: element strides, offset, buffer length.
pub(super) type Span<'a> = (&'a [isize], usize, usize);

/// The element count `n` when every operand is a row-major contiguous run of `n < limit`
/// elements inside its buffer; `None` otherwise (the caller takes the general path, which
/// also reports any error).
pub(super) fn small_contiguous(dims: &[usize], ops: &[Span<'_>], limit: usize) -> Option<usize> {
    let n = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    let fits = |&(strides, offset, len): &Span<'_>| {
        is_row_major(dims, strides) && offset.checked_add(n).is_some_and(|end| end <= len)
    };
    (n < limit && ops.iter().all(fits)).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_contiguous_in_bounds_small_operands_qualify() {
        let dims = [2usize, 3];
        let (c, t, unit): (&[isize], &[isize], &[isize]) = (&[3, 1], &[1, 2], &[99, 1]);
        assert_eq!(
            small_contiguous(&dims, &[(c, 0, 6), (c, 0, 6)], 100),
            Some(6)
        );
        assert_eq!(small_contiguous(&dims, &[(c, 0, 6), (t, 0, 6)], 100), None);
        assert_eq!(small_contiguous(&dims, &[(c, 0, 6), (c, 5, 10)], 100), None);
        assert_eq!(
            small_contiguous(&dims, &[(c, 0, 6), (c, 5, 11)], 100),
            Some(6)
        );
        assert_eq!(small_contiguous(&[1, 3], &[(unit, 0, 3)], 100), Some(3));
        assert_eq!(small_contiguous(&[0, 3], &[(c, 0, 0)], 100), Some(0));
        assert_eq!(small_contiguous(&dims, &[(c, 0, 6)], 6), None);
        assert_eq!(small_contiguous(&[usize::MAX, 2], &[(c, 0, 6)], 100), None);
    }
}
