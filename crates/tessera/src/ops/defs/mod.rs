//! Registrations of every op, grouped by kind.

mod arrayfns;
mod arrayfns_join;
mod complex_parts;
mod elementwise_grads;
mod embedding;
mod factorization_grads;
mod factorizations;
mod fft;
mod gather;
mod linalg;
mod math;
mod quadratic;
mod reduce;
mod ring;
mod scalar;
mod shape_ops;
mod sparse_rules;
mod ufunc;
mod ufunc_grads;
mod views;

pub(crate) use arrayfns::{
    ArgExtremeParams, CumulativeParams, IsinParams, SearchParams, Side, SortParams,
};
pub(crate) use arrayfns_join::{ConcatParams, RepeatInterleaveParams, StackParams};
pub(crate) use factorizations::{CholeskyParams, QrParams, SvdParams};
pub(crate) use fft::FftParams;
pub(crate) use gather::{BooleanMaskParams, IndexGatherParams};
pub(crate) use linalg::DotParams;
pub(crate) use math::{astype_def, AstypeParams};
pub(crate) use reduce::{sum_def, ReduceParams};
pub(crate) use shape_ops::NoParams;
pub(crate) use shape_ops::{CreateViewParams, ExpandParams, RepeatParams, ReshapeParams};
pub(crate) use views::{
    AsStridedParams, AxesParams, NarrowParams, PermuteParams, ShapeParams, UnsqueezeParams,
};

use super::def::OpTable;

/// Adds every op to `r`.
pub(crate) fn register_all(r: &mut OpTable) {
    shape_ops::register(r);
    math::register(r);
    reduce::register(r);
    linalg::register(r);
    quadratic::register(r);
    ring::register(r);
    scalar::register(r);
    views::register(r);
    embedding::register(r);
    ufunc::register(r);
    arrayfns::register(r);
    arrayfns_join::register(r);
    arrayfns_join::register_repeat(r);
    gather::register(r);
    complex_parts::register(r);
    fft::register(r);
    factorizations::register(r);
}
