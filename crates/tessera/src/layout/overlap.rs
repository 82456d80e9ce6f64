//! Write safety of a layout (docs/design.md V7): a destination must map distinct indices to
//! distinct storage elements, or an elementwise write would race with itself.

use super::Layout;
use crate::error::{ErrorKind, Result};

impl Layout {
    /// Errors with [`ErrorKind::OverlappingWrite`] unless distinct indices of this layout
    /// reach distinct storage elements, i.e. unless it can be written elementwise (V7). Empty
    /// and one-element layouts are always writable.
    ///
    /// A stride 0 on a dim of size > 1 fails at once. Otherwise the dims sorted by |stride|
    /// are checked to nest (each stride beyond the reach of all smaller ones), which proves
    /// that nothing overlaps in O(rank log rank); a layout that does not nest (an interleaved
    /// `as_strided` view) is checked exactly by marking every reached offset, O(numel) time
    /// and O(span) memory (the span lies inside the storage of any valid view).
    ///
    /// ```
    /// use tessera::Layout;
    /// let l = Layout::contiguous(&[2, 3]).unwrap();
    /// assert!(l.check_writable().is_ok());
    /// assert!(l.expand(&[4, 2, 3]).unwrap().check_writable().is_err()); // stride 0
    /// let interleaved = Layout::as_strided(&[2, 2], &[3, 2], 0, 8).unwrap(); // 0 2 3 5
    /// assert!(interleaved.check_writable().is_ok());
    /// let folded = Layout::as_strided(&[2, 3], &[2, 1], 0, 8).unwrap(); // 0 1 2 2 3 4
    /// assert!(folded.check_writable().is_err());
    /// ```
    pub fn check_writable(&self) -> Result<()> {
        check_writable_parts(self.dims(), self.strides())
    }
}

/// [`Layout::check_writable`] on bare dims and strides (same length): errors with
/// [`ErrorKind::OverlappingWrite`] unless distinct indices reach distinct offsets. The
/// exact (non-nested) check allocates one flag per offset of the span, so callers bound the
/// span first (a valid view's span lies inside its storage); a span that does not fit in
/// `isize` is refused as an overlap-free-unprovable layout.
pub(crate) fn check_writable_parts(dims: &[usize], strides: &[isize]) -> Result<()> {
    if dims.iter().product::<usize>() <= 1 || dims.contains(&0) {
        return Ok(());
    }
    let err = || {
        ErrorKind::OverlappingWrite(format!(
            "cannot write into a view with dims {dims:?} and strides {strides:?}: elements overlap"
        ))
        .into()
    };
    let mut axes: Vec<(usize, usize)> = dims
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d > 1)
        .map(|(&d, &s)| (d, s.unsigned_abs()))
        .collect();
    if axes.iter().any(|&(_, s)| s == 0) {
        return Err(err());
    }
    axes.sort_by_key(|&(_, s)| s);
    let mut reach = 0usize;
    let mut nested = true;
    for &(d, s) in &axes {
        nested &= s > reach;
        reach = reach.saturating_add((d - 1).saturating_mul(s));
    }
    if nested {
        return Ok(());
    }
    // Not nested: mark every reached offset, relative to the lowest one. `reach` is the
    // span's length minus one (saturated: such a span cannot be in any buffer).
    let lo = dims
        .iter()
        .zip(strides)
        .filter(|(_, &s)| s < 0)
        .try_fold(0isize, |lo, (&d, &s)| {
            isize::try_from(d - 1).ok()?.checked_mul(s)?.checked_add(lo)
        });
    let (Some(lo), Some(len)) = (lo, reach.checked_add(1)) else {
        return Err(err());
    };
    let mut seen = crate::storage::try_vec(false, len)?;
    let mut overlap = false;
    for_each_offset(dims, strides, -lo, |at| {
        overlap |= std::mem::replace(&mut seen[at as usize], true);
    });
    if overlap {
        Err(err())
    } else {
        Ok(())
    }
}

/// Calls `f` with `base + index · strides` for every index of `dims` (row-major; none when a
/// dim is 0).
fn for_each_offset(dims: &[usize], strides: &[isize], base: isize, mut f: impl FnMut(isize)) {
    if dims.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; dims.len()];
    let mut off = base;
    loop {
        f(off);
        let mut k = dims.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            off += strides[k];
            if idx[k] < dims[k] {
                break;
            }
            off -= strides[k] * dims[k] as isize;
            idx[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use crate::layout::Layout;
    use crate::shape::Shape;

    /// The reference: the offsets of all indices, each computed as a dot product, are
    /// distinct.
    fn distinct_offsets(dims: &[usize], strides: &[isize]) -> bool {
        let mut all: Vec<Vec<usize>> = vec![vec![]];
        for &d in dims {
            all = all
                .into_iter()
                .flat_map(|p| {
                    (0..d).map(move |i| {
                        let mut q = p.clone();
                        q.push(i);
                        q
                    })
                })
                .collect();
        }
        let mut seen = HashSet::new();
        all.iter().all(|ix| {
            let off: isize = ix.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum();
            seen.insert(off)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn writable_exactly_when_offsets_are_distinct(
            geometry in (0usize..=4).prop_flat_map(|r| (
                prop::collection::vec(0usize..=4, r),
                prop::collection::vec(-7isize..=7, r),
            ))
        ) {
            let (dims, strides) = geometry;
            let layout = Layout::new(Shape::new(&dims, &strides).unwrap(), 1000);
            prop_assert_eq!(
                layout.check_writable().is_ok(),
                distinct_offsets(&dims, &strides),
                "dims {:?} strides {:?}", dims, strides
            );
        }
    }
}
