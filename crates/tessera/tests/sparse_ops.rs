//! Every sparse kernel against the dense op on the densified input (docs/design.md O3), on random
//! CSR / row-sparse inputs (densities 0, 0.01, 0.5, 1; 0×n and n×0 shapes; empty rows;
//! explicit zeros; canonical and builder-made), plus the O3 storage-type table.

#[path = "sparse_common.rs"]
mod common;

use common::{close, random_csr, random_row_sparse, DENSITIES};
use proptest::prelude::*;
use tessera::ops::{self, registry, DispatchMode, StorageType, TensorMeta};
use tessera::{DType, Tensor};

fn dense_of(t: &Tensor) -> Tensor {
    t.cast_storage(StorageType::Default).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// Runs `op` on the sparse inputs and on their dense copies; same shape, dtype and values.
fn check(op: &str, inputs: &[Tensor], kv: &[(&str, &str)]) -> Tensor {
    let dense: Vec<Tensor> = inputs.iter().map(dense_of).collect();
    let s = ops::invoke(op, inputs, kv).unwrap().remove(0);
    let d = ops::invoke(op, &dense, kv).unwrap().remove(0);
    assert_eq!(s.shape(), d.shape(), "{op} shape");
    assert_eq!(s.dtype(), d.dtype(), "{op} dtype");
    assert!(
        close(&vals(&s), &vals(&d)),
        "{op}: {:?} vs {:?}",
        vals(&s),
        vals(&d)
    );
    s
}

fn shape_strategy() -> impl Strategy<Value = (usize, usize, f64, u64, bool)> {
    (
        0usize..7,
        0usize..7,
        prop::sample::select(DENSITIES.to_vec()),
        any::<u64>(),
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn o3_csr_unary_scalar_quadratic_sum_match_dense((r, c, d, seed, b) in shape_strategy()) {
        let (x, _) = random_csr(r, c, d, seed, b);
        for op in ["negative", "absolute", "sqrt", "square", "sin", "tanh", "relu", "exp", "log"] {
            check(op, std::slice::from_ref(&x), &[]);
        }
        let y = check("quadratic", std::slice::from_ref(&x), &[("a", "2"), ("b", "-1"), ("c", "0")]);
        prop_assert_eq!(y.stype(), StorageType::Csr);
        check("quadratic", std::slice::from_ref(&x), &[("a", "2"), ("b", "-1"), ("c", "1.5")]);
        check("mul_scalar", std::slice::from_ref(&x), &[("scalar", "-2.5")]);
        check("add_scalar", std::slice::from_ref(&x), &[("scalar", "0")]);
        check("add_scalar", std::slice::from_ref(&x), &[("scalar", "3")]);
        for axis in ["None", "0", "1", "(0, 1)", "-1"] {
            for keep in ["false", "true"] {
                check("sum", std::slice::from_ref(&x), &[("axis", axis), ("keepdims", keep)]);
            }
        }
    }

    #[test]
    fn o3_csr_binary_and_dot_match_dense(
        (r, c, d, seed, b) in shape_strategy(),
        d2 in prop::sample::select(DENSITIES.to_vec()),
        n in 0usize..4,
    ) {
        let (x, _) = random_csr(r, c, d, seed, b);
        let (y, yd) = random_csr(r, c, d2, seed ^ 0x9e37, !b);
        let dense_y = Tensor::from_vec(yd, &[r, c]).unwrap();
        for op in ["add", "subtract"] {
            prop_assert_eq!(check(op, &[x.clone(), y.clone()], &[]).stype(), StorageType::Csr);
            prop_assert_eq!(check(op, &[x.clone(), dense_y.clone()], &[]).stype(), StorageType::Default);
            check(op, &[dense_y.clone(), x.clone()], &[]);
        }
        prop_assert_eq!(check("multiply", &[x.clone(), dense_y.clone()], &[]).stype(), StorageType::Csr);
        check("multiply", &[dense_y.clone(), x.clone()], &[]);
        // dot: SpMV, SpMM, and the transposed product.
        let v = Tensor::arange(0, c as i64, 1, DType::F64).unwrap();
        check("dot", &[x.clone(), v], &[]);
        let m = Tensor::arange(0, (c * n) as i64, 1, DType::F64).unwrap().reshape(&[c as isize, n as isize]).unwrap();
        check("dot", &[x.clone(), m], &[]);
        let mt = Tensor::arange(0, (r * n) as i64, 1, DType::F64).unwrap().reshape(&[r as isize, n as isize]).unwrap();
        let t = check("dot", &[x.clone(), mt], &[("transpose_a", "true")]);
        prop_assert_eq!(t.stype(), StorageType::RowSparse);
        let vt = Tensor::arange(0, r as i64, 1, DType::I32).unwrap();
        check("dot", &[x.clone(), vt], &[("transpose_a", "true")]);
    }

    #[test]
    fn o3_row_sparse_ops_match_dense(
        r in 0usize..7, c in 0usize..5,
        d in prop::sample::select(DENSITIES.to_vec()),
        seed in any::<u64>(),
    ) {
        let (x, _) = random_row_sparse(r, c, d, seed);
        let (y, yd) = random_row_sparse(r, c, 0.5, seed ^ 7);
        let dense_y = Tensor::from_vec(yd, &[r, c]).unwrap();
        for op in ["negative", "square", "relu", "exp"] {
            check(op, std::slice::from_ref(&x), &[]);
        }
        prop_assert_eq!(check("add", &[x.clone(), y.clone()], &[]).stype(), StorageType::RowSparse);
        check("subtract", &[x.clone(), y.clone()], &[]);
        check("subtract", &[x.clone(), dense_y.clone()], &[]);
        prop_assert_eq!(check("multiply", &[x.clone(), dense_y], &[]).stype(), StorageType::RowSparse);
        check("mul_scalar", std::slice::from_ref(&x), &[("scalar", "3")]);
        for axis in ["None", "0", "1"] {
            check("sum", std::slice::from_ref(&x), &[("axis", axis)]);
        }
        check("quadratic", std::slice::from_ref(&x), &[("a", "1"), ("c", "0")]);
    }

    #[test]
    fn csr_rows_and_eliminate_zeros_match_dense((r, c, d, seed, b) in shape_strategy(), s in 0usize..7, e in 0usize..7) {
        let (x, dense) = random_csr(r, c, d, seed, b);
        let (s, e) = (s.min(r), e.min(r).max(s.min(r)));
        let rows = x.csr_rows(s, e).unwrap();
        prop_assert_eq!(rows.to_vec::<f64>().unwrap(), dense[s * c..e * c].to_vec());
        let z = x.eliminate_zeros().unwrap();
        prop_assert_eq!(z.to_vec::<f64>().unwrap(), dense.clone());
        let nz = dense.iter().filter(|v| **v != 0.0).count();
        prop_assert_eq!(z.as_csr().unwrap().nnz(), nz);
    }
}

#[test]
fn o3_masked_multiply_keeps_implicit_zeros_under_nan_and_inf() {
    let x = Tensor::from_vec(vec![0.0f64, 2.0], &[1, 2])
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let d = Tensor::from_vec(vec![f64::NAN, f64::INFINITY], &[1, 2]).unwrap();
    let y = ops::invoke("multiply", &[x, d], &[]).unwrap().remove(0);
    assert_eq!(y.stype(), StorageType::Csr);
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![0.0, f64::INFINITY]);
}

#[test]
fn o3_quadratic_on_csr_shares_the_index_arrays() {
    let x = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 0.0], &[2, 2])
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let y = ops::invoke(
        "quadratic",
        std::slice::from_ref(&x),
        &[("a", "1"), ("b", "2")],
    )
    .unwrap();
    let (a, b) = (x.as_csr().unwrap(), y[0].as_csr().unwrap());
    assert!(a.indices().shares_storage(b.indices()));
    assert!(a.indptr().shares_storage(b.indptr()));
    assert_eq!(y[0].to_vec::<f64>().unwrap(), vec![0.0, 3.0, 8.0, 0.0]);
}

