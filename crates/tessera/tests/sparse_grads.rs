//! Sparse gradients (docs/design.md G5): `dot(csr, W)` and `embedding` give row_sparse weight
//! gradients holding only the touched rows; row_sparse + row_sparse accumulates to
//! row_sparse; `_backward_quadratic` has a csr kernel (seed 003's exercise). Each against a
//! dense reference computed naively.

use proptest::prelude::*;
use tessera::{autograd, ops, DType, StorageType, Tensor};

fn rows_of(t: &Tensor) -> Vec<i64> {
    t.as_row_sparse()
        .unwrap()
        .indices()
        .to_vec::<i64>()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn dot_csr_weight_gradient_is_row_sparse_over_the_touched_columns(
        m in 1usize..5, k in 1usize..8, n in 1usize..4,
        mask in prop::collection::vec(prop::bool::weighted(0.3), 40),
        vals in prop::collection::vec(-2.0f64..2.0, 40),
    ) {
        let x: Vec<f64> = (0..m * k).map(|i| if mask[i % 40] { vals[i % 40] } else { 0.0 }).collect();
        let csr = Tensor::from_vec(x.clone(), &[m, k]).unwrap().cast_storage(StorageType::Csr).unwrap();
        let w0: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.37).sin()).collect();
        let w = Tensor::from_vec(w0, &[k, n]).unwrap().requires_grad_(true).unwrap();
        let y = csr.dot(&w).unwrap();
        let g: Vec<f64> = (0..m * n).map(|i| 1.0 + i as f64).collect();
        let gt = Tensor::from_vec(g.clone(), &[m, n]).unwrap();
        autograd::backward(&y, Some(&gt), false).unwrap();
        let grad = w.grad().unwrap();
        prop_assert_eq!(grad.stype(), StorageType::RowSparse);
        // Stored rows: the columns the csr has entries in.
        let touched: Vec<i64> = (0..k).filter(|&c| (0..m).any(|r| x[r * k + c] != 0.0)).map(|c| c as i64).collect();
        prop_assert_eq!(rows_of(&grad), touched);
        // Values: X^T g, naively.
        let dense = grad.to_vec::<f64>().unwrap();
        for c in 0..k {
            for j in 0..n {
                let want: f64 = (0..m).map(|r| x[r * k + c] * g[r * n + j]).sum();
                prop_assert!((dense[c * n + j] - want).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn backward_quadratic_csr_kernel_matches_the_dense_formula(
        rows in 1usize..5, cols in 1usize..5,
        xs in prop::collection::vec(prop_oneof![Just(0.0f64), -3.0f64..3.0], 25),
        gs in prop::collection::vec(prop_oneof![Just(0.0f64), -3.0f64..3.0], 25),
        a in -2.0f64..2.0, b in prop_oneof![Just(0.0f64), -2.0f64..2.0],
    ) {
        let n = rows * cols;
        let x = Tensor::from_vec(xs[..n].to_vec(), &[rows, cols]).unwrap();
        let g = Tensor::from_vec(gs[..n].to_vec(), &[rows, cols]).unwrap();
        let (sa, sb) = (a.to_string(), b.to_string());
        let kv = [("a", sa.as_str()), ("b", sb.as_str())];
        let sparse = ops::invoke(
            "_backward_quadratic",
            &[g.cast_storage(StorageType::Csr).unwrap(), x.cast_storage(StorageType::Csr).unwrap()],
            &kv,
        ).unwrap();
        prop_assert_eq!(sparse[0].stype(), StorageType::Csr);
        let got = sparse[0].to_vec::<f64>().unwrap();
        for i in 0..n {
            let want = gs[i] * (2.0 * a * xs[i] + b);
            prop_assert!((got[i] - want).abs() < 1e-12, "{} vs {}", got[i], want);
        }
    }
}

#[test]
fn embedding_gradients_accumulate_as_row_sparse() {
    let w = Tensor::from_vec((0..12).map(f64::from).collect(), &[6, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let a = Tensor::from_slice(&[1i64, 4, 1], &[3]).unwrap();
    let b = Tensor::from_slice(&[5i64], &[1]).unwrap();
    let ea = ops::invoke("embedding", &[w.clone(), a], &[])
        .unwrap()
        .remove(0);
    let eb = ops::invoke("embedding", &[w.clone(), b], &[])
        .unwrap()
        .remove(0);
    assert_eq!(ea.to_vec::<f64>().unwrap(), vec![2., 3., 8., 9., 2., 3.]);
    let loss = ea
        .sum(None, false)
        .unwrap()
        .add(&eb.mul_scalar(10).unwrap().sum(None, false).unwrap())
        .unwrap();
    autograd::backward(&loss, None, false).unwrap();
    let g = w.grad().unwrap();
    assert_eq!(g.stype(), StorageType::RowSparse);
    assert_eq!(rows_of(&g), vec![1, 4, 5]);
    assert_eq!(
        g.to_vec::<f64>().unwrap(),
        vec![0., 0., 2., 2., 0., 0., 0., 0., 1., 1., 10., 10.]
    );
    // A second backward adds row_sparse to row_sparse: still row_sparse, the union of rows.
    let c = Tensor::from_slice(&[0i64], &[1]).unwrap();
    let ec = ops::invoke("embedding", &[w.clone(), c], &[])
        .unwrap()
        .remove(0);
    autograd::backward(&ec.sum(None, false).unwrap(), None, false).unwrap();
    let g = w.grad().unwrap();
    assert_eq!(g.stype(), StorageType::RowSparse);
    assert_eq!(rows_of(&g), vec![0, 1, 4, 5]);
    // Bad ids: an IndexError-kind error, not a panic.
    let bad = Tensor::from_slice(&[6i64], &[1]).unwrap();
    assert!(matches!(
        ops::invoke("embedding", &[w.clone(), bad], &[])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(tessera::ErrorKind::Index(_))
    ));
    let float_ids = Tensor::from_slice(&[0.0f64], &[1]).unwrap();
    assert!(ops::invoke("embedding", &[w, float_ids], &[]).is_err());
    let _ = DType::F64;
}

#[test]
fn quadratic_through_a_csr_view_of_a_leaf_differentiates() {
    let x = Tensor::from_slice(&[0.0f64, 1.5, 0.0, -2.0], &[2, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let c = ops::invoke(
        "cast_storage",
        std::slice::from_ref(&x),
        &[("stype", "csr")],
    )
    .unwrap()
    .remove(0);
    let q = ops::invoke("quadratic", &[c], &[("a", "1.5"), ("b", "2")])
        .unwrap()
        .remove(0);
    assert_eq!(q.stype(), StorageType::Csr);
    autograd::backward(&q.sum(None, false).unwrap(), None, false).unwrap();
    // d/dx sum(a x^2 + b x) = 2 a x + b everywhere: perturbing a zero of the leaf stores it
    // (cast_storage keeps non-zeros), so at zeros the gradient is b.
    let g = x.grad().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(
        g,
        vec![2.0, 2.0 * 1.5 * 1.5 + 2.0, 2.0, 2.0 * 1.5 * -2.0 + 2.0]
    );
}
