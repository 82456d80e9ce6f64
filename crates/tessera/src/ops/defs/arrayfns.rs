//! The Array API's sorting, searching, set and cumulative functions (kernels in
//! `crate::arrayfns`, docs/design.md section A): `sort`, `argsort`, `argmax`, `argmin`,
//! `where`, `cumulative_sum`, `cumulative_prod`, `unique_values`, `unique_all`.

use crate::arrayfns::cumulative::{cumulative_axis, cumulative_dtype, Accumulate};
use crate::autograd::{BackwardCtx, Saves};
use crate::dtype::DType;
use crate::error::Result;
use crate::layout::{broadcast_shapes, normalize_axis};
use crate::op_params;
use crate::ops::def::{OpDef, OpTable};
use crate::ops::grad_util::{cast_to, reduce_to};
use crate::ops::stype::{StypeDecision, TensorMeta};
use crate::promote::result_type;
use crate::tensor::Tensor;

use super::NoParams;

op_params! {
    /// Parameters of `sort` and `argsort`.
    pub struct SortParams {
        /// Axis to sort along (negative counts from the end).
        axis: isize = -1;
        /// Sort in descending order (NaNs first).
        descending: bool = false;
        /// Keep equal elements in their input order (`argsort` is always stable).
        stable: bool = true;
    }
}

/// Which end of a run of equal elements `searchsorted` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Before the equal elements.
    Left,
    /// After them.
    Right,
}

impl crate::ops::params::ParamValue for Side {
    const TYPE_NAME: &'static str = "left | right";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "left" => Ok(Side::Left),
            "right" => Ok(Side::Right),
            other => Err(format!("{other:?} is not left or right")),
        }
    }
    fn render(&self) -> String {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
        .into()
    }
}

op_params! {
    /// Parameters of `searchsorted`.
    pub struct SearchParams {
        /// `left` (before equal elements) or `right` (after them).
        side: Side = Side::Left;
    }
}

op_params! {
    /// Parameters of `isin`.
    pub struct IsinParams {
        /// Negate the result (`not in`).
        invert: bool = false;
    }
}

op_params! {
    /// Parameters of `argmax` and `argmin`.
    pub struct ArgExtremeParams {
        /// Axis to search along; None searches the flattened tensor.
        axis: Option<isize> = None;
        /// Keep the searched axis (all axes when None) as size-1 dims.
        keepdims: bool = false;
    }
}

op_params! {
    /// Parameters of `cumulative_sum` and `cumulative_prod`.
    pub struct CumulativeParams {
        /// Axis to accumulate along; may be None only for a 1-d input.
        axis: Option<isize> = None;
        /// Result dtype; None: int64 for bool and integers, else the input's dtype.
        dtype: Option<DType> = None;
        /// Start each lane with the identity (0 or 1), one element longer.
        include_initial: bool = false;
    }
}

fn same_shape(m: &TensorMeta, axis: isize, dtype: DType) -> Result<Vec<TensorMeta>> {
    normalize_axis(axis, m.shape.len())?;
    Ok(vec![TensorMeta::dense(m.shape.clone(), dtype)])
}

fn arg_extreme_meta(p: &ArgExtremeParams, m: &TensorMeta) -> Result<Vec<TensorMeta>> {
    let shape = match (p.axis, p.keepdims) {
        (None, true) => vec![1; m.shape.len()],
        (None, false) => vec![],
        (Some(a), keep) => {
            let a = normalize_axis(a, m.shape.len())?;
            let mut s = m.shape.clone();
            if keep {
                s[a] = 1;
            } else {
                s.remove(a);
            }
            s
        }
    };
    Ok(vec![TensorMeta::dense(shape, DType::I64)])
}

fn cumulative_meta(name: &str, p: &CumulativeParams, m: &TensorMeta) -> Result<Vec<TensorMeta>> {
    let axis = cumulative_axis(name, m.shape.len(), p.axis)?;
    let a = normalize_axis(axis, m.shape.len())?;
    let mut shape = m.shape.clone();
    shape[a] += p.include_initial as usize;
    Ok(vec![TensorMeta::dense(
        shape,
        cumulative_dtype(m.dtype, p.dtype),
    )])
}

