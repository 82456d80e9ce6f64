//! `matmul` (dense 2-D product) against a naive triple loop, through the typed method and
//! through `ops::invoke`, with dtype promotion and typed errors.

use proptest::prelude::*;
use tessera::ops;
use tessera::{DType, Tensor, TesseraError};

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for l in 0..k {
                c[i * n + j] += a[i * k + l] * b[l * n + j];
            }
        }
    }
    c
}

proptest! {
    #[test]
    fn matmul_matches_a_naive_triple_loop(
        m in 0usize..70, k in 0usize..300, n in 0usize..40, seed in 0u64..1000,
    ) {
        let gen = |len: usize, s: u64| -> Vec<f64> {
            (0..len).map(|i| (((i as u64 * 2654435761 + s * 97) % 17) as f64) - 8.0).collect()
        };
        let (av, bv) = (gen(m * k, seed), gen(k * n, seed + 1));
        let want = naive_matmul(&av, &bv, m, k, n);
        let a = Tensor::from_vec(av.clone(), &[m, k]).unwrap();
        let b = Tensor::from_vec(bv.clone(), &[k, n]).unwrap();
        prop_assert_eq!(f64s(&a.matmul(&b).unwrap()), want.clone());
        let got = ops::invoke("matmul", &[a.astype(DType::F32).unwrap(), b.astype(DType::I32).unwrap()], &[]).unwrap();
        prop_assert_eq!(got[0].dtype(), DType::F64);
        let a32 = a.astype(DType::F32).unwrap();
        let b32 = b.astype(DType::F32).unwrap();
        let c32 = a32.matmul(&b32).unwrap().to_vec::<f32>().unwrap();
        prop_assert_eq!(c32.iter().map(|&v| v as f64).collect::<Vec<_>>(), want.clone());
        let ai = a.astype(DType::I64).unwrap();
        let bi = b.astype(DType::I64).unwrap();
        let ci = ai.t().unwrap().contiguous().unwrap().t().unwrap().matmul(&bi).unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(ci.iter().map(|&v| v as f64).collect::<Vec<_>>(), want);
    }
}

#[test]
fn matmul_errors_are_typed() {
    let a = Tensor::ones(&[2, 3], DType::F32).unwrap();
    assert!(matches!(a.matmul(&a), Err(TesseraError::ShapeMismatch(_))));
    let v = Tensor::ones(&[3], DType::F32).unwrap();
    assert!(matches!(
        a.matmul(&v),
        Err(TesseraError::InvalidArgument(_))
    ));
    let h = Tensor::ones(&[3, 2], DType::F16).unwrap();
    let c = a.astype(DType::F16).unwrap().matmul(&h).unwrap();
    assert_eq!(
        (
            c.dtype(),
            c.to_vec::<tessera::half::f16>().unwrap()[0].to_f64()
        ),
        (DType::F16, 3.0)
    );
}
