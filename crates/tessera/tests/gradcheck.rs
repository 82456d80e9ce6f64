//! The gradient-check gate (docs/design.md G1): for every differentiable op in the registry,
//! the analytic gradient (autograd) against central finite differences in float64, on random
//! inputs, including broadcast and non-contiguous ones (transposed, negative-stride,
//! expanded). An op that declares a backward rule but has no case here fails the gate.

mod elementwise_cases;

use std::collections::BTreeMap;

#[path = "gradcheck_arrayfns.rs"]
mod arrayfns_cases;
#[path = "gradcheck_linalg.rs"]
mod linalg_cases;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tessera::index::IndexSpec;
use tessera::ops::{self, registry, Gradient};
use tessera::{autograd, DType, StorageType, Tensor};

/// How an input reaches the op: the leaf itself, or a view of a leaf laid out differently.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Contiguous,
    /// The leaf has the shape reversed; the op sees its transpose.
    Transposed,
    /// The op sees the leaf flipped along dim 0.
    Reversed,
    /// The leaf has size 1 in dim 0; the op sees it expanded.
    Expanded,
}

/// One input: its values' shape as the op sees it, whether it requires a gradient, and how
/// it is laid out.
struct Input {
    shape: Vec<usize>,
    grad: bool,
    layout: Layout,
    /// Draws values away from points where the op is not differentiable.
    kind: Values,
}

#[derive(Clone, Copy)]
enum Values {
    Any,
    Positive,
    AwayFromZero,
    /// Integer ids below this bound (an int64 input that takes no gradient).
    Ids(usize),
    /// Inside (-1, 1), away from the ends.
    Unit,
    /// Above 1, away from it.
    AboveOne,
    /// A bool mask (takes no gradient): true, false, true, ... (`check` writes the pattern).
    Mask,
    /// Stacks of `n x n` matrices, strongly diagonally dominant (3 on the diagonal, at most
    /// 0.5 off it, `check` writes the pattern): well conditioned, positive definite as a
    /// symmetric completion of either triangle.
    Dominant(usize),
}

