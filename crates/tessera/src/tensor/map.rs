//! The one call every fresh-output unary kernel goes through: `out = f(out, src)` over a
//! tensor's layout ([`map_into`]), and the layout-to-[`Operand`] conversion the tensor layer's
//! kernel calls share.

use super::flat::map_flat;
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

/// A fresh tensor of `f(x)` for each element of `src`, of dtype `O`, in `src`'s memory order
/// (docs/design.md P6): one flat loop when `src` is one run ([`map_flat`]), else
/// [`map_into`] over its layout.
pub(crate) fn map_new<O: Element, A: Element>(
    src: &Tensor,
    f: impl Fn(A) -> O + Sync,
) -> Result<Tensor> {
    if let Some(out) = map_flat(src, &f)? {
        return Ok(out);
    }
    let out = Tensor::for_overwrite_in_order(src.layout(), O::DTYPE)?;
    map_into::<O, A>(&out, src, |_, x| f(x))?;
    Ok(out)
}
