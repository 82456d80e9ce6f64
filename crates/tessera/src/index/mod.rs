//! Index specs and CreateView (seed 002, DESIGN V1–V4): turn a list of specs into a view
//! layout, NumPy's basic indexing with DL4J's inclusive intervals.

mod convert;
mod encoding;

pub use convert::{Ellipsis, IntoIndex, IntoInterval, NewAxis};
pub use encoding::{
    decode, encode, ALL_TYPE, ELLIPSIS_TYPE, INTERVAL_TYPE, NEW_AXIS_TYPE, POINT_TYPE,
};

use crate::error::{Result, TesseraError};
use crate::layout::Layout;
use crate::shape::{DimVec, Shape};

/// One index of a view (V1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexSpec {
    /// Selects one position and drops the dim; negative counts from the end (V2).
    Point(isize),
    /// `start..end` by `step`, NumPy slice semantics with clamped bounds (V2); `None` bounds
    /// are the ends the step walks from/to. `inclusive` includes `end` when the step lands on it.
    Interval {
        /// First position (default: 0, or the last for a negative step).
        start: Option<isize>,
        /// Bound where the walk stops (default: past the end in the step's direction).
        end: Option<isize>,
        /// Non-zero step; negative walks backwards (a view with negative stride).
        step: isize,
        /// DL4J's inclusive flag: `end` itself is included when reached.
        inclusive: bool,
    },
    /// Keeps the whole dim.
    All,
    /// Inserts a size-1 dim (V3).
    NewAxis,
    /// Stands for as many `All` as needed (at most one per index list).
    Ellipsis,
}

impl IndexSpec {
    /// `start..end` with step 1, exclusive.
    pub fn interval(start: isize, end: isize) -> IndexSpec {
        IndexSpec::Interval {
            start: Some(start),
            end: Some(end),
            step: 1,
            inclusive: false,
        }
    }

    fn consumes_dim(&self) -> bool {
        matches!(
            self,
            IndexSpec::Point(_) | IndexSpec::Interval { .. } | IndexSpec::All
        )
    }
}