#[test]
fn csr_dot_threaded_and_single_thread_match_dense() {
    // Big enough (rows * n > 2^14) for the threaded split.
    let (x, xd) = random_csr(20_000, 9, 0.3, 11, false);
    let xd = Tensor::from_vec(xd, &[20_000, 9]).unwrap();
    for n in [0usize, 1, 2] {
        let b = if n == 1 {
            Tensor::arange(0, 9, 1, DType::F64).unwrap()
        } else {
            Tensor::arange(0, 9 * n as i64, 1, DType::F64)
                .unwrap()
                .reshape(&[9, n as isize])
                .unwrap()
        };
        let want = vals(&ops::invoke("dot", &[xd.clone(), b.clone()], &[]).unwrap()[0]);
        for parallel in ["true", "false"] {
            let got = ops::invoke("dot", &[x.clone(), b.clone()], &[("parallel", parallel)])
                .unwrap()
                .remove(0);
            assert_eq!(vals(&got), want, "n = {n}, parallel = {parallel}");
        }
    }
}

#[test]
fn csr_dot_after_the_shared_index_parts_were_written_is_an_error() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 0.0, 3.0], &[2, 2])
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let v = Tensor::from_vec(vec![1.0f64, 1.0], &[2]).unwrap();
    // Breaking the "never write into the parts" contract gives an error, not a panic or an
    // out-of-bounds read.
    x.as_csr().unwrap().indices().fill_(7).unwrap();
    let e = ops::invoke("dot", &[x.clone(), v.clone()], &[("parallel", "false")]).unwrap_err();
    assert!(e.to_string().contains("no longer valid"), "{e}");
    x.as_csr().unwrap().indptr().fill_(-3).unwrap();
    assert!(ops::invoke("dot", &[x, v], &[]).is_err());
}

