//! The operator registry (docs/design.md O1): listing and docs, parameter parsing errors, inference
//! without compute, `invoke` against the typed methods and naive references, `quadratic` and
//! its gradient, caller-provided outputs and aliasing.

use proptest::prelude::*;
use tessera::ops::{self, registry, DispatchMode, Gradient, TensorMeta};
use tessera::{BinaryOp, DType, ErrorKind, Tensor, UnaryOp};

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn o1_every_required_op_is_registered_with_docs() {
    let names: Vec<&str> = registry().list().iter().map(|i| i.name).collect();
    for required in [
        "add",
        "subtract",
        "multiply",
        "divide",
        "maximum",
        "minimum",
        "power",
        "negative",
        "absolute",
        "sqrt",
        "exp",
        "log",
        "square",
        "sin",
        "tanh",
        "relu",
        "sum",
        "mean",
        "max",
        "min",
        "expand",
        "repeat",
        "tile",
        "reshape",
        "create_view",
        "quadratic",
        "_backward_quadratic",
        "cast_storage",
        "sort",
        "argsort",
        "argmax",
        "argmin",
        "where",
        "cumulative_sum",
        "cumulative_prod",
        "unique_values",
        "unique_all",
        "concat",
        "stack",
        "ring_buffer",
    ] {
        assert!(names.contains(&required), "{required} is not registered");
    }
    for info in registry().list() {
        assert!(!info.doc.is_empty(), "{} has no doc", info.name);
        for p in &info.params {
            assert!(!p.doc.is_empty(), "{}.{} has no doc", info.name, p.name);
        }
    }
}

/// docs/ops.md is generated from the registry; regenerate with TESSERA_BLESS=1.
#[test]
fn o1_docs_ops_md_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ops.md");
    let want = registry().docs_markdown();
    if std::env::var("TESSERA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(path, &want).unwrap();
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "docs/ops.md is stale: run `TESSERA_BLESS=1 cargo test --test registry`"
    );
}

#[test]
fn o1_parameter_errors_name_the_op_and_the_key() {
    let x = Tensor::ones(&[2], DType::F32).unwrap();
    let err = |name: &str, kv: &[(&str, &str)]| {
        ops::invoke(name, std::slice::from_ref(&x), kv)
            .unwrap_err()
            .to_string()
    };
    let e = err("quadratic", &[("d", "1")]);
    assert!(
        e.contains("\"quadratic\"") && e.contains("\"d\"") && e.contains("unknown"),
        "{e}"
    );
    let e = err("quadratic", &[("a", "one")]);
    assert!(
        e.contains("\"a\"") && e.contains("not a valid float"),
        "{e}"
    );
    let e = err("quadratic", &[("a", "1"), ("a", "2")]);
    assert!(e.contains("more than once"), "{e}");
    let e = err("expand", &[]);
    assert!(e.contains("\"sizes\"") && e.contains("required"), "{e}");
    let e = err("sum", &[("keepdims", "maybe")]);
    assert!(e.contains("\"keepdims\""), "{e}");
    let e = err("repeat", &[("reps", "(-1,)")]);
    assert!(e.contains("\"reps\"") && e.contains("negative"), "{e}");
    let e = err("no_such_op", &[]);
    assert!(e.contains("no_such_op"), "{e}");
    // Wrong arity.
    assert!(ops::invoke("add", std::slice::from_ref(&x), &[]).is_err());
}

#[test]
fn o1_inference_runs_without_data() {
    let meta = TensorMeta::dense(vec![3, 1], DType::I32);
    let (out, mode) = registry()
        .get("expand")
        .unwrap()
        .infer(&[("sizes", "(2, -1, 4)")], std::slice::from_ref(&meta))
        .unwrap();
    assert_eq!(
        (out[0].shape.clone(), out[0].dtype, mode),
        (vec![2, 3, 4], DType::I32, DispatchMode::Dense)
    );
    let (out, _) = registry()
        .get("sum")
        .unwrap()
        .infer(
            &[("axis", "(0,)"), ("keepdims", "true")],
            std::slice::from_ref(&meta),
        )
        .unwrap();
    assert_eq!(
        (out[0].shape.clone(), out[0].dtype),
        (vec![1, 1], DType::I64)
    );
    let (out, _) = registry()
        .get("quadratic")
        .unwrap()
        .infer(&[], std::slice::from_ref(&meta))
        .unwrap();
    assert_eq!(out[0].dtype, DType::F64, "integer input gives float64");
    let (out, _) = registry()
        .get("create_view")
        .unwrap()
        .infer(
            &[("index", "(0, 1, 1, -1, 0)")],
            std::slice::from_ref(&meta),
        )
        .unwrap();
    assert_eq!(out[0].shape, vec![1]);
    let f = TensorMeta::dense(vec![4], DType::F32);
    let (out, _) = registry()
        .get("add")
        .unwrap()
        .infer(&[], &[meta, f])
        .unwrap();
    assert_eq!(
        (out[0].shape.clone(), out[0].dtype),
        (vec![3, 4], DType::F64)
    );
}

