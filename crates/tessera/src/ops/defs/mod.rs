//! Registrations of every op, grouped by kind.

mod linalg;
mod math;
mod quadratic;
mod ring;
mod scalar;
mod shape_ops;
mod sparse_rules;

pub(crate) use math::{astype_def, sum_def, AstypeParams, ReduceParams};

use super::def::OpTable;

/// Adds every op to `r`.
pub(crate) fn register_all(r: &mut OpTable) {
    shape_ops::register(r);
    math::register(r);
    linalg::register(r);
    quadratic::register(r);
    ring::register(r);
    scalar::register(r);
}
