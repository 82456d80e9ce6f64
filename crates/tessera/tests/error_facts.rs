//! The common errors carry their facts (axis and rank, the shapes that did not broadcast, the
//! dtypes that did not fit, the close names of an unknown op), and print the messages they
//! always printed (hand-written here).

use tessera::{ops, BinaryOp, DType, DTypeFacts, ErrorKind, IndexFacts, ShapeFacts, Tensor};

fn t(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::zeros(shape, dtype).unwrap()
}

#[test]
fn an_axis_out_of_range_names_axis_and_rank() {
    let e = t(&[2, 3], DType::F32).sum(Some(&[5]), false).unwrap_err();
    assert_eq!(
        e,
        ErrorKind::Index(IndexFacts::Axis { axis: 5, rank: 2 }).into()
    );
    assert_eq!(
        e.to_string(),
        "index error: axis 5 is out of bounds for a tensor of rank 2"
    );
    let e = t(&[4], DType::F32).narrow(-2, 0, 1).unwrap_err();
    assert_eq!(
        e,
        ErrorKind::Index(IndexFacts::Axis { axis: -2, rank: 1 }).into()
    );
}

#[test]
fn shapes_that_do_not_broadcast_are_named() {
    let e = t(&[2, 3], DType::F32)
        .binary(&t(&[4], DType::F32), BinaryOp::Add)
        .unwrap_err();
    let facts = ShapeFacts::Broadcast {
        lhs: vec![2, 3],
        rhs: vec![4],
        dim: 1,
        sizes: (3, 4),
    };
    assert_eq!(e, ErrorKind::ShapeMismatch(facts).into());
    assert_eq!(
        e.to_string(),
        "shape mismatch: shapes [2, 3] and [4] cannot be broadcast together (dim 1: 3 vs 4)"
    );
    let e = t(&[3], DType::F32).broadcast_to(&[2, 4]).unwrap_err();
    let facts = ShapeFacts::BroadcastTo {
        from: vec![3],
        to: vec![2, 4],
    };
    assert_eq!(e, ErrorKind::ShapeMismatch(facts).into());
    assert_eq!(
        e.to_string(),
        "shape mismatch: cannot broadcast shape [3] to [2, 4]"
    );
}

#[test]
fn dtype_errors_name_the_dtypes() {
    // In either operand order, the pair is named in one order (NumPy: float64).
    for (a, b) in [(DType::I8, DType::U64), (DType::U64, DType::I8)] {
        let e = t(&[2], a).binary(&t(&[2], b), BinaryOp::Add).unwrap_err();
        let facts = DTypeFacts::NoPromotion {
            lhs: DType::I8,
            rhs: DType::U64,
            numpy: "float64",
        };
        assert_eq!(e, ErrorKind::DType(facts).into());
        assert_eq!(
            e.to_string(),
            "dtype error: int8 and uint64 have no common dtype (NumPy's float64 would lose \
             integer precision); cast one operand first"
        );
    }
    let e = t(&[2], DType::F32)
        .assign(&t(&[2], DType::F64))
        .unwrap_err();
    let facts = DTypeFacts::Differ {
        op: "assign".into(),
        what: "source",
        expected: DType::F32,
        got: DType::F64,
    };
    assert_eq!(e, ErrorKind::DType(facts).into());
    let e = t(&[2], DType::I32)
        .binary_(&t(&[2], DType::F32), BinaryOp::Add)
        .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::DType(DTypeFacts::Differ {
            expected: DType::I32,
            got: DType::F64,
            ..
        })
    ));
    let e = t(&[2], DType::Bool)
        .binary(&t(&[2], DType::Bool), BinaryOp::Sub)
        .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::DType(DTypeFacts::Unsupported {
            dtype: DType::Bool,
            ..
        })
    ));
}

#[test]
fn an_unknown_op_lists_its_close_names() {
    let e = ops::registry().get("tiel").err().unwrap();
    match e.kind() {
        ErrorKind::UnknownOp { name, close } => {
            assert_eq!(name, "tiel");
            assert!(close.iter().any(|c| c == "tile"), "{close:?}");
        }
        other => panic!("expected UnknownOp, got {other:?}"),
    }
    assert!(
        e.to_string()
            .contains(r#"no op named "tiel"; did you mean "tile""#),
        "{e}"
    );
    let e = ops::registry().get("zzzzzzzz").err().unwrap();
    assert_eq!(
        e,
        ErrorKind::UnknownOp {
            name: "zzzzzzzz".into(),
            close: vec![]
        }
        .into()
    );
    assert_eq!(
        e.to_string(),
        r#"invalid argument: no op named "zzzzzzzz" (see docs/ops.md for the list)"#
    );
}
