//! Gradient-check cases of the Array API's elementwise functions (`ops/defs/ufunc.rs`),
//! with inputs drawn inside each function's domain and away from its kinks.

use super::{binary, unary, Builder, Values};
use std::collections::BTreeMap;

/// Adds the cases to the gate's table.
pub(super) fn add(c: &mut BTreeMap<&'static str, Builder>) {
    use Values::*;
    for name in ["acos", "asin", "atanh", "tan"] {
        c.insert(name, Box::new(unary(Unit)));
    }
    c.insert("acosh", Box::new(unary(AboveOne)));
    for name in ["asinh", "atan", "cos", "cosh", "sinh", "expm1", "positive"] {
        c.insert(name, Box::new(unary(Any)));
    }
    for name in ["log1p", "log2", "log10"] {
        c.insert(name, Box::new(unary(Positive)));
    }
    c.insert("reciprocal", Box::new(unary(AwayFromZero)));
    // Piecewise constant: zero gradient (random draws never sit on a jump).
    for name in ["ceil", "floor", "trunc", "round", "sign"] {
        c.insert(name, Box::new(unary(Any)));
    }
    c.insert("atan2", Box::new(binary(AwayFromZero, AwayFromZero)));
    c.insert("copysign", Box::new(binary(AwayFromZero, AwayFromZero)));
    c.insert("hypot", Box::new(binary(AwayFromZero, Any)));
    c.insert("logaddexp", Box::new(binary(Any, Any)));
    c.insert("remainder", Box::new(binary(Any, AwayFromZero)));
    c.insert("floor_divide", Box::new(binary(Any, AwayFromZero)));
}
