//! The one call every fresh-output unary kernel goes through: `out = f(out, src)` over a
//! tensor's layout ([`map_into`]), and the layout-to-[`Operand`] conversion the tensor layer's
//! kernel calls share.

use super::flat::map_dense;
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

/// Whether `t`'s innermost dim has more than one element and a negative stride (`flip` on
/// the last axis, `[..., ::-1]`): the general walk's run loops have no arm for it, so the
/// elementwise paths copy such an operand row-major first.
pub(super) fn inner_runs_backwards(t: &Tensor) -> bool {
    matches!((t.shape().last(), t.strides().last()), (Some(&n), Some(&s)) if n > 1 && s < 0)
}

/// A fresh tensor of `f(x)` for each element of `src`, of dtype `O`, in `src`'s memory order
/// (docs/design.md P6): one flat loop when `src` is one dense run ([`map_dense`], across
/// threads from the cut-over), else [`map_into`] over its layout.
pub(crate) fn map_new<O: Element, A: Element>(
    src: &Tensor,
    f: impl Fn(A) -> O + Sync,
) -> Result<Tensor> {
    if let Some(out) = map_dense(src, &f)? {
        return Ok(out);
    }
    // An innermost dim that runs backwards (`flip`, `[..., ::-1]`) is copied row-major
    // first, as `zip_new` does for binary ops (the general walk has no arm for a stride of
    // -1): `-flip(t, axis=1)` on 256x256 f32 took 41 us against NumPy's 37.
    let copied;
    let src = if inner_runs_backwards(src) {
        copied = src.copy_dense()?;
        if let Some(out) = map_dense(&copied, &f)? {
            return Ok(out);
        }
        &copied
    } else {
        src
    };
    let out = Tensor::for_overwrite_in_order(src.layout(), O::DTYPE)?;
    // `f` moves into the closure, so what it captured sits behind the reference the run
    // loops take as a parameter (kernels/elementwise/runs.rs) and stays in registers.
    map_into::<O, A>(&out, src, move |_, x| f(x))?;
    Ok(out)
}
