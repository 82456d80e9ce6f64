//! SBP (docs/design.md D1) and the balanced splitter (D2): which slice of a logical tensor each rank
//! holds.

use std::fmt;
use std::ops::Range;

use crate::error::{DistError, Result};

/// How partial values combine into the logical value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartialOp {
    /// The logical value is the sum of the ranks' values.
    Sum,
    /// The logical value is the maximum of the ranks' values.
    Max,
    /// The logical value is the minimum of the ranks' values.
    Min,
}

/// The placement of a logical tensor along one mesh axis (D1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sbp {
    /// Each rank holds a balanced slice of tensor axis `.0` (D2).
    Split(usize),
    /// Every rank holds the whole tensor.
    Broadcast,
    /// Every rank holds a tensor of the logical shape; combining them gives the logical value.
    Partial(PartialOp),
}

impl fmt::Display for Sbp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sbp::Split(a) => write!(f, "S({a})"),
            Sbp::Broadcast => write!(f, "B"),
            Sbp::Partial(PartialOp::Sum) => write!(f, "P(sum)"),
            Sbp::Partial(PartialOp::Max) => write!(f, "P(max)"),
            Sbp::Partial(PartialOp::Min) => write!(f, "P(min)"),
        }
    }
}

/// Formats an nd-SBP as `[S(0), B]`.
pub fn fmt_nd(sbp: &[Sbp]) -> String {
    let parts: Vec<String> = sbp.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// The elements rank `i` of `p` holds of a dim of size `n` (D2, BalancedSplitter):
/// `n/p + (i < n%p)` elements starting at `i*(n/p) + min(i, n%p)`; empty when `n < p` and
/// `i >= n`.
///
/// ```
/// use tessera_dist::balanced_range;
/// assert_eq!(balanced_range(10, 4, 1), 3..6);
/// assert_eq!(balanced_range(10, 4, 3), 8..10);
/// assert_eq!(balanced_range(2, 4, 3), 2..2);
/// ```
pub fn balanced_range(n: usize, p: usize, i: usize) -> Range<usize> {
    let (q, r) = (n / p.max(1), n % p.max(1));
    let start = i * q + i.min(r);
    start..start + q + usize::from(i < r)
}

/// The element counts of all `p` ranks for a dim of size `n` (D2).
pub fn balanced_counts(n: usize, p: usize) -> Vec<usize> {
    (0..p).map(|i| balanced_range(n, p, i).len()).collect()
}

/// Checks an nd-SBP against a tensor rank and a mesh.
pub fn check_sbp(sbp: &[Sbp], rank: usize, mesh: &[usize]) -> Result<()> {
    if sbp.len() != mesh.len() {
        return Err(DistError::Placement(format!(
            "nd-SBP {} has {} entries for a mesh of shape {mesh:?}",
            fmt_nd(sbp),
            sbp.len()
        )));
    }
    for s in sbp {
        if let Sbp::Split(a) = s {
            if *a >= rank {
                return Err(DistError::Placement(format!(
                    "{s} of a tensor of rank {rank}"
                )));
            }
        }
    }
    Ok(())
}

/// The index ranges (one per tensor dim) of the logical tensor that the rank at mesh
/// coordinates `coords` holds (D2): mesh axes split in order, each within the range the
/// previous axes left.
pub fn local_ranges(
    logical: &[usize],
    sbp: &[Sbp],
    mesh: &[usize],
    coords: &[usize],
) -> Result<Vec<Range<usize>>> {
    check_sbp(sbp, logical.len(), mesh)?;
    if coords.len() != mesh.len() || coords.iter().zip(mesh).any(|(c, m)| c >= m) {
        return Err(DistError::Placement(format!(
            "coordinates {coords:?} outside mesh {mesh:?}"
        )));
    }
    let mut ranges: Vec<Range<usize>> = logical.iter().map(|&n| 0..n).collect();
    for ((s, &m), &c) in sbp.iter().zip(mesh).zip(coords) {
        if let Sbp::Split(a) = *s {
            let r = &ranges[a];
            let sub = balanced_range(r.len(), m, c);
            ranges[a] = r.start + sub.start..r.start + sub.end;
        }
    }
    Ok(ranges)
}

/// The physical (local) shape of a logical tensor on the rank at `coords` (D2).
///
/// ```
/// use tessera_dist::{physical_shape, Sbp};
/// // D4's example: [5, 1] split on axis 0 over 4 ranks.
/// let shapes: Vec<_> = (0..4)
///     .map(|r| physical_shape(&[5, 1], &[Sbp::Split(0)], &[4], &[r]).unwrap())
///     .collect();
/// assert_eq!(shapes, vec![vec![2, 1], vec![1, 1], vec![1, 1], vec![1, 1]]);
/// ```
pub fn physical_shape(
    logical: &[usize],
    sbp: &[Sbp],
    mesh: &[usize],
    coords: &[usize],
) -> Result<Vec<usize>> {
    Ok(local_ranges(logical, sbp, mesh, coords)?
        .into_iter()
        .map(|r| r.len())
        .collect())
}

/// The SBP of the gradient of a tensor with SBP `s`, if gradients flow through it (not
/// through `Partial(max)` or `Partial(min)`).
fn dual_of(s: Sbp) -> Option<Sbp> {
    match s {
        Sbp::Split(k) => Some(Sbp::Split(k)),
        Sbp::Broadcast => Some(Sbp::Partial(PartialOp::Sum)),
        Sbp::Partial(PartialOp::Sum) => Some(Sbp::Broadcast),
        Sbp::Partial(PartialOp::Max | PartialOp::Min) => None,
    }
}

/// The SBP of the gradient of a tensor with SBP `s` (docs/design.md D10; the table is in [`crate::autograd`]).
pub fn dual(s: Sbp) -> Result<Sbp> {
    dual_of(s).ok_or_else(|| {
        DistError::Placement(format!(
            "no gradient flows through a {s:?} placement (which rank's value wins is not \
             differentiable); box to Broadcast before the op"
        ))
    })
}

/// [`dual`] of every mesh axis.
pub fn dual_nd(sbp: &[Sbp]) -> Result<Vec<Sbp>> {
    sbp.iter().map(|&s| dual(s)).collect()
}

/// Whether gradients flow through `sbp` (every axis has a [`dual`]).
pub(crate) fn has_dual(sbp: &[Sbp]) -> bool {
    sbp.iter().all(|&s| dual_of(s).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d2_balanced_ranges_tile_the_dim() {
        for n in 0..20 {
            for p in 1..7 {
                let mut next = 0;
                for i in 0..p {
                    let r = balanced_range(n, p, i);
                    assert_eq!(r.start, next);
                    assert_eq!(r.len(), n / p + usize::from(i < n % p));
                    next = r.end;
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn d2_two_d_mesh_splits_within_the_previous_range() {
        let s = [Sbp::Split(0), Sbp::Split(0)];
        // 10 rows over mesh 2x2: outer 0..5 / 5..10, inner halves of those.
        let r = local_ranges(&[10, 3], &s, &[2, 2], &[1, 0]).unwrap();
        assert_eq!(r, vec![5..8, 0..3]);
        let r = local_ranges(&[10, 3], &[Sbp::Split(1), Sbp::Split(0)], &[2, 2], &[1, 1]).unwrap();
        assert_eq!(r, vec![5..10, 2..3]);
        assert!(local_ranges(&[10], &[Sbp::Split(1)], &[2], &[0]).is_err());
        assert!(local_ranges(&[10], &[Sbp::Broadcast], &[2], &[2]).is_err());
    }
}
