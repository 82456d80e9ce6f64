//! The facts behind the common error kinds, so that callers can match on them instead of
//! parsing messages (as candle's error enum does): which axis of which rank, which shapes did
//! not broadcast, which dtypes did not fit which operation. Each kind keeps a free-text
//! `Other` for the rarer cases; the message of each fact is the one the kind always printed.

use crate::dtype::DType;

/// What [`crate::ErrorKind::Index`] is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexFacts {
    /// An axis outside `-rank..rank` (NumPy's `AxisError`).
    #[error("axis {axis} is out of bounds for a tensor of rank {rank}")]
    Axis {
        /// The axis asked for (negative counts from the end).
        axis: isize,
        /// The tensor's rank.
        rank: usize,
    },
    /// Any other index error.
    #[error("{0}")]
    Other(String),
}

/// What [`crate::ErrorKind::ShapeMismatch`] is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeFacts {
    /// Two shapes that do not broadcast together: at `dim` (counted in the broadcast
    /// result), sizes `sizes.0` and `sizes.1` differ and neither is 1.
    #[error(
        "shapes {lhs:?} and {rhs:?} cannot be broadcast together (dim {dim}: {} vs {})",
        .sizes.0,
        .sizes.1
    )]
    Broadcast {
        /// The left shape.
        lhs: Vec<usize>,
        /// The right shape.
        rhs: Vec<usize>,
        /// The first dim (of the broadcast result) where they disagree.
        dim: usize,
        /// The two sizes there.
        sizes: (usize, usize),
    },
    /// A shape that does not broadcast to a target shape (`broadcast_to`).
    #[error("cannot broadcast shape {from:?} to {to:?}")]
    BroadcastTo {
        /// The source shape.
        from: Vec<usize>,
        /// The target shape.
        to: Vec<usize>,
    },
    /// Any other shape mismatch.
    #[error("{0}")]
    Other(String),
}

/// What [`crate::ErrorKind::DType`] is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DTypeFacts {
    /// Two dtypes with no common dtype in Tessera: the array API standard defines none and
    /// NumPy's (`numpy`) would lose integer precision (`uint64` with a signed integer).
    #[error(
        "{lhs} and {rhs} have no common dtype (NumPy's {numpy} would lose integer precision); \
         cast one operand first"
    )]
    NoPromotion {
        /// The left dtype.
        lhs: DType,
        /// The right dtype.
        rhs: DType,
        /// NumPy's result type.
        numpy: &'static str,
    },
    /// An operation that needs two operands of one dtype got two.
    #[error("{op}: {what} dtype {got} differs from {expected}")]
    Differ {
        /// The operation.
        op: String,
        /// Which operand `got` is.
        what: &'static str,
        /// The dtype required (the destination's, the buffer's).
        expected: DType,
        /// The dtype given.
        got: DType,
    },
    /// An operation not defined for a dtype.
    #[error("{op} of a {dtype} tensor is not supported{hint}")]
    Unsupported {
        /// The operation.
        op: String,
        /// The dtype.
        dtype: DType,
        /// What to do instead (may be empty).
        hint: &'static str,
    },
    /// Any other dtype error.
    #[error("{0}")]
    Other(String),
}

macro_rules! from_text {
    ($($t:ty),*) => {$(
        impl From<String> for $t {
            fn from(s: String) -> Self {
                Self::Other(s)
            }
        }
        impl From<&str> for $t {
            fn from(s: &str) -> Self {
                Self::Other(s.to_string())
            }
        }
    )*};
}
from_text!(IndexFacts, ShapeFacts, DTypeFacts);
