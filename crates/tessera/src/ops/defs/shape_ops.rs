//! Ops that change shape or storage: expand, reshape, create_view (views) and repeat, tile,
//! cast_storage (copies).

use crate::autograd::Saves;
use crate::error::{ErrorKind, Result};
use crate::index;
use crate::layout::{infer_shape, Layout};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::{reshape_back, scatter, unbroadcast, unrepeat};
use crate::ops::stype::{StorageType, StypeDecision, TensorMeta};

op_params! {
    /// Parameters of `expand`.
    pub struct ExpandParams {
        /// Target sizes; -1 keeps a dim; new dims go in front (PyTorch `expand`).
        sizes: Vec<isize>;
    }
}

op_params! {
    /// Parameters of `reshape`.
    pub struct ReshapeParams {
        /// Target shape; one dim may be -1 (inferred).
        shape: Vec<isize>;
    }
}

op_params! {
    /// Parameters of `create_view`.
    pub struct CreateViewParams {
        /// Index specs in the INT64 encoding of `tessera::index` (type, count, stride, offsets, inclusive).
        index: Vec<crate::index::IndexSpec>;
    }
}

op_params! {
    /// Parameters of `repeat` and `tile`.
    pub struct RepeatParams {
        /// Repetitions per dim (non-negative).
        reps: Vec<isize>;
    }
}

op_params! {
    /// Parameters of `cast_storage`.
    pub struct CastStorageParams {
        /// Target storage type: default, csr or row_sparse.
        stype: StorageType;
    }
}

op_params! {
    /// No parameters.
    pub struct NoParams {}
}

fn one_dense(m: &TensorMeta, shape: Vec<usize>) -> Vec<TensorMeta> {
    vec![TensorMeta::dense(shape, m.dtype)]
}

/// Shape inference through the layout function itself, on a contiguous layout of the input.
fn via_layout(m: &TensorMeta, f: impl FnOnce(Layout) -> Result<Layout>) -> Result<Vec<TensorMeta>> {
    let l = f(Layout::contiguous(&m.shape)?)?;
    Ok(one_dense(m, l.dims().to_vec()))
}

fn counts(op: &str, reps: &[isize]) -> Result<Vec<usize>> {
    reps.iter()
        .map(|&r| {
            usize::try_from(r).map_err(|_| {
                crate::ops::params::bad(op, "reps", format!("negative repetition count {r}"))
            })
        })
        .collect()
}