struct Case {
    inputs: Vec<Input>,
    params: Vec<(&'static str, String)>,
    /// A csr input 0 built from these values (only `dot`'s sparse case).
    csr_lhs: bool,
}

fn input(shape: &[usize], layout: Layout, kind: Values) -> Input {
    Input {
        shape: shape.to_vec(),
        grad: true,
        layout,
        kind,
    }
}

fn draw(rng: &mut StdRng, kind: Values) -> f64 {
    match kind {
        Values::Any => rng.random_range(-2.0..2.0),
        Values::Positive => rng.random_range(0.5..2.0),
        Values::Ids(n) => rng.random_range(0..n) as f64,
        Values::Unit => rng.random_range(-0.9..0.9),
        Values::AboveOne => rng.random_range(1.2..3.0),
        Values::Mask | Values::Dominant(_) => 1.0,
        Values::AwayFromZero => {
            let v: f64 = rng.random_range(0.3..2.0);
            if rng.random_bool(0.5) {
                v
            } else {
                -v
            }
        }
    }
}

/// The dtype of an input that takes no gradient (ids, masks).
fn integer_kind(kind: Values) -> Option<DType> {
    match kind {
        Values::Ids(_) => Some(DType::I64),
        Values::Mask => Some(DType::Bool),
        _ => None,
    }
}

/// The leaf's shape for an input seen with `shape` through `layout`.
fn leaf_shape(i: &Input) -> Vec<usize> {
    match i.layout {
        Layout::Transposed => i.shape.iter().rev().copied().collect(),
        Layout::Expanded if !i.shape.is_empty() => {
            let mut s = i.shape.clone();
            s[0] = 1;
            s
        }
        _ => i.shape.clone(),
    }
}

/// What the op sees of a leaf.
fn present(leaf: &Tensor, i: &Input) -> Tensor {
    match i.layout {
        Layout::Contiguous => leaf.clone(),
        Layout::Transposed => leaf.t().unwrap(),
        Layout::Reversed if !i.shape.is_empty() => leaf.flip(Some(&[0])).unwrap(),
        Layout::Expanded if !i.shape.is_empty() => leaf
            .expand(&i.shape.iter().map(|&d| d as isize).collect::<Vec<_>>())
            .unwrap(),
        _ => leaf.clone(),
    }
}

/// `sum(op(inputs) * weights)` for leaves holding `values`.
fn loss(
    name: &str,
    case: &Case,
    values: &[Vec<f64>],
    weights: &Tensor,
    leaves_out: Option<&mut Vec<Tensor>>,
) -> Tensor {
    let mut leaves = Vec::new();
    let mut seen = Vec::new();
    for (k, (i, v)) in case.inputs.iter().zip(values).enumerate() {
        let leaf = Tensor::from_vec(v.clone(), &leaf_shape(i)).unwrap();
        if let Some(dtype) = integer_kind(i.kind) {
            let ids = leaf.astype(dtype).unwrap();
            leaves.push(ids.clone());
            seen.push(ids);
            continue;
        }
        let leaf = if i.grad && !(case.csr_lhs && k == 0) {
            leaf.requires_grad_(true).unwrap()
        } else {
            leaf
        };
        let mut x = present(&leaf, i);
        if case.csr_lhs && k == 0 {
            x = x.cast_storage(StorageType::Csr).unwrap();
        }
        leaves.push(leaf);
        seen.push(x);
    }
    let kv: Vec<(&str, &str)> = case.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let y = ops::invoke(name, &seen, &kv).unwrap_or_else(|e| panic!("{name}: {e}"));
    let y = y[checked_output(name)].astype(DType::F64).unwrap();
    let l = y.mul(weights).unwrap().sum(None, false).unwrap();
    if let Some(out) = leaves_out {
        *out = leaves;
    }
    l
}

/// The output whose gradient the gate checks: the first, except `slogdet`'s `logabsdet` and
/// `svd`'s `S` (the differentiable ones).
fn checked_output(name: &str) -> usize {
    match name {
        "slogdet" | "svd" => 1,
        _ => 0,
    }
}

fn output_shape(name: &str, case: &Case, values: &[Vec<f64>]) -> Vec<usize> {
    let _g = autograd::no_grad();
    let mut seen = Vec::new();
    for (k, (i, v)) in case.inputs.iter().zip(values).enumerate() {
        let mut x = present(&Tensor::from_vec(v.clone(), &leaf_shape(i)).unwrap(), i);
        if let Some(dtype) = integer_kind(i.kind) {
            x = x.astype(dtype).unwrap();
        }
        if case.csr_lhs && k == 0 {
            x = x.cast_storage(StorageType::Csr).unwrap();
        }
        seen.push(x);
    }
    let kv: Vec<(&str, &str)> = case.params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    ops::invoke(name, &seen, &kv).unwrap_or_else(|e| panic!("{name}: {e}"))[checked_output(name)]
        .shape()
        .to_vec()
}

/// Checks one case: analytic against numeric gradient of every input that requires one.
fn check(name: &str, case: &Case, rng: &mut StdRng) {
    let values: Vec<Vec<f64>> = case
        .inputs
        .iter()
        .map(|i| {
            let n: usize = leaf_shape(i).iter().product();
            (0..n)
                .map(|j| match i.kind {
                    // A fixed pattern: the op's `count` parameter must know the true entries.
                    Values::Mask => (j % 2 == 0) as u8 as f64,
                    Values::Dominant(n) => {
                        let diag = (j % (n * n)) % (n + 1) == 0;
                        rng.random_range(-0.5..0.5) + if diag { 3.0 } else { 0.0 }
                    }
                    _ => draw(rng, i.kind),
                })
                .collect()
        })
        .collect();
    let out_shape = output_shape(name, case, &values);
    let n_out: usize = out_shape.iter().product();
    let w: Vec<f64> = (0..n_out).map(|_| rng.random_range(-1.0..1.0)).collect();
    let weights = Tensor::from_vec(w, &out_shape).unwrap();
    let mut leaves = Vec::new();
    let l = loss(name, case, &values, &weights, Some(&mut leaves));
    autograd::backward(&l, None, false).unwrap_or_else(|e| panic!("{name}: backward: {e}"));
    let h = 1e-6;
    for (k, i) in case.inputs.iter().enumerate() {
        if !i.grad || (case.csr_lhs && k == 0) || integer_kind(i.kind).is_some() {
            continue;
        }
        let g = leaves[k]
            .grad()
            .unwrap_or_else(|| panic!("{name}: input {k} got no gradient"));
        assert_eq!(g.dtype(), DType::F64, "{name}: gradient dtype");
        assert_eq!(g.shape(), &leaf_shape(i)[..], "{name}: gradient shape");
        let stored_rows = (g.stype() == StorageType::RowSparse).then(|| row_indices(&g));
        let analytic = g.to_vec::<f64>().unwrap();
        for j in 0..values[k].len() {
            let mut plus = values.clone();
            plus[k][j] += h;
            let mut minus = values.clone();
            minus[k][j] -= h;
            let (lp, lm) = {
                let _g = autograd::no_grad();
                (
                    loss(name, case, &plus, &weights, None)
                        .item::<f64>()
                        .unwrap(),
                    loss(name, case, &minus, &weights, None)
                        .item::<f64>()
                        .unwrap(),
                )
            };
            let numeric = (lp - lm) / (2.0 * h);
            let tol = 1e-5 * (1.0 + numeric.abs());
            assert!(
                (analytic[j] - numeric).abs() <= tol,
                "{name} input {k} ({:?}, shape {:?}) element {j}: analytic {} vs numeric {numeric}; params {:?}",
                i.layout,
                i.shape,
                analytic[j],
                case.params
            );
            if let Some(rows) = &stored_rows {
                let row = j / (values[k].len() / leaf_shape(i)[0].max(1)).max(1);
                if !rows.contains(&row) {
                    assert!(
                        numeric.abs() < 1e-9,
                        "{name}: unstored row {row} has gradient {numeric}"
                    );
                }
            }
        }
    }
}

/// The stored row indices of a row_sparse tensor.
fn row_indices(t: &Tensor) -> Vec<usize> {
    let rs = t.as_row_sparse().unwrap();
    rs.indices()
        .to_vec::<i64>()
        .unwrap()
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

const LAYOUTS: [Layout; 4] = [
    Layout::Contiguous,
    Layout::Transposed,
    Layout::Reversed,
    Layout::Expanded,
];

fn p(k: &'static str, v: impl ToString) -> (&'static str, String) {
    (k, v.to_string())
}

fn unary(kind: Values) -> impl Fn(&mut StdRng, Layout) -> Case {
    move |_, l| Case {
        inputs: vec![input(&[3, 4], l, kind)],
        params: vec![],
        csr_lhs: false,
    }
}

fn binary(k1: Values, k2: Values) -> impl Fn(&mut StdRng, Layout) -> Case {
    move |rng, l| {
        // Broadcasting: [3, 4] with [4], [3, 1] or [3, 4].
        let other: Vec<usize> = match rng.random_range(0..3) {
            0 => vec![4],
            1 => vec![3, 1],
            _ => vec![3, 4],
        };
        Case {
            inputs: vec![input(&[3, 4], l, k1), input(&other, Layout::Contiguous, k2)],
            params: vec![],
            csr_lhs: false,
        }
    }
}

fn reduction(distinct: bool) -> impl Fn(&mut StdRng, Layout) -> Case {
    move |rng, l| {
        let axis = match rng.random_range(0..4) {
            0 => "None".to_string(),
            1 => "(0,)".to_string(),
            2 => "(-1,)".to_string(),
            _ => "(0, 1)".to_string(),
        };
        Case {
            inputs: vec![input(
                &[3, 4],
                if distinct { Layout::Transposed } else { l },
                Values::Any,
            )],
            params: vec![p("axis", axis), p("keepdims", rng.random_bool(0.5))],
            csr_lhs: false,
        }
    }
}

type Builder = Box<dyn Fn(&mut StdRng, Layout) -> Case>;

/// One case builder per differentiable op.
fn cases() -> BTreeMap<&'static str, Builder> {
    let mut c: BTreeMap<&'static str, Builder> = BTreeMap::new();
    c.insert("negative", Box::new(unary(Values::Any)));
    c.insert("absolute", Box::new(unary(Values::AwayFromZero)));
    c.insert("sqrt", Box::new(unary(Values::Positive)));
    c.insert("exp", Box::new(unary(Values::Any)));
    c.insert("log", Box::new(unary(Values::Positive)));
    c.insert("square", Box::new(unary(Values::Any)));
    c.insert("sin", Box::new(unary(Values::Any)));
    c.insert("tanh", Box::new(unary(Values::Any)));
    c.insert("relu", Box::new(unary(Values::AwayFromZero)));
    c.insert("add", Box::new(binary(Values::Any, Values::Any)));
    c.insert("subtract", Box::new(binary(Values::Any, Values::Any)));
    c.insert("multiply", Box::new(binary(Values::Any, Values::Any)));
    c.insert(
        "divide",
        Box::new(binary(Values::Any, Values::AwayFromZero)),
    );
    // Random draws make ties (where max/min have no derivative) improbable.
    c.insert("maximum", Box::new(binary(Values::Any, Values::Any)));
    c.insert("minimum", Box::new(binary(Values::Any, Values::Any)));
    c.insert("power", Box::new(binary(Values::Positive, Values::Any)));
    c.insert("sum", Box::new(reduction(false)));
    c.insert("mean", Box::new(reduction(false)));
    // An expanded input would tie every copy: max/min are checked on distinct values.
    c.insert("max", Box::new(reduction(true)));
    c.insert("min", Box::new(reduction(true)));
    c.insert(
        "add_scalar",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3], l, Values::Any)],
            params: vec![p("scalar", 1.5)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "mul_scalar",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3], l, Values::Any)],
            params: vec![p("scalar", -2.5)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "quadratic",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3], l, Values::Any)],
            params: vec![p("a", 0.7), p("b", -1.3), p("c", 2.0)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "create_view",
        Box::new(|rng, l| {
            let specs = match rng.random_range(0..3) {
                0 => vec![
                    IndexSpec::Interval {
                        start: Some(2),
                        end: None,
                        step: -2,
                        inclusive: false,
                    },
                    IndexSpec::NewAxis,
                    IndexSpec::Point(1),
                ],
                1 => vec![IndexSpec::Point(-1), IndexSpec::interval(1, 3)],
                _ => vec![
                    IndexSpec::All,
                    IndexSpec::Interval {
                        start: None,
                        end: None,
                        step: 3,
                        inclusive: false,
                    },
                ],
            };
            let code: Vec<String> = tessera::index::encode(&specs)
                .iter()
                .map(|v| v.to_string())
                .collect();
            Case {
                inputs: vec![input(&[3, 4], l, Values::Any)],
                params: vec![p("index", format!("({})", code.join(", ")))],
                csr_lhs: false,
            }
        }),
    );
    c.insert(
        "embedding",
        Box::new(|rng, l| {
            // Ids repeat (5 draws from 4 rows, or fewer): the row_sparse gradient sums them,
            // and unread rows must have no gradient.
            let n = rng.random_range(1..6);
            Case {
                inputs: vec![
                    input(&[4, 3], l, Values::Any),
                    Input {
                        shape: vec![n],
                        grad: false,
                        layout: Layout::Contiguous,
                        kind: Values::Ids(4),
                    },
                ],
                params: vec![],
                csr_lhs: false,
            }
        }),
    );
    c.insert(
        "index_gather",
        Box::new(|rng, l| {
            // x[1:4][[i..], [j..]] (adjacent) or x[1:4, None][[i..], :, [j..]] (separated):
            // two index rows over a basic view; repeated ids accumulate.
            let n = rng.random_range(1..6);
            let separated = rng.random_bool(0.5);
            let specs = if separated {
                vec![
                    IndexSpec::interval(1, 4),
                    IndexSpec::NewAxis,
                    IndexSpec::All,
                ]
            } else {
                vec![IndexSpec::interval(1, 4), IndexSpec::All]
            };
            let code: Vec<String> = tessera::index::encode(&specs)
                .iter()
                .map(|v| v.to_string())
                .collect();
            let axes = if separated { "(0, 2)" } else { "(0, 1)" };
            Case {
                inputs: vec![
                    input(&[4, 3], l, Values::Any),
                    Input {
                        shape: vec![2, n],
                        grad: false,
                        layout: Layout::Contiguous,
                        kind: Values::Ids(3),
                    },
                ],
                params: vec![
                    p("index", format!("({})", code.join(", "))),
                    p("axes", axes),
                ],
                csr_lhs: false,
            }
        }),
    );
    c.insert(
        "boolean_mask",
        Box::new(|_, l| Case {
            inputs: vec![
                input(&[3, 4], l, Values::Any),
                Input {
                    shape: vec![3],
                    grad: false,
                    layout: Layout::Contiguous,
                    kind: Values::Mask,
                },
            ],
            // The mask is true, false, true (see `check`): two rows.
            params: vec![p("count", 2)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "expand",
        Box::new(|_, _| Case {
            inputs: vec![input(&[3, 1], Layout::Contiguous, Values::Any)],
            params: vec![p("sizes", "(2, 3, 4)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "broadcast_to",
        Box::new(|_, l| Case {
            inputs: vec![input(&[1, 4], l, Values::Any)],
            params: vec![p("shape", "(2, 3, 4)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "repeat",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3], l, Values::Any)],
            params: vec![p("reps", "(2, 1, 3)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "tile",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3], l, Values::Any)],
            params: vec![p("reps", "(2,)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "reshape",
        Box::new(|_, l| Case {
            inputs: vec![input(&[3, 4], l, Values::Any)],
            params: vec![p("shape", "(2, -1)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "view",
        Box::new(|_, _| Case {
            inputs: vec![input(&[3, 4], Layout::Contiguous, Values::Any)],
            params: vec![p("shape", "(4, 3)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "permute",
        Box::new(|_, l| Case {
            inputs: vec![input(&[2, 3, 4], l, Values::Any)],
            params: vec![p("axes", "(2, 0, -2)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "squeeze",
        Box::new(|_, _| Case {
            inputs: vec![input(&[3, 1, 2], Layout::Transposed, Values::Any)],
            params: vec![p("axis", "(1,)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "unsqueeze",
        Box::new(|_, l| Case {
            inputs: vec![input(&[3, 2], l, Values::Any)],
            params: vec![p("axis", -1)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "flip",
        Box::new(|_, l| Case {
            inputs: vec![input(&[3, 2], l, Values::Any)],
            params: vec![p("axis", "(1,)")],
            csr_lhs: false,
        }),
    );
    c.insert(
        "narrow",
        Box::new(|_, l| Case {
            inputs: vec![input(&[4, 3], l, Values::Any)],
            params: vec![p("axis", 0), p("start", 1), p("length", 2)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "as_strided",
        Box::new(|_, _| Case {
            // Overlapping windows of a 6-vector: elements reached twice add up.
            inputs: vec![input(&[6], Layout::Contiguous, Values::Any)],
            params: vec![p("shape", "(3, 3)"), p("strides", "(1, 1)"), p("offset", 1)],
            csr_lhs: false,
        }),
    );
    c.insert(
        "copy",
        Box::new(|_, l| Case {
            inputs: vec![input(&[3, 2], l, Values::Any)],
            params: vec![],
            csr_lhs: false,
        }),
    );
    c.insert(
        "cast_storage",
        Box::new(|_, l| Case {
            inputs: vec![input(&[3, 2], l, Values::Any)],
            params: vec![p("stype", "csr")],
            csr_lhs: false,
        }),
    );
    elementwise_cases::add(&mut c);
    arrayfns_cases::add_cases(&mut c);
    linalg_cases::add_cases(&mut c);
    c
}

#[test]
fn every_differentiable_op_has_a_gradient_check() {
    let cases = cases();
    let mut missing = Vec::new();
    for info in registry().list() {
        if matches!(info.gradient, Gradient::Rule { .. }) && !cases.contains_key(info.name) {
            missing.push(info.name);
        }
    }
    assert!(
        missing.is_empty(),
        "differentiable ops without a gradient check: {missing:?}"
    );
    for name in cases.keys() {
        assert!(
            matches!(registry().gradient_of(name), Ok(Gradient::Rule { .. })),
            "gradient check for {name}, which has no backward rule"
        );
    }
}

#[test]
fn analytic_gradients_match_finite_differences() {
    let rounds: usize = std::env::var("TESSERA_GRADCHECK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    for (name, build) in cases() {
        for round in 0..rounds {
            let mut rng =
                StdRng::seed_from_u64(0x9e37_79b9 ^ (round as u64) << 8 ^ name.len() as u64);
            let case = build(&mut rng, LAYOUTS[round % LAYOUTS.len()]);
            check(name, &case, &mut rng);
        }
    }
}