#[test]
fn o1_invoke_and_typed_methods_agree() {
    let a = Tensor::from_vec(vec![0.5f32, -1.0, 2.0, 4.0, -3.0, 0.0], &[2, 3]).unwrap();
    let b = Tensor::from_vec(vec![1.0f32, 2.0, -0.5], &[3]).unwrap();
    for &op in UnaryOp::ALL {
        let via = ops::invoke(op.name(), std::slice::from_ref(&a), &[]).unwrap();
        let direct = a.unary(op).unwrap();
        assert_eq!(
            format!("{:?}", via[0]),
            format!("{direct:?}"),
            "{}",
            op.name()
        );
    }
    for &op in BinaryOp::ALL {
        let via = ops::invoke(op.name(), &[a.clone(), b.clone()], &[]).unwrap();
        assert_eq!(
            format!("{:?}", via[0]),
            format!("{:?}", a.binary(&b, op).unwrap()),
            "{}",
            op.name()
        );
    }
    let t = ops::invoke("tile", std::slice::from_ref(&b), &[("reps", "(2, 1)")]).unwrap();
    assert_eq!(t[0].shape(), &[2, 3]);
    let r = ops::invoke("reshape", std::slice::from_ref(&a), &[("shape", "(-1,)")]).unwrap();
    assert_eq!(r[0].shape(), &[6]);
    let s = ops::invoke("sum", std::slice::from_ref(&a), &[("axis", "(-1,)")]).unwrap();
    assert_eq!(s[0].to_vec::<f32>().unwrap(), vec![1.5, 1.0]);
}

proptest! {
    /// quadratic against the seed's formula written naively.
    #[test]
    fn quadratic_matches_formula(xs in prop::collection::vec(-100.0f64..100.0, 0..40), a in -3.0f64..3.0, b in -3.0f64..3.0, c in -3.0f64..3.0) {
        let x = Tensor::from_vec(xs.clone(), &[xs.len()]).unwrap();
        let (sa, sb, sc) = (a.to_string(), b.to_string(), c.to_string());
        let y = ops::invoke("quadratic", &[x], &[("a", &sa), ("b", &sb), ("c", &sc)]).unwrap();
        let want: Vec<f64> = xs.iter().map(|&v| a * v * v + b * v + c).collect();
        prop_assert_eq!(f64s(&y[0]), want);
    }

    /// _backward_quadratic against a central-difference numerical gradient.
    #[test]
    fn quadratic_gradient_matches_numerical(xs in prop::collection::vec(-10.0f64..10.0, 1..20), a in -3.0f64..3.0, b in -3.0f64..3.0) {
        let n = xs.len();
        let x = Tensor::from_vec(xs.clone(), &[n]).unwrap();
        let g = Tensor::from_vec((0..n).map(|i| 1.0 + i as f64).collect(), &[n]).unwrap();
        let (sa, sb) = (a.to_string(), b.to_string());
        let kv = [("a", sa.as_str()), ("b", sb.as_str()), ("c", "0.5")];
        let name = match registry().gradient_of("quadratic").unwrap() {
            Gradient::Rule { via: Some(op), .. } => op,
            other => panic!("quadratic's gradient is {other:?}"),
        };
        let grad = f64s(&ops::invoke(name, &[g.clone(), x], &kv).unwrap()[0]);
        let f = |v: f64| a * v * v + b * v + 0.5;
        let h = 1e-5;
        for (i, &v) in xs.iter().enumerate() {
            let numeric = (f(v + h) - f(v - h)) / (2.0 * h) * (1.0 + i as f64);
            prop_assert!((grad[i] - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()), "{} vs {}", grad[i], numeric);
        }
    }
}

#[test]
fn o1_gradients_are_declared_or_refused_clearly() {
    assert!(matches!(
        registry().gradient_of("quadratic").unwrap(),
        Gradient::Rule {
            via: Some("_backward_quadratic"),
            ..
        }
    ));
    assert!(matches!(
        registry().gradient_of("add").unwrap(),
        Gradient::Rule { via: None, .. }
    ));
    let e = registry()
        .gradient_of("ring_buffer")
        .unwrap_err()
        .to_string();
    assert!(e.contains("forward only"), "{e}");
    let e = registry().gradient_of("equal").unwrap_err().to_string();
    assert!(
        e.contains("not differentiable") && e.contains("bool"),
        "{e}"
    );
    // Every op declares how it differentiates (the gradient-check gate checks the rules).
    for info in registry().list() {
        assert_ne!(
            info.gradient,
            Gradient::Missing,
            "op {} declares no gradient rule",
            info.name
        );
    }
}