/// Writes index specs like NumPy subscripts: integers are points, ranges are intervals
/// (`a..=b` is inclusive), `..` is all, `NewAxis` and `Ellipsis` are themselves, and
/// `range; step` gives a step. The result is an array of [`IndexSpec`].
///
/// A range here is an interval spec, not an iteration: `8..-100; -3` walks backwards from 8.
/// Clippy's `reversed_empty_ranges` lint does not know that; allow it where you write such specs.
///
/// ```
/// use tessera::index::{Ellipsis, IndexSpec, NewAxis};
/// use tessera::idx;
/// let specs = idx![1, 2..8; 2, Ellipsis, NewAxis, ..; -1];
/// assert_eq!(specs[0], IndexSpec::Point(1));
/// assert_eq!(specs[1], IndexSpec::Interval { start: Some(2), end: Some(8), step: 2, inclusive: false });
/// assert_eq!(specs[4], IndexSpec::Interval { start: None, end: None, step: -1, inclusive: false });
/// ```
#[macro_export]
macro_rules! idx {
    ($($e:expr $(; $step:expr)?),* $(,)?) => {
        [$($crate::__idx_item!($e $(; $step)?)),*]
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __idx_item {
    ($e:expr) => {
        $crate::index::IntoIndex::into_index($e)
    };
    ($e:expr; $step:expr) => {
        $crate::index::IntoInterval::into_interval($e, $step)
    };
}

/// Bounds of one interval after NumPy clamping: (first position, length, step).
fn resolve_interval(
    d: usize,
    start: Option<isize>,
    end: Option<isize>,
    step: isize,
    inclusive: bool,
) -> Result<(isize, usize)> {
    if step == 0 {
        return Err(TesseraError::InvalidArgument(
            "interval step must not be zero".into(),
        ));
    }
    let d = d as isize;
    // Python's slice.indices, with DL4J's inclusive end applied after normalising negatives
    // and before clamping (so an inclusive end never wraps around or revives a bound that
    // lies outside the dim).
    let wrap = |x: isize| if x < 0 { x.saturating_add(d) } else { x };
    let (first, len) = if step > 0 {
        let s = start.map_or(0, |s| wrap(s).clamp(0, d));
        let e = end.map_or(d, |e| {
            wrap(e).saturating_add(inclusive as isize).clamp(0, d)
        });
        (
            s,
            if e > s {
                ((e - s - 1) / step + 1) as usize
            } else {
                0
            },
        )
    } else {
        let s = start.map_or(d - 1, |s| wrap(s).clamp(-1, d - 1));
        let e = end.map_or(-1, |e| {
            wrap(e).saturating_sub(inclusive as isize).clamp(-1, d - 1)
        });
        (
            s,
            if s > e {
                ((s - e - 1) / (-step) + 1) as usize
            } else {
                0
            },
        )
    };
    Ok((first, len))
}

/// Applies index specs to a layout (V1–V3): the view's layout, or a typed error for an
/// out-of-range point, a zero step, two ellipses or too many indices.
///
/// ```
/// use tessera::{idx, Layout};
/// use tessera::index::{apply, Ellipsis, NewAxis};
/// let l = Layout::contiguous(&[4, 5, 6]).unwrap();
/// let v = apply(&l, &idx![1, Ellipsis, NewAxis, ..; -2]).unwrap();
/// assert_eq!(v.dims(), &[5, 1, 3]);
/// assert_eq!(v.strides()[2], -2);
/// assert_eq!(v.offset(), 30 + 5);
/// ```
pub fn apply(layout: &Layout, specs: &[IndexSpec]) -> Result<Layout> {
    let rank = layout.rank();
    let consumed = specs.iter().filter(|s| s.consumes_dim()).count();
    let ellipses = specs
        .iter()
        .filter(|s| matches!(s, IndexSpec::Ellipsis))
        .count();
    if ellipses > 1 {
        return Err(TesseraError::Index(
            "an index can only have a single ellipsis".into(),
        ));
    }
    if consumed > rank {
        return Err(TesseraError::Index(format!(
            "too many indices: tensor of rank {rank} indexed with {consumed}"
        )));
    }
    let mut dims: DimVec<usize> = DimVec::new();
    let mut strides: DimVec<isize> = DimVec::new();
    let mut offset = layout.offset() as isize;
    let mut axis = 0;
    let keep = |axis: usize, dims: &mut DimVec<usize>, strides: &mut DimVec<isize>| {
        dims.push(layout.dims()[axis]);
        strides.push(layout.strides()[axis]);
    };
    for spec in specs {
        match *spec {
            IndexSpec::Point(i) => {
                let d = layout.dims()[axis] as isize;
                let j = if i < 0 { i + d } else { i };
                if !(0..d).contains(&j) {
                    return Err(TesseraError::Index(format!(
                        "index {i} is out of bounds for axis {axis} with size {d}"
                    )));
                }
                offset += j * layout.strides()[axis];
                axis += 1;
            }
            IndexSpec::Interval {
                start,
                end,
                step,
                inclusive,
            } => {
                let (d, s) = (layout.dims()[axis], layout.strides()[axis]);
                let (first, len) = resolve_interval(d, start, end, step, inclusive)?;
                if len > 0 {
                    offset += first * s;
                }
                dims.push(len);
                // With at most one element the stride is never used; avoid overflow there.
                strides.push(if len > 1 { s * step } else { s });
                axis += 1;
            }
            IndexSpec::All => {
                keep(axis, &mut dims, &mut strides);
                axis += 1;
            }
            IndexSpec::NewAxis => {
                dims.push(1);
                strides.push(0);
            }
            IndexSpec::Ellipsis => {
                for _ in 0..rank - consumed {
                    keep(axis, &mut dims, &mut strides);
                    axis += 1;
                }
            }
        }
    }
    while axis < rank {
        keep(axis, &mut dims, &mut strides);
        axis += 1;
    }
    Ok(Layout::new(Shape::new(&dims, &strides)?, offset as usize))
}