/// (op, params, input storage types, output storage type, dispatch mode).
type Row = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [StorageType],
    StorageType,
    DispatchMode,
);

/// The O3 table.
#[test]
fn o3_storage_type_table() {
    use DispatchMode::{Dense as D, Fallback as F, Sparse as S};
    use StorageType::{Csr, Default as Def, RowSparse as Rs};
    let table: &[Row] = &[
        ("quadratic", &[("c", "0")], &[Csr], Csr, S),
        ("quadratic", &[("c", "1")], &[Csr], Def, F),
        ("quadratic", &[], &[Rs], Def, F),
        ("quadratic", &[], &[Def], Def, D),
        ("negative", &[], &[Csr], Csr, S),
        ("absolute", &[], &[Rs], Rs, S),
        ("sqrt", &[], &[Csr], Csr, S),
        ("square", &[], &[Csr], Csr, S),
        ("sin", &[], &[Csr], Csr, S),
        ("tanh", &[], &[Rs], Rs, S),
        ("relu", &[], &[Csr], Csr, S),
        ("exp", &[], &[Csr], Def, F),
        ("log", &[], &[Rs], Def, F),
        ("mul_scalar", &[("scalar", "2")], &[Csr], Csr, S),
        ("add_scalar", &[("scalar", "0")], &[Rs], Rs, S),
        ("add_scalar", &[("scalar", "1")], &[Csr], Def, F),
        ("add", &[], &[Csr, Csr], Csr, S),
        ("subtract", &[], &[Rs, Rs], Rs, S),
        ("add", &[], &[Csr, Def], Def, S),
        ("subtract", &[], &[Def, Rs], Def, S),
        ("add", &[], &[Csr, Rs], Def, F),
        ("multiply", &[], &[Csr, Def], Csr, S),
        ("multiply", &[], &[Def, Rs], Rs, S),
        ("multiply", &[], &[Csr, Csr], Def, F),
        ("dot", &[], &[Csr, Def], Def, S),
        ("dot", &[("transpose_a", "true")], &[Csr, Def], Rs, S),
        ("dot", &[], &[Def, Csr], Def, F),
        ("sum", &[], &[Csr], Def, S),
        ("sum", &[("axis", "0")], &[Rs], Def, S),
        ("mean", &[], &[Csr], Def, F),
        ("maximum", &[], &[Csr, Def], Def, F),
        ("cast_storage", &[("stype", "csr")], &[Def], Csr, D),
        ("cast_storage", &[("stype", "default")], &[Csr], Def, S),
    ];
    for &(op, kv, stypes, out, mode) in table {
        let metas: Vec<TensorMeta> = stypes
            .iter()
            .map(|&s| TensorMeta {
                shape: vec![3, 3],
                dtype: DType::F64,
                stype: s,
            })
            .collect();
        let (m, got) = registry().get(op).unwrap().infer(kv, &metas).unwrap();
        assert_eq!((m[0].stype, got), (out, mode), "{op} {kv:?} {stypes:?}");
        // Running agrees with inference.
        let inputs: Vec<Tensor> = stypes
            .iter()
            .map(|&s| {
                Tensor::from_vec(vec![0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0], &[3, 3])
                    .unwrap()
                    .cast_storage(s)
                    .unwrap()
            })
            .collect();
        let y = ops::invoke(op, &inputs, kv).unwrap();
        assert_eq!(y[0].stype(), out, "{op} {kv:?} {stypes:?} (run)");
    }
}