pub(super) fn register(r: &mut OpTable) {
    r.add(
        OpDef::<SortParams>::new(
            "sort",
            "Sorted copy along `axis` (NumPy order: NaNs last, or first when descending; stable keeps equal elements in input order).",
            &["x"],
            &["y"],
            |p, m| same_shape(&m[0], p.axis, m[0].dtype),
            |p, x| Ok(vec![x[0].sort_dense(p.axis, p.descending, p.stable)?]),
        )
        .backward(
            "dx = g scattered back through the stable argsort of x (dx[idx[j]] = g[j] along the axis)",
            Saves::X,
            sort_backward,
        ),
    );
    r.add(
        OpDef::<SortParams>::new(
            "argsort",
            "int64 indices that sort along `axis` (always stable; NaNs last, or first when descending).",
            &["x"],
            &["indices"],
            |p, m| same_shape(&m[0], p.axis, DType::I64),
            |p, x| Ok(vec![x[0].argsort_dense(p.axis, p.descending)?]),
        )
        .not_differentiable("the output is integer indices"),
    );
    for (name, max, doc) in [
        ("argmax", true, "int64 index of the first maximum along `axis` (flattened when None); NaN counts as the maximum; an empty axis is an error."),
        ("argmin", false, "int64 index of the first minimum along `axis` (flattened when None); NaN counts as the minimum; an empty axis is an error."),
    ] {
        let dense: crate::ops::def::ComputeFn<ArgExtremeParams> = if max {
            |p, x| Ok(vec![x[0].arg_extreme_dense(p.axis, p.keepdims, true)?])
        } else {
            |p, x| Ok(vec![x[0].arg_extreme_dense(p.axis, p.keepdims, false)?])
        };
        r.add(
            OpDef::<ArgExtremeParams>::new(name, doc, &["x"], &["indices"], |p, m| arg_extreme_meta(p, &m[0]), dense)
                .not_differentiable("the output is integer indices"),
        );
    }
    r.add(
        OpDef::<NoParams>::new(
            "where",
            "Elements of x1 where condition is true (non-zero), else of x2; the three broadcast together, x1 and x2 promote to their result type.",
            &["condition", "x1", "x2"],
            &["y"],
            |_, m| {
                let dims = broadcast_shapes(&broadcast_shapes(&m[0].shape, &m[1].shape)?, &m[2].shape)?;
                Ok(vec![TensorMeta::dense(dims, result_type(m[1].dtype, m[2].dtype)?)])
            },
            |_, x| Ok(vec![Tensor::where_dense(&x[0], &x[1], &x[2])?]),
        )
        .backward(
            "dx1 = where(condition, g, 0), dx2 = where(condition, 0, g), each summed over its broadcast dims; none for condition",
            Saves::X,
            where_backward,
        )
        .gradient_op("where"),
    );
    r.add(
        OpDef::<CumulativeParams>::new(
            "cumulative_sum",
            "Running sum along `axis` (bool and integers accumulate in int64 unless `dtype` is given; integers wrap).",
            &["x"],
            &["y"],
            |p, m| cumulative_meta("cumulative_sum", p, &m[0]),
            |p, x| Ok(vec![x[0].cumulative_dense(Accumulate::Sum, p.axis, p.dtype, p.include_initial)?]),
        )
        .backward(
            "dx = reversed running sum of g along the axis (g without its initial element)",
            Saves::NOTHING,
            cumsum_backward,
        )
        .gradient_op("cumulative_sum"),
    );
    r.add(
        OpDef::<CumulativeParams>::new(
            "cumulative_prod",
            "Running product along `axis` (bool and integers accumulate in int64 unless `dtype` is given; integers wrap).",
            &["x"],
            &["y"],
            |p, m| cumulative_meta("cumulative_prod", p, &m[0]),
            |p, x| Ok(vec![x[0].cumulative_dense(Accumulate::Prod, p.axis, p.dtype, p.include_initial)?]),
        )
        .backward(
            "dx_i = sum over k >= i of g_k * prod_{j <= k, j != i} x_j, computed without division (exact at zeros); not differentiable twice",
            Saves::X,
            cumprod_backward,
        ),
    );
    r.add(
        OpDef::<NoParams>::new(
            "argwhere",
            "int64 [count, rank]: the coordinates of the non-zero elements (NaN is non-zero) in row-major order; Python's nonzero splits the columns. A 0-d input is an error. The count depends on the data.",
            &["x"],
            &["indices"],
            |_, m| Ok(vec![TensorMeta::dense(vec![m[0].shape.iter().product(), m[0].shape.len()], DType::I64)]),
            |_, x| Ok(vec![x[0].argwhere_dense()?]),
        )
        .data_dependent_shape()
        .not_differentiable("the output is integer indices"),
    );
    r.add(
        OpDef::<SearchParams>::new(
            "searchsorted",
            "int64 insertion points of x2's elements into the sorted 1-d x1 (read through the permutation `sorter` when it is non-empty), before (side=left) or after (side=right) equal elements; NaN sorts last.",
            &["x1", "x2", "sorter"],
            &["indices"],
            |_, m| {
                result_type(m[0].dtype, m[1].dtype)?;
                Ok(vec![TensorMeta::dense(m[1].shape.clone(), DType::I64)])
            },
            |p, x| Ok(vec![x[0].searchsorted_dense(&x[1], &x[2], p.side == Side::Right)?]),
        )
        .not_differentiable("the output is integer indices"),
    );
    r.add(
        OpDef::<IsinParams>::new(
            "isin",
            "bool, x1's shape: whether each element of x1 equals some element of x2 (any shape), compared in the promoted dtype; invert=true negates. NaN is in no set; -0.0 equals 0.0.",
            &["x1", "x2"],
            &["out"],
            |_, m| {
                result_type(m[0].dtype, m[1].dtype)?;
                Ok(vec![TensorMeta::dense(m[0].shape.clone(), DType::Bool)])
            },
            |p, x| Ok(vec![x[0].isin_dense(&x[1], p.invert)?]),
        )
        .not_differentiable("the output is bool"),
    );
    r.add(
        OpDef::<NoParams>::new(
            "unique_values",
            "The distinct elements of the flattened input, sorted (NaNs last, every NaN distinct; -0.0 equals 0.0). The length depends on the data.",
            &["x"],
            &["values"],
            |_, m| Ok(vec![TensorMeta::dense(vec![m[0].shape.iter().product()], m[0].dtype)]),
            |_, x| Ok(vec![x[0].unique_values_dense()?]),
        )
        .data_dependent_shape()
        .not_differentiable("a set function: the values are selected by comparisons"),
    );
    r.add(
        OpDef::<NoParams>::new(
            "unique_all",
            "The distinct elements of the flattened input, sorted (as unique_values), with the int64 index of each one's first occurrence, the inverse indices (x's shape) and the counts.",
            &["x"],
            &["values", "indices", "inverse_indices", "counts"],
            |_, m| {
                let n = m[0].shape.iter().product();
                Ok(vec![
                    TensorMeta::dense(vec![n], m[0].dtype),
                    TensorMeta::dense(vec![n], DType::I64),
                    TensorMeta::dense(m[0].shape.clone(), DType::I64),
                    TensorMeta::dense(vec![n], DType::I64),
                ])
            },
            |_, x| Ok(x[0].unique_all_dense()?.into()),
        )
        .stype(|_, s| StypeDecision::dense_only(s, 4))
        .data_dependent_shape()
        .not_differentiable("a set function: indices and counts are integers, the values are selected by comparisons"),
    );
}

