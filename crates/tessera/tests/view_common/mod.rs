//! Helpers shared by the view test files: JSON fixture integers and a strategy of index specs.

// Each test file uses a subset of these helpers.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::Value;
use tessera::index::IndexSpec;

/// A JSON array of integers.
pub fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

/// Any index spec, with bounds and points in -9..9 and steps in -4..5 (never 0).
pub fn spec_strategy() -> impl Strategy<Value = IndexSpec> {
    let bound = prop::option::of(-9isize..9);
    prop_oneof![
        (-9isize..9).prop_map(IndexSpec::Point),
        (
            bound.clone(),
            bound,
            prop_oneof![-4isize..0, 1isize..5],
            any::<bool>()
        )
            .prop_map(|(start, end, step, inclusive)| IndexSpec::Interval {
                start,
                end,
                step,
                inclusive
            }),
        Just(IndexSpec::All),
        Just(IndexSpec::NewAxis),
        Just(IndexSpec::Ellipsis),
    ]
}