fn repeat_shape(dims: &[usize], counts: &[usize], tile: bool) -> Result<Vec<usize>> {
    let (dims, counts) = if tile {
        let rank = dims.len().max(counts.len());
        let pad = |v: &[usize]| {
            std::iter::repeat_n(1, rank - v.len())
                .chain(v.iter().copied())
                .collect::<Vec<_>>()
        };
        (pad(dims), pad(counts))
    } else {
        if counts.len() < dims.len() {
            return Err(ErrorKind::InvalidArgument(format!(
                "repeat: {} counts for a tensor of rank {} (need at least as many)",
                counts.len(),
                dims.len()
            ))
            .into());
        }
        let pad = counts.len() - dims.len();
        (
            std::iter::repeat_n(1, pad)
                .chain(dims.iter().copied())
                .collect(),
            counts.to_vec(),
        )
    };
    dims.iter()
        .zip(&counts)
        .map(|(&d, &c)| {
            d.checked_mul(c).ok_or_else(|| {
                ErrorKind::ShapeOverflow(format!("repeat {dims:?} by {counts:?}")).into()
            })
        })
        .collect()
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<ExpandParams>::new(
            "expand",
            "View with size-1 dims broadcast to larger sizes (stride 0), PyTorch semantics (docs/design.md E1).",
            &["input"],
            &["output"],
            |p, m| via_layout(&m[0], |l| l.expand(&p.sizes)),
            |p, x| Ok(vec![x[0].expand_dense(&p.sizes)?]),
        )
        .stype(crate::ops::stype::view_stype)
        .backward("dx = g summed over the expanded dims", Saves::NOTHING, unbroadcast),
    );
    r.add(OpDef::<ReshapeParams>::new(
        "reshape",
        "Same elements in a new shape: a view when the layout allows it, else a copy (docs/design.md V5).",
        &["input"],
        &["output"],
        |p, m| {
            let n = m[0].shape.iter().product();
            Ok(one_dense(&m[0], infer_shape(&p.shape, n)?))
        },
        |p, x| Ok(vec![x[0].reshape_dense(&p.shape)?]),
    )
    .stype(crate::ops::stype::view_stype)
    .backward("dx = g reshaped to x's shape", Saves::NOTHING, reshape_back));
    r.add(
        OpDef::<CreateViewParams>::new(
            "create_view",
            "Zero-copy view selected by INT64-encoded index specs: point, interval, all, new axis, ellipsis (seed 002, docs/design.md V1-V4).",
            &["input"],
            &["output"],
            |p, m| {
            via_layout(&m[0], |l| index::apply(&l, &p.index))
        },
            |p, x| Ok(vec![x[0].index_dense(&p.index)?]),
        )
        .stype(crate::ops::stype::view_stype)
        .backward(
            "dx = zeros of x's shape with g written where the view reads (steps, negative steps, points and new axes included)",
            Saves::NOTHING,
            |p, ctx| {
                let g = scatter(ctx.input_meta(0), &ctx.dense_grad(0)?, |z| z.index_dense(&p.index))?;
                Ok(vec![Some(g)])
            },
        ),
    );
    r.add(
        OpDef::<RepeatParams>::new(
            "repeat",
            "New contiguous tensor repeating the input reps[i] times along each dim; new dims in front (PyTorch `repeat`, docs/design.md E2).",
            &["input"],
            &["output"],
            |p, m| Ok(one_dense(&m[0], repeat_shape(&m[0].shape, &counts("repeat", &p.reps)?, false)?)),
            |p, x| Ok(vec![x[0].repeat_dense(&counts("repeat", &p.reps)?)?]),
        )
        .backward("dx = g summed over the copies", Saves::NOTHING, |p, ctx| {
            let c = counts("repeat", &p.reps)?;
            Ok(vec![Some(unrepeat(&ctx.dense_grad(0)?, ctx.input_meta(0), &c)?)])
        }),
    );
    r.add(OpDef::<RepeatParams>::new(
        "tile",
        "NumPy `tile`: like repeat, with reps padded by 1 on the left when shorter than the rank.",
        &["input"],
        &["output"],
        |p, m| {
            Ok(one_dense(
                &m[0],
                repeat_shape(&m[0].shape, &counts("tile", &p.reps)?, true)?,
            ))
        },
        |p, x| Ok(vec![x[0].tile_dense(&counts("tile", &p.reps)?)?]),
    )
    .backward("dx = g summed over the copies", Saves::NOTHING, |p, ctx| {
        let m = ctx.input_meta(0);
        let reps = counts("tile", &p.reps)?;
        let c: Vec<usize> = std::iter::repeat_n(1, m.shape.len().saturating_sub(reps.len()))
            .chain(reps)
            .collect();
        Ok(vec![Some(unrepeat(&ctx.dense_grad(0)?, m, &c)?)])
    }));
    r.add(
        OpDef::<CastStorageParams>::new(
            "cast_storage",
            "Converts between storage types (default, csr, row_sparse); dense to sparse stores only non-zeros.",
            &["input"],
            &["output"],
            |p, m| Ok(vec![TensorMeta { stype: p.stype, ..m[0].clone() }]),
            |p, x| Ok(vec![x[0].cast_storage(p.stype)?]),
        )
        .stype(|p, s| StypeDecision {
            outputs: smallvec::smallvec![p.stype],
            mode: if s.iter().all(|&t| t == StorageType::Default) {
                crate::ops::DispatchMode::Dense
            } else {
                crate::ops::DispatchMode::Sparse
            },
        })
        .sparse(|p, x| Ok(vec![x[0].cast_storage(p.stype)?]))
        .backward("dx = g in x's storage type", Saves::NOTHING, |_, ctx| {
            Ok(vec![Some(ctx.grad(0).cast_storage(ctx.input_meta(0).stype)?)])
        }),
    );
}
