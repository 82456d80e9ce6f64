//! The factorization-free part of `linalg` against loops over the definitions.

use proptest::prelude::*;
use tessera::{DType, MatrixNorm, Tensor};

fn matrix() -> impl Strategy<Value = (Vec<f64>, usize, usize)> {
    (1usize..5, 1usize..5).prop_flat_map(|(m, n)| {
        (proptest::collection::vec(-5i32..5, m * n), Just(m), Just(n))
            .prop_map(|(v, m, n)| (v.into_iter().map(f64::from).collect(), m, n))
    })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

proptest! {
    #[test]
    fn diagonal_trace_and_norms_match_loops((v, m, n) in matrix(), offset in -5isize..5, p in 1u8..4) {
        let t = Tensor::from_vec(v.clone(), &[m, n]).unwrap();
        let at = |i: usize, j: usize| v[i * n + j];
        // diagonal and trace
        let want: Vec<f64> = (0..m)
            .filter_map(|i| {
                let j = i as isize + offset;
                (j >= 0 && (j as usize) < n).then(|| at(i, j as usize))
            })
            .collect();
        prop_assert_eq!(t.diagonal(offset).unwrap().to_vec::<f64>().unwrap(), want.clone());
        // through a transposed view too: the diagonal of t.T at -offset is the same elements
        let tt = t.t().unwrap();
        prop_assert_eq!(tt.diagonal(-offset).unwrap().to_vec::<f64>().unwrap(), want.clone());
        let tr = t.trace(offset, None).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert!(close(tr, want.iter().sum()));
        // vector norms over everything
        let p = f64::from(p);
        let got = t.vector_norm(None, false, p).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert!(close(got, v.iter().map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p)));
        let inf = t.vector_norm(None, false, f64::INFINITY).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert_eq!(inf, v.iter().fold(0.0f64, |a, x| a.max(x.abs())));
        let zero = t.vector_norm(None, false, 0.0).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert_eq!(zero, v.iter().filter(|x| **x != 0.0).count() as f64);
        // matrix norms
        let fro = t.matrix_norm(false, MatrixNorm::Frobenius).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert!(close(fro, v.iter().map(|x| x * x).sum::<f64>().sqrt()));
        let cols: Vec<f64> = (0..n).map(|j| (0..m).map(|i| at(i, j).abs()).sum()).collect();
        let rows: Vec<f64> = (0..m).map(|i| (0..n).map(|j| at(i, j).abs()).sum()).collect();
        let one = t.matrix_norm(false, MatrixNorm::Columns { max: true }).unwrap().to_vec::<f64>().unwrap()[0];
        prop_assert_eq!(one, cols.iter().cloned().fold(f64::MIN, f64::max));
        let ninf = t.matrix_norm(true, MatrixNorm::Rows { max: false }).unwrap();
        prop_assert_eq!(ninf.shape(), &[1usize, 1][..]);
        prop_assert_eq!(ninf.to_vec::<f64>().unwrap()[0], rows.iter().cloned().fold(f64::MAX, f64::min));
    }

    #[test]
    fn matrix_power_is_repeated_products(v in proptest::collection::vec(-2i64..3, 9), e in 0i64..7) {
        let t = Tensor::from_vec(v.clone(), &[3, 3]).unwrap();
        let mut want = vec![0i64; 9];
        for i in 0..3 { want[i * 3 + i] = 1; }
        for _ in 0..e {
            let mut next = vec![0i64; 9];
            for i in 0..3 { for j in 0..3 { for k in 0..3 { next[i * 3 + j] += want[i * 3 + k] * v[k * 3 + j]; } } }
            want = next;
        }
        let got = t.matrix_power(e).unwrap();
        prop_assert_eq!(got.dtype(), DType::I64);
        prop_assert_eq!(got.to_vec::<i64>().unwrap(), want);
    }
}

