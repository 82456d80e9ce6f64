//! Conversions that let [`idx!`](crate::idx) write index specs like NumPy subscripts.

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use super::IndexSpec;

/// The `np.newaxis` marker for [`idx!`](crate::idx).
#[derive(Clone, Copy, Debug)]
pub struct NewAxis;

/// The `...` marker for [`idx!`](crate::idx).
#[derive(Clone, Copy, Debug)]
pub struct Ellipsis;

/// Anything that is one index spec.
pub trait IntoIndex {
    /// The spec.
    fn into_index(self) -> IndexSpec;
}

/// Anything that is an interval and can take a step (`range; step` in [`idx!`](crate::idx)).
pub trait IntoInterval {
    /// The interval with this step.
    fn into_interval(self, step: isize) -> IndexSpec;
}

impl IntoIndex for IndexSpec {
    fn into_index(self) -> IndexSpec {
        self
    }
}
impl IntoIndex for NewAxis {
    fn into_index(self) -> IndexSpec {
        IndexSpec::NewAxis
    }
}
impl IntoIndex for Ellipsis {
    fn into_index(self) -> IndexSpec {
        IndexSpec::Ellipsis
    }
}
impl IntoIndex for RangeFull {
    fn into_index(self) -> IndexSpec {
        IndexSpec::All
    }
}
impl IntoInterval for RangeFull {
    fn into_interval(self, step: isize) -> IndexSpec {
        IndexSpec::Interval {
            start: None,
            end: None,
            step,
            inclusive: false,
        }
    }
}

fn interval(start: Option<isize>, end: Option<isize>, step: isize, inclusive: bool) -> IndexSpec {
    IndexSpec::Interval {
        start,
        end,
        step,
        inclusive,
    }
}

macro_rules! int_index {
    ($($t:ty),*) => {$(
        impl IntoIndex for $t {
            fn into_index(self) -> IndexSpec { IndexSpec::Point(self as isize) }
        }
        impl IntoInterval for Range<$t> {
            fn into_interval(self, step: isize) -> IndexSpec {
                interval(Some(self.start as isize), Some(self.end as isize), step, false)
            }
        }
        impl IntoInterval for RangeFrom<$t> {
            fn into_interval(self, step: isize) -> IndexSpec { interval(Some(self.start as isize), None, step, false) }
        }
        impl IntoInterval for RangeTo<$t> {
            fn into_interval(self, step: isize) -> IndexSpec { interval(None, Some(self.end as isize), step, false) }
        }
        impl IntoInterval for RangeInclusive<$t> {
            fn into_interval(self, step: isize) -> IndexSpec {
                interval(Some(*self.start() as isize), Some(*self.end() as isize), step, true)
            }
        }
        impl IntoInterval for RangeToInclusive<$t> {
            fn into_interval(self, step: isize) -> IndexSpec { interval(None, Some(self.end as isize), step, true) }
        }
        impl IntoIndex for Range<$t> {
            fn into_index(self) -> IndexSpec { self.into_interval(1) }
        }
        impl IntoIndex for RangeFrom<$t> {
            fn into_index(self) -> IndexSpec { self.into_interval(1) }
        }
        impl IntoIndex for RangeTo<$t> {
            fn into_index(self) -> IndexSpec { self.into_interval(1) }
        }
        impl IntoIndex for RangeInclusive<$t> {
            fn into_index(self) -> IndexSpec { self.into_interval(1) }
        }
        impl IntoIndex for RangeToInclusive<$t> {
            fn into_index(self) -> IndexSpec { self.into_interval(1) }
        }
    )*};
}
int_index!(i32, i64, isize);
