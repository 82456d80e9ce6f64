//! The one call every fresh-output unary kernel goes through: `out = f(out, src)` over a
//! tensor's layout ([`map_into`]), and the layout-to-[`Operand`] conversion the tensor layer's
//! kernel calls share.

use super::Tensor;
use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::elementwise::{zip2, Operand};
use crate::layout::Layout;

/// The kernel operand of a layout: its strides and offset.
pub(super) fn operand(l: &Layout) -> Operand<'_> {
    Operand {
        strides: l.strides(),
        offset: l.offset(),
    }
}

/// `out = f(out, src)` where `out` is a fresh tensor (its storage is locked by nobody else)
/// of `src`'s shape.
pub(crate) fn map_into<O: Element, A: Element>(
    out: &Tensor,
    src: &Tensor,
    f: impl Fn(O, A) -> O + Sync,
) -> Result<()> {
    let mut o = out.dense_storage()?.write_as::<O>();
    let a = src.dense_storage()?.read_as::<A>();
    zip2(
        out.shape(),
        &mut o,
        operand(out.layout()),
        &a,
        operand(src.layout()),
        f,
    )
}
