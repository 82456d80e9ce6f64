//! The fallback counter fires exactly where the O3 table says (one test function: the
//! counter is process-wide).

use tessera::ops::{self, fallback_count, StorageType};
use tessera::{DType, Tensor};

/// (op, inputs, parameters, falls back).
type Case<'a> = (&'a str, Vec<Tensor>, Vec<(&'a str, &'a str)>, bool);

#[test]
fn o2_o3_fallback_counter_fires_exactly_on_fallback_rows() {
    let d = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 0.0], &[2, 2]).unwrap();
    let csr = d.cast_storage(StorageType::Csr).unwrap();
    let rs = d.cast_storage(StorageType::RowSparse).unwrap();
    let v = Tensor::ones(&[2], DType::F64).unwrap();
    let cases: Vec<Case> = vec![
        (
            "quadratic",
            vec![csr.clone()],
            vec![("a", "1"), ("c", "0")],
            false,
        ),
        (
            "quadratic",
            vec![csr.clone()],
            vec![("a", "1"), ("c", "3")],
            true,
        ),
        ("quadratic", vec![rs.clone()], vec![], true),
        ("negative", vec![csr.clone()], vec![], false),
        ("exp", vec![csr.clone()], vec![], true),
        ("log", vec![rs.clone()], vec![], true),
        ("mul_scalar", vec![rs.clone()], vec![("scalar", "2")], false),
        (
            "add_scalar",
            vec![csr.clone()],
            vec![("scalar", "0")],
            false,
        ),
        ("add_scalar", vec![csr.clone()], vec![("scalar", "2")], true),
        ("add", vec![csr.clone(), csr.clone()], vec![], false),
        ("add", vec![csr.clone(), d.clone()], vec![], false),
        ("add", vec![csr.clone(), rs.clone()], vec![], true),
        ("multiply", vec![d.clone(), rs.clone()], vec![], false),
        ("multiply", vec![csr.clone(), csr.clone()], vec![], true),
        ("dot", vec![csr.clone(), v.clone()], vec![], false),
        (
            "dot",
            vec![csr.clone(), v.clone()],
            vec![("transpose_a", "true")],
            false,
        ),
        ("dot", vec![d.clone(), csr.clone()], vec![], true),
        ("sum", vec![csr.clone()], vec![("axis", "1")], false),
        ("mean", vec![csr.clone()], vec![], true),
        ("tile", vec![csr.clone()], vec![("reps", "(2,)")], true),
        ("add", vec![d.clone(), d.clone()], vec![], false),
    ];
    for (op, inputs, kv, falls_back) in cases {
        let before = fallback_count();
        ops::invoke(op, &inputs, &kv).unwrap();
        assert_eq!(
            fallback_count() - before,
            usize::from(falls_back),
            "{op} {kv:?}"
        );
    }
}
