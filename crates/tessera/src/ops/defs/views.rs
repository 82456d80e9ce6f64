//! The view ops that the typed `Tensor` methods call (permute, squeeze, unsqueeze, flip,
//! broadcast_to, view, narrow, as_strided) and `copy`, each with its backward rule, so that
//! views are recorded by autograd like every other op (docs/design.md G1).

use super::shape_ops::NoParams;
use crate::autograd::Saves;
use crate::error::Result;
use crate::layout::{infer_shape, Layout};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::{as_strided_back, identity, reshape_back, scatter, unbroadcast};
use crate::ops::params::bad;
use crate::ops::stype::{view_stype, TensorMeta};

op_params! {
    /// Parameters of `permute`.
    pub struct PermuteParams {
        /// The new order of the dims (negative counts from the end).
        axes: Vec<isize>;
    }
}

op_params! {
    /// Parameters of `squeeze` and `flip`.
    pub struct AxesParams {
        /// The dims (negative counts from the end); None means all (squeeze: all size-1 dims).
        axis: Option<Vec<isize>> = None;
    }
}

op_params! {
    /// Parameters of `unsqueeze`.
    pub struct UnsqueezeParams {
        /// Where the new size-1 dim goes (negative counts from the end of the result).
        axis: isize;
    }
}

op_params! {
    /// Parameters of `broadcast_to` and `view`.
    pub struct ShapeParams {
        /// The target shape (`view`: one dim may be -1).
        shape: Vec<isize>;
    }
}

op_params! {
    /// Parameters of `narrow`.
    pub struct NarrowParams {
        /// The dim (negative counts from the end).
        axis: isize;
        /// First position.
        start: usize;
        /// Number of positions.
        length: usize;
    }
}

op_params! {
    /// Parameters of `as_strided`.
    pub struct AsStridedParams {
        /// Dims of the view.
        shape: Vec<isize>;
        /// Element strides (may be negative or zero).
        strides: Vec<isize>;
        /// Storage offset of the first element.
        offset: usize = 0;
    }
}

fn dims(op: &str, shape: &[isize]) -> Result<Vec<usize>> {
    shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad(op, "shape", format!("negative dim {d}"))))
        .collect()
}

