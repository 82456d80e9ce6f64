//! The INT64 encoding of index specs (seed 002, docs/design.md V4).
//!
//! A list of specs is the concatenation of one group per spec. Every group has the seed's
//! general pattern `[type, n, stride, offset_0 .. offset_{n-1}, inclusive]` (4 + n values):
//!
//! | spec | group | notes |
//! |---|---|---|
//! | `Point(i)` | `[POINT_TYPE=0, 1, 1, i, 0]` | |
//! | `Interval{start,end,step,inclusive}` | `[INTERVAL_TYPE=1, 2, step, start, end, inc]` | `step != 0`; an absent bound is [`ABSENT`]; `inc` is 0 or 1 |
//! | `All` | `[ALL_TYPE=2, 0, 1, 0]` | |
//! | `NewAxis` | `[NEW_AXIS_TYPE=3, 0, 1, 0]` | |
//! | `Ellipsis` | `[ELLIPSIS_TYPE=4, 0, 1, 0]` | Tessera extension |
//!
//! Deliberate differences from the seed's examples, which contradict its own pattern: the
//! interval's step sits in the `stride` slot (the seed lists both a stride of 1 and a trailing
//! stride), and `NewAxis` has no offsets (the seed writes `NEW_AXIS,1,10` with a count of one
//! but no offset). Decoding checks every field and returns [`ErrorKind::InvalidArgument`]
//! naming the group and the problem; it never panics.

use super::IndexSpec;
use crate::error::{ErrorKind, Result};

/// Type code of `Point`.
pub const POINT_TYPE: i64 = 0;
/// Type code of `Interval`.
pub const INTERVAL_TYPE: i64 = 1;
/// Type code of `All`.
pub const ALL_TYPE: i64 = 2;
/// Type code of `NewAxis`.
pub const NEW_AXIS_TYPE: i64 = 3;
/// Type code of `Ellipsis`.
pub const ELLIPSIS_TYPE: i64 = 4;
/// Marks an absent interval bound (`None`, like an omitted slice bound in Python).
pub const ABSENT: i64 = i64::MIN;

/// Encodes specs as INT64 values (see the module docs for the layout).
///
/// ```
/// use tessera::index::{decode, encode, IndexSpec};
/// let specs = [IndexSpec::Point(-1), IndexSpec::All, IndexSpec::interval(1, 4)];
/// let code = encode(&specs);
/// assert_eq!(code, vec![0, 1, 1, -1, 0, 2, 0, 1, 0, 1, 2, 1, 1, 4, 0]);
/// assert_eq!(decode(&code).unwrap(), specs);
/// ```
pub fn encode(specs: &[IndexSpec]) -> Vec<i64> {
    let bound = |b: Option<isize>| b.map_or(ABSENT, |x| x as i64);
    let mut out = Vec::with_capacity(specs.len() * 6);
    for spec in specs {
        match *spec {
            IndexSpec::Point(i) => out.extend([POINT_TYPE, 1, 1, i as i64, 0]),
            IndexSpec::Interval {
                start,
                end,
                step,
                inclusive,
            } => out.extend([
                INTERVAL_TYPE,
                2,
                step as i64,
                bound(start),
                bound(end),
                inclusive as i64,
            ]),
            IndexSpec::All => out.extend([ALL_TYPE, 0, 1, 0]),
            IndexSpec::NewAxis => out.extend([NEW_AXIS_TYPE, 0, 1, 0]),
            IndexSpec::Ellipsis => out.extend([ELLIPSIS_TYPE, 0, 1, 0]),
        }
    }
    out
}

/// Decodes INT64 values into specs, or an error naming the malformed group.
pub fn decode(code: &[i64]) -> Result<Vec<IndexSpec>> {
    let mut specs = Vec::new();
    let mut pos = 0;
    while pos < code.len() {
        let bad = |why: String| {
            ErrorKind::InvalidArgument(format!("index encoding, group at {pos}: {why}")).into()
        };
        let header = code
            .get(pos..pos + 3)
            .ok_or_else(|| bad("truncated header (need type, count, stride)".into()))?;
        let (kind, n, stride) = (header[0], header[1], header[2]);
        let want_n = match kind {
            POINT_TYPE => 1,
            INTERVAL_TYPE => 2,
            ALL_TYPE | NEW_AXIS_TYPE | ELLIPSIS_TYPE => 0,
            _ => return Err(bad(format!("unknown index type {kind}"))),
        };
        if n != want_n {
            return Err(bad(format!(
                "type {kind} needs {want_n} offsets, count says {n}"
            )));
        }
        let end = pos + 4 + want_n as usize;
        let group = code
            .get(pos..end)
            .ok_or_else(|| bad(format!("truncated: needs {} values", 4 + want_n)))?;
        let (offsets, inclusive) = (&group[3..3 + want_n as usize], group[3 + want_n as usize]);
        if !(0..=1).contains(&inclusive) {
            return Err(bad(format!(
                "inclusive flag must be 0 or 1, got {inclusive}"
            )));
        }
        if kind != INTERVAL_TYPE && (stride != 1 || inclusive != 0) {
            return Err(bad(format!(
                "type {kind} needs stride 1 and inclusive 0, got {stride} and {inclusive}"
            )));
        }
        let to_isize = |v: i64| {
            isize::try_from(v).map_err(|_| bad(format!("value {v} does not fit in isize")))
        };
        specs.push(match kind {
            POINT_TYPE => IndexSpec::Point(to_isize(offsets[0])?),
            INTERVAL_TYPE => {
                if stride == 0 {
                    return Err(bad("interval step must not be zero".into()));
                }
                let bound = |v: i64| {
                    if v == ABSENT {
                        Ok(None)
                    } else {
                        to_isize(v).map(Some)
                    }
                };
                IndexSpec::Interval {
                    start: bound(offsets[0])?,
                    end: bound(offsets[1])?,
                    step: to_isize(stride)?,
                    inclusive: inclusive == 1,
                }
            }
            ALL_TYPE => IndexSpec::All,
            NEW_AXIS_TYPE => IndexSpec::NewAxis,
            _ => IndexSpec::Ellipsis,
        });
        pos = end;
    }
    Ok(specs)
}