#[test]
fn outer_cross_and_errors() {
    let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3]).unwrap();
    let b = Tensor::from_slice(&[4.0f64, 5.0], &[2]).unwrap();
    assert_eq!(
        a.outer(&b).unwrap().to_vec::<f64>().unwrap(),
        vec![4., 5., 8., 10., 12., 15.]
    );
    let x = Tensor::from_slice(&[1.0f64, 0.0, 0.0, 0.0, 1.0, 0.0], &[2, 3]).unwrap();
    let y = Tensor::from_slice(&[0.0f64, 1.0, 0.0], &[3]).unwrap();
    // e_x × e_y = e_z, e_y × e_y = 0, broadcast over the leading dim.
    assert_eq!(
        x.cross(&y, -1).unwrap().to_vec::<f64>().unwrap(),
        vec![0., 0., 1., 0., 0., 0.]
    );
    // Typed errors, not panics.
    assert!(a.cross(&b, -1).is_err());
    assert!(a.outer(&x).is_err());
    assert!(a.diagonal(0).is_err());
    assert!(x.matrix_power(2).is_err());
    let sq = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    // [[1, 2], [3, 4]]^-1 = [[-2, 1], [1.5, -0.5]].
    let inv = sq.matrix_power(-1).unwrap().to_vec::<f64>().unwrap();
    for (g, w) in inv.iter().zip([-2.0, 1.0, 1.5, -0.5]) {
        assert!((g - w).abs() < 1e-12, "{inv:?}");
    }
    assert_eq!(
        sq.matrix_power(0).unwrap().to_vec::<f64>().unwrap(),
        vec![1., 0., 0., 1.]
    );
    // Empty diagonals past the matrix, batched diagonals.
    assert_eq!(sq.diagonal(5).unwrap().shape(), &[0usize][..]);
    let batch = Tensor::from_vec((0..8).map(f64::from).collect(), &[2, 2, 2]).unwrap();
    assert_eq!(
        batch.diagonal(0).unwrap().to_vec::<f64>().unwrap(),
        vec![0., 3., 4., 7.]
    );
    assert_eq!(
        batch.trace(0, Some(DType::F32)).unwrap().dtype(),
        DType::F32
    );
}

/// The norms are differentiable through the ops they are made of (`abs`, `sum`, `sqrt`,
/// `pow`, `max`, `svdvals`): their gradients match central finite differences of the norm
/// itself, for every vector `ord` that is smooth at the input and every matrix norm.
#[test]
fn norm_gradients_match_finite_differences() {
    // Distinct magnitudes and no zeros (where |x| and max have no derivative).
    let v = [0.7f64, -1.3, 2.1, -0.4, 1.7, -2.6];
    let fd = |f: &dyn Fn(&Tensor) -> Tensor| -> (Vec<f64>, Vec<f64>) {
        let x = Tensor::from_slice(&v, &[2, 3])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let y = f(&x);
        tessera::autograd::backward(&y, None, false).unwrap();
        let analytic = x.grad().unwrap().to_vec::<f64>().unwrap();
        let h = 1e-6;
        let at = |w: &[f64]| -> f64 {
            f(&Tensor::from_slice(w, &[2, 3]).unwrap())
                .item::<f64>()
                .unwrap()
        };
        let numeric = (0..v.len())
            .map(|i| {
                let (mut up, mut down) = (v.to_vec(), v.to_vec());
                up[i] += h;
                down[i] -= h;
                (at(&up) - at(&down)) / (2.0 * h)
            })
            .collect();
        (analytic, numeric)
    };
    type Norm = (&'static str, Box<dyn Fn(&Tensor) -> Tensor>);
    let mut norms: Vec<Norm> = Vec::new();
    for ord in [1.0, 2.0, 3.0, 0.5, f64::INFINITY, f64::NEG_INFINITY] {
        norms.push((
            "vector_norm",
            Box::new(move |t: &Tensor| t.vector_norm(None, false, ord).unwrap()),
        ));
    }
    for ord in [
        MatrixNorm::Frobenius,
        MatrixNorm::Columns { max: true },
        MatrixNorm::Rows { max: false },
        MatrixNorm::Spectral { max: true },
        MatrixNorm::Spectral { max: false },
        MatrixNorm::Nuclear,
    ] {
        norms.push((
            "matrix_norm",
            Box::new(move |t: &Tensor| t.matrix_norm(false, ord).unwrap().reshape(&[]).unwrap()),
        ));
    }
    for (k, (name, f)) in norms.iter().enumerate() {
        let (analytic, numeric) = fd(f.as_ref());
        for (a, n) in analytic.iter().zip(&numeric) {
            assert!(
                (a - n).abs() <= 1e-6 * (1.0 + n.abs()),
                "{name} #{k}: analytic {analytic:?}, numeric {numeric:?}"
            );
        }
    }
}