/// Rule of `sort`.
fn sort_backward(p: &SortParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let x = ctx.input(0)?;
    let g = cast_to(ctx.grad(0).clone(), ctx.input_meta(0))?;
    Ok(vec![Some(x.unsort_dense(&g, p.axis, p.descending)?)])
}

/// Rule of `where`.
fn where_backward(_: &NoParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let c = ctx.input(0)?;
    let g = ctx.grad(0);
    let zero = Tensor::zeros(&[], g.dtype())?;
    let part = |i: usize, picked: bool| -> Result<Option<Tensor>> {
        if !ctx.needs(i) {
            return Ok(None);
        }
        let d = if picked {
            Tensor::where_(c, g, &zero)?
        } else {
            Tensor::where_(c, &zero, g)?
        };
        Ok(Some(reduce_to(&d, ctx.input_meta(i))?))
    };
    Ok(vec![None, part(1, true)?, part(2, false)?])
}

/// `g` without the initial element along the resolved axis when `include_initial` is set.
fn trimmed(p: &CumulativeParams, ctx: &BackwardCtx<'_>) -> Result<(Tensor, isize)> {
    let m = ctx.input_meta(0);
    let axis = cumulative_axis("cumulative", m.shape.len(), p.axis)?;
    let a = normalize_axis(axis, m.shape.len())?;
    let g = ctx.grad(0);
    let g = if p.include_initial {
        g.narrow(a as isize, 1, m.shape[a])?
    } else {
        g.clone()
    };
    Ok((g, a as isize))
}

/// Rule of `cumulative_sum`.
fn cumsum_backward(p: &CumulativeParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (g, a) = trimmed(p, ctx)?;
    let axes = [a];
    let rev = g
        .flip(Some(&axes))?
        .cumulative_sum(Some(a), None, false)?
        .flip(Some(&axes))?;
    Ok(vec![Some(cast_to(rev, ctx.input_meta(0))?)])
}

/// Rule of `cumulative_prod`.
fn cumprod_backward(p: &CumulativeParams, ctx: &BackwardCtx<'_>) -> Result<Vec<Option<Tensor>>> {
    let (g, a) = trimmed(p, ctx)?;
    let x = ctx.input(0)?;
    let dt = cumulative_dtype(x.dtype(), p.dtype);
    let xd = if x.dtype() == dt {
        x.clone()
    } else {
        x.astype(dt)?
    };
    let dx = xd.cumprod_backward_dense(&g, a)?;
    Ok(vec![Some(cast_to(dx, ctx.input_meta(0))?)])
}