/// Shape inference through a layout function applied to a contiguous layout of the input.
fn via_layout(m: &TensorMeta, f: impl FnOnce(Layout) -> Result<Layout>) -> Result<Vec<TensorMeta>> {
    let l = f(Layout::contiguous(&m.shape)?)?;
    Ok(vec![TensorMeta::dense(l.dims().to_vec(), m.dtype)])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<PermuteParams>::new(
            "permute",
            "View with the dims reordered (NumPy `transpose(axes)`, PyTorch `permute`).",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.permute(&p.axes)),
            |p, x| Ok(vec![x[0].permute_dense(&p.axes)?]),
        )
        .stype(view_stype)
        .backward(
            "dx = g permuted by the inverse order",
            Saves::NOTHING,
            |p, ctx| {
                let rank = p.axes.len() as isize;
                let mut inv = vec![0isize; p.axes.len()];
                for (i, &a) in p.axes.iter().enumerate() {
                    inv[a.rem_euclid(rank.max(1)) as usize] = i as isize;
                }
                Ok(vec![Some(ctx.dense_grad(0)?.permute(&inv)?)])
            },
        ),
    );
    r.add(
        OpDef::<AxesParams>::new(
            "squeeze",
            "View without size-1 dims (all, or the listed ones, which must have size 1).",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.squeeze(p.axis.as_deref())),
            |p, x| Ok(vec![x[0].squeeze_dense(p.axis.as_deref())?]),
        )
        .stype(view_stype)
        .backward("dx = g reshaped to x's shape", Saves::NOTHING, reshape_back),
    );
    r.add(
        OpDef::<UnsqueezeParams>::new(
            "unsqueeze",
            "View with a size-1 dim inserted at `axis`.",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.unsqueeze(p.axis)),
            |p, x| Ok(vec![x[0].unsqueeze_dense(p.axis)?]),
        )
        .stype(view_stype)
        .backward("dx = g reshaped to x's shape", Saves::NOTHING, reshape_back),
    );
    r.add(
        OpDef::<AxesParams>::new(
            "flip",
            "View with the listed dims (all for none) reversed: negative strides, no copy.",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.flip(p.axis.as_deref())),
            |p, x| Ok(vec![x[0].flip_dense(p.axis.as_deref())?]),
        )
        .stype(view_stype)
        .backward(
            "dx = g flipped along the same dims",
            Saves::NOTHING,
            |p, ctx| Ok(vec![Some(ctx.dense_grad(0)?.flip(p.axis.as_deref())?)]),
        ),
    );
    r.add(
        OpDef::<ShapeParams>::new(
            "broadcast_to",
            "NumPy `broadcast_to`: a stride-0 view of the input broadcast to `shape` (writes into it are errors).",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.broadcast_to(&dims("broadcast_to", &p.shape)?)),
            |p, x| Ok(vec![x[0].broadcast_to_dense(&dims("broadcast_to", &p.shape)?)?]),
        )
        .stype(view_stype)
        .backward("dx = g summed over the broadcast dims", Saves::NOTHING, unbroadcast),
    );
    r.add(
        OpDef::<ShapeParams>::new(
            "view",
            "Reshape that never copies (PyTorch `view`): an error when the layout cannot express the shape; -1 infers one dim.",
            &["input"],
            &["output"],
            |p, m| {
                let n = m[0].shape.iter().product();
                Ok(vec![TensorMeta::dense(infer_shape(&p.shape, n)?, m[0].dtype)])
            },
            |p, x| Ok(vec![x[0].view_dense(&p.shape)?]),
        )
        .stype(view_stype)
        .backward("dx = g reshaped to x's shape", Saves::NOTHING, reshape_back),
    );
    r.add(
        OpDef::<NarrowParams>::new(
            "narrow",
            "View of `length` positions from `start` along `axis` (PyTorch `narrow`).",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.narrow(p.axis, p.start, p.length)),
            |p, x| Ok(vec![x[0].narrow_dense(p.axis, p.start, p.length)?]),
        )
        .stype(view_stype)
        .backward(
            "dx = zeros of x's shape with g in the narrowed part",
            Saves::NOTHING,
            |p, ctx| {
                let g = scatter(ctx.input_meta(0), &ctx.dense_grad(0)?, |z| {
                    z.narrow_dense(p.axis, p.start, p.length)
                })?;
                Ok(vec![Some(g)])
            },
        ),
    );
    r.add(
        OpDef::<AsStridedParams>::new(
            "as_strided",
            "View with explicit dims, element strides and storage offset (`torch.as_strided`); an error if any element lies outside the storage.",
            &["input"],
            &["output"],
            |p, m| Ok(vec![TensorMeta::dense(dims("as_strided", &p.shape)?, m[0].dtype)]),
            |p, x| Ok(vec![x[0].as_strided_dense(&dims("as_strided", &p.shape)?, &p.strides, p.offset)?]),
        )
        .stype(view_stype)
        .backward(
            "g added into zeros of the storage through the view's layout (elements reached twice add up), read back through x's layout",
            Saves::X,
            |p, ctx| {
                let g = as_strided_back(ctx.input(0)?, &ctx.dense_grad(0)?, &dims("as_strided", &p.shape)?, &p.strides, p.offset)?;
                Ok(vec![Some(g)])
            },
        ),
    );
    r.add(
        OpDef::<NoParams>::new(
            "copy",
            "A new C-contiguous tensor holding a copy of the elements.",
            &["input"],
            &["output"],
            |_, m| Ok(vec![TensorMeta::dense(m[0].shape.clone(), m[0].dtype)]),
            |_, x| Ok(vec![x[0].copy_dense()?]),
        )
        .backward("dx = g", Saves::NOTHING, identity),
    );
}