#[test]
fn o1_invoke_into_writes_in_place_only_where_declared() {
    let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let b = Tensor::from_vec(vec![10.0f64, 20.0, 30.0], &[3]).unwrap();
    // add declares (0, 0): writing the result into `a` itself is allowed.
    ops::invoke_into(
        "add",
        &[a.clone(), b.clone()],
        &[],
        std::slice::from_ref(&a),
    )
    .unwrap();
    assert_eq!(f64s(&a), vec![11.0, 22.0, 33.0]);
    // A fresh output works for any op.
    let out = Tensor::zeros(&[], DType::F64).unwrap();
    ops::invoke_into(
        "sum",
        std::slice::from_ref(&b),
        &[],
        std::slice::from_ref(&out),
    )
    .unwrap();
    assert_eq!(out.item::<f64>().unwrap(), 60.0);
    // sum declares no in-place pair: an output aliasing its input is refused, input intact.
    let view = b.index(&tessera::idx![0]).unwrap();
    let e = ops::invoke_into("sum", std::slice::from_ref(&b), &[], &[view]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::OverlappingWrite(_)), "{e}");
    assert_eq!(f64s(&b), vec![10.0, 20.0, 30.0]);
    // Wrong output shape or count.
    let wrong = Tensor::zeros(&[2], DType::F64).unwrap();
    assert!(ops::invoke_into("add", &[a.clone(), b.clone()], &[], &[wrong]).is_err());
    assert!(ops::invoke_into("add", &[a, b], &[], &[]).is_err());
}

/// Reference edit distance (plain recursion with memo over suffixes).
fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut memo = vec![vec![usize::MAX; b.len() + 1]; a.len() + 1];
    fn go(a: &[char], b: &[char], i: usize, j: usize, memo: &mut [Vec<usize>]) -> usize {
        if memo[i][j] != usize::MAX {
            return memo[i][j];
        }
        let d = if i == a.len() {
            b.len() - j
        } else if j == b.len() {
            a.len() - i
        } else {
            let keep = go(a, b, i + 1, j + 1, memo) + usize::from(a[i] != b[j]);
            keep.min(go(a, b, i + 1, j, memo) + 1)
                .min(go(a, b, i, j + 1, memo) + 1)
        };
        memo[i][j] = d;
        d
    }
    go(a, b, 0, 0, &mut memo)
}

/// The names an unknown-op error suggests (between "did you mean" and "?").
fn suggested(name: &str) -> Vec<String> {
    let e = match ops::invoke(name, &[], &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{name:?} is an op"),
    };
    assert!(e.contains(&format!("no op named {name:?}")), "{e}");
    match e.split_once("did you mean ") {
        None => vec![],
        Some((_, rest)) => rest[..rest.find('?').unwrap()]
            .split(", ")
            .map(|s| s.trim_matches('"').to_string())
            .collect(),
    }
}

#[test]
fn unknown_op_error_lists_the_close_names() {
    assert_eq!(suggested("tiel"), vec!["tile", "view"]); // both at edit distance 2
    assert!(suggested("matmull").contains(&"matmul".to_string()));
    assert!(suggested("quad").contains(&"quadratic".to_string()));
    assert!(suggested("zzzzzzzzzz").is_empty());
    let names: Vec<&str> = registry().list().iter().map(|i| i.name).collect();
    let chars = |s: &str| s.chars().collect::<Vec<_>>();
    for probe in ["ad", "sum_", "mx", "reshap", "dott", "ring", "cast"] {
        let got = suggested(probe);
        let mut want: Vec<(usize, &str)> = names
            .iter()
            .map(|&n| (levenshtein(&chars(probe), &chars(n)), n))
            .filter(|&(d, n)| {
                let (s, l) = if probe.len() <= n.len() {
                    (probe, n)
                } else {
                    (n, probe)
                };
                d <= 2 || (s.len() >= 3 && l.starts_with(s))
            })
            .collect();
        want.sort();
        let want: Vec<&str> = want.into_iter().take(5).map(|(_, n)| n).collect();
        assert_eq!(got, want, "suggestions for {probe:?}");
    }
    // A one-character typo of every op suggests it.
    for n in names {
        let typo = format!("{}#", &n[..n.len() - 1]);
        assert!(
            suggested(&typo).contains(&n.to_string()),
            "{typo:?} -> {n:?}"
        );
    }
}
