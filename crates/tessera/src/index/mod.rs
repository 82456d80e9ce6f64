//! Index specs and CreateView (seed 002, docs/design.md V1–V4): turn a list of specs into a view
//! layout, NumPy's basic indexing with DL4J's inclusive intervals.

mod convert;
mod encoding;
mod resolve;

pub use convert::{Ellipsis, IntoIndex, IntoInterval, NewAxis};
pub use encoding::{
    decode, encode, ALL_TYPE, ELLIPSIS_TYPE, INTERVAL_TYPE, NEW_AXIS_TYPE, POINT_TYPE,
};
pub use resolve::{apply, points, resolve, ViewGeometry};

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
