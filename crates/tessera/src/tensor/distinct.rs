//! Elementwise functions of broadcast operands computed once per distinct element
//! (docs/design.md P2, "How they run"): `f` of operands that all repeat along a dim (stride 0,
//! length above 1) repeats along it too, so `f` runs on the operands narrowed to length 1 on
//! every such dim and its result is broadcast back and copied out row-major.
//!
//! The callers are the expensive functions (the transcendental ones, `pow`, `atan2`...),
//! where one evaluation costs more than copying one element, and `clip`, whose general walk
//! over a broadcast input costs more than the copy out.

use smallvec::SmallVec;

use super::Tensor;
use crate::error::Result;
use crate::layout::broadcast_shapes;
use crate::shape::DimVec;
use crate::StorageType;

/// Calls below this many elements are left to the caller's usual path: the narrowing and
/// the copy out cost a few allocations, more than the evaluations they save there.
const MIN_ELEMENTS: usize = 1024;

/// The operands of an elementwise call with their shared broadcast taken out.
pub(crate) struct Distinct {
    /// The shape of the call (the operands' broadcast shape).
    pub shape: DimVec<usize>,
    /// Each operand broadcast to `shape`, then narrowed to length 1 on every dim where all
    /// of them have stride 0: every element of the call is `f` of one position here.
    pub operands: SmallVec<[Tensor; 2]>,
}

impl Distinct {
    /// The narrowed operands when they hold at most a quarter of the call's elements and the
    /// call has at least [`MIN_ELEMENTS`]; `None` otherwise (a copy out of a small saving is
    /// no saving), or when an operand is not dense storage.
    ///
    /// # Errors
    /// Operands whose shapes don't broadcast ([`crate::ErrorKind::Shape`]).
    pub(crate) fn of(operands: &[&Tensor]) -> Result<Option<Distinct>> {
        if operands.iter().any(|t| t.stype() != StorageType::Default) {
            return Ok(None);
        }
        let mut shape: DimVec<usize> = operands[0].shape().into();
        for t in &operands[1..] {
            if t.shape() != &shape[..] {
                shape = broadcast_shapes(&shape, t.shape())?.into();
            }
        }
        let n: usize = shape.iter().product();
        if n < MIN_ELEMENTS {
            return Ok(None);
        }
        let mut layouts = operands
            .iter()
            .map(|t| t.layout().broadcast_to(&shape))
            .collect::<Result<SmallVec<[_; 2]>>>()?;
        let mut base = n;
        for (axis, &d) in shape.iter().enumerate() {
            if d > 1 && layouts.iter().all(|l| l.strides()[axis] == 0) {
                for l in layouts.iter_mut() {
                    *l = l.narrow(axis as isize, 0, 1)?;
                }
                base /= d;
            }
        }
        if base.saturating_mul(4) > n {
            return Ok(None);
        }
        let operands = operands
            .iter()
            .zip(layouts)
            .map(|(t, l)| t.with_layout(l))
            .collect::<Result<_>>()?;
        Ok(Some(Distinct { shape, operands }))
    }

    /// `y`, the function of [`Distinct::operands`], broadcast back to the call's shape and
    /// copied out row-major.
    pub(crate) fn spread(&self, y: &Tensor) -> Result<Tensor> {
        y.with_layout(y.layout().broadcast_to(&self.shape)?)?
            .copy_dense()
    }
}
