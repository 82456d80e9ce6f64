//! The factorizations (`det`, `slogdet`, `inv`, `solve`, `cholesky`, `eigh`, `svd`, `qr`,
//! `pinv`, `matrix_rank`, the spectral norms, negative `matrix_power`) against references
//! written from the definitions: the Leibniz sum for the determinant, and products that must
//! give the input back (`a @ inv(a) = I`, `L L^T = a`, `a V = V diag(w)`, `U S Vh = a`,
//! `Q R = a`). The Python suite compares the same functions with NumPy.

use proptest::prelude::*;
use tessera::{DType, ErrorKind, MatrixNorm, Tensor, C128};

/// Square matrices with small integer entries (exact in f64), several per batch.
fn stack() -> impl Strategy<Value = (Vec<f64>, usize, usize)> {
    (1usize..4, 1usize..5).prop_flat_map(|(b, n)| {
        (
            proptest::collection::vec(-4i32..5, b * n * n),
            Just(b),
            Just(n),
        )
            .prop_map(|(v, b, n)| (v.into_iter().map(f64::from).collect(), b, n))
    })
}

/// The determinant by the Leibniz formula (sum over permutations).
fn leibniz(a: &[f64], n: usize) -> f64 {
    fn perms(k: usize, p: &mut Vec<usize>, used: &mut Vec<bool>, out: &mut Vec<(Vec<usize>, f64)>) {
        let n = used.len();
        if k == n {
            let mut sign = 1.0;
            for i in 0..n {
                for j in i + 1..n {
                    if p[i] > p[j] {
                        sign = -sign;
                    }
                }
            }
            out.push((p.clone(), sign));
            return;
        }
        for c in 0..n {
            if !used[c] {
                used[c] = true;
                p.push(c);
                perms(k + 1, p, used, out);
                p.pop();
                used[c] = false;
            }
        }
    }
    let mut all = Vec::new();
    perms(0, &mut Vec::new(), &mut vec![false; n], &mut all);
    all.iter()
        .map(|(p, s)| s * (0..n).map(|i| a[i * n + p[i]]).product::<f64>())
        .sum()
}

fn t(v: &[f64], dims: &[usize]) -> Tensor {
    Tensor::from_slice(v, dims).unwrap()
}

fn vals(x: &Tensor) -> Vec<f64> {
    x.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{got:?} vs {want:?}"
        );
    }
}

/// A well-conditioned matrix: the integer matrix plus `4 n` on the diagonal.
fn dominant(v: &[f64], b: usize, n: usize) -> Vec<f64> {
    let mut w = v.to_vec();
    for k in 0..b {
        for i in 0..n {
            w[k * n * n + i * n + i] += 4.0 * n as f64 + 1.0;
        }
    }
    w
}

fn eye_stack(b: usize, n: usize) -> Vec<f64> {
    (0..b * n * n)
        .map(|i| {
            if (i % (n * n)).is_multiple_of(n + 1) {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn det_and_slogdet_match_the_leibniz_sum((v, b, n) in stack()) {
        let a = t(&v, &[b, n, n]);
        let want: Vec<f64> = (0..b).map(|k| leibniz(&v[k * n * n..(k + 1) * n * n], n)).collect();
        assert_close(&vals(&a.det().unwrap()), &want, 1e-9);
        let (sign, log) = a.slogdet().unwrap();
        let (sign, log) = (vals(&sign), vals(&log));
        for k in 0..b {
            if want[k] == 0.0 {
                prop_assert!(sign[k] == 0.0 && log[k] == f64::NEG_INFINITY || want[k].abs() < 1e-9);
            } else {
                prop_assert_eq!(sign[k], want[k].signum());
                prop_assert!((log[k] - want[k].abs().ln()).abs() < 1e-9);
            }
        }
        // float32 computes in float32 and stays float32.
        let d32 = a.astype(DType::F32).unwrap().det().unwrap();
        prop_assert_eq!(d32.dtype(), DType::F32);
    }

    #[test]
    fn inv_and_solve_give_the_identity_back((v, b, n) in stack(), k in 1usize..3) {
        let w = dominant(&v, b, n);
        let a = t(&w, &[b, n, n]);
        let inv = a.inv().unwrap();
        assert_close(&vals(&a.matmul(&inv).unwrap()), &eye_stack(b, n), 1e-10);
        // solve: b broadcast against a's batch, and a 1-D right-hand side.
        let rhs = Tensor::from_vec((0..n * k).map(|i| i as f64 - 1.5).collect(), &[1, n, k]).unwrap();
        let x = a.solve(&rhs).unwrap();
        prop_assert_eq!(x.shape(), &[b, n, k][..]);
        let back = a.matmul(&x).unwrap();
        assert_close(&vals(&back), &vals(&rhs.broadcast_to(&[b, n, k]).unwrap()), 1e-10);
        let vec_rhs = Tensor::from_vec((0..n).map(|i| i as f64).collect(), &[n]).unwrap();
        let xv = a.solve(&vec_rhs).unwrap();
        prop_assert_eq!(xv.shape(), &[b, n][..]);
        let back = a.matmul(&xv.unsqueeze(-1).unwrap()).unwrap().squeeze(Some(&[-1])).unwrap();
        assert_close(&vals(&back), &vals(&vec_rhs.broadcast_to(&[b, n]).unwrap()), 1e-10);
        // A negative power is the inverse's power.
        let m2 = a.matrix_power(-2).unwrap();
        assert_close(&vals(&m2), &vals(&inv.matmul(&inv).unwrap()), 1e-10);
    }

    #[test]
    fn cholesky_eigh_svd_and_qr_reconstruct_their_input((v, b, n) in stack(), upper in any::<bool>()) {
        let g = t(&v, &[b, n, n]);
        // A symmetric positive-definite matrix: g g^T + n I.
        let spd = g.matmul(&g.matrix_transpose().unwrap()).unwrap()
            .add(&t(&eye_stack(b, n), &[b, n, n]).mul_scalar(n as f64).unwrap()).unwrap();
        let l = spd.cholesky(upper).unwrap();
        let back = if upper {
            l.matrix_transpose().unwrap().matmul(&l).unwrap()
        } else {
            l.matmul(&l.matrix_transpose().unwrap()).unwrap()
        };
        assert_close(&vals(&back), &vals(&spd), 1e-10);
        let lv = vals(&l);
        for k in 0..b {
            for i in 0..n {
                for j in 0..n {
                    let zero_side = if upper { i > j } else { j > i };
                    if zero_side {
                        prop_assert_eq!(lv[k * n * n + i * n + j], 0.0);
                    }
                }
            }
        }
        // eigh: a V = V diag(w), V orthonormal, w ascending and equal to eigvalsh.
        let (w, vecs) = spd.eigh().unwrap();
        let av = spd.matmul(&vecs).unwrap();
        let vw = vecs.mul(&w.unsqueeze(-2).unwrap()).unwrap();
        assert_close(&vals(&av), &vals(&vw), 1e-9);
        let vtv = vecs.matrix_transpose().unwrap().matmul(&vecs).unwrap();
        assert_close(&vals(&vtv), &eye_stack(b, n), 1e-10);
        let wv = vals(&w);
        for k in 0..b {
            for i in 1..n {
                prop_assert!(wv[k * n + i - 1] <= wv[k * n + i]);
            }
        }
        assert_close(&vals(&spd.eigvalsh().unwrap()), &wv, 1e-10);
        // svd of a rectangular slice, reduced and full.
        let rect = g.narrow(-1, 0, n.div_ceil(2)).unwrap();
        for full in [false, true] {
            let (u, s, vh) = rect.svd(full).unwrap();
            let kk = s.shape()[1];
            let us = u.narrow(-1, 0, kk).unwrap().mul(&s.unsqueeze(-2).unwrap()).unwrap();
            let back = us.matmul(&vh.narrow(-2, 0, kk).unwrap()).unwrap();
            assert_close(&vals(&back), &vals(&rect), 1e-9);
            let utu = u.matrix_transpose().unwrap().matmul(&u).unwrap();
            let ku = u.shape()[2];
            assert_close(&vals(&utu), &eye_stack(b, ku), 1e-10);
            assert_close(&vals(&rect.svdvals().unwrap()), &vals(&s), 1e-10);
        }
        // qr: Q R = a, Q^T Q = I, R upper triangular.
        for complete in [false, true] {
            let (q, r) = rect.qr(complete).unwrap();
            assert_close(&vals(&q.matmul(&r).unwrap()), &vals(&rect), 1e-10);
            let kq = q.shape()[2];
            assert_close(&vals(&q.matrix_transpose().unwrap().matmul(&q).unwrap()), &eye_stack(b, kq), 1e-10);
            let (rr, rc) = (r.shape()[1], r.shape()[2]);
            let rv = vals(&r);
            for k in 0..b {
                for i in 0..rr {
                    for j in 0..i.min(rc) {
                        prop_assert_eq!(rv[k * rr * rc + i * rc + j], 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn pinv_rank_and_spectral_norms_follow_the_singular_values((v, b, n) in stack(), drop in 0usize..3) {
        // A matrix of rank at most n - drop: g with its last `drop` columns zeroed, times h.
        let mut z = v.clone();
        for k in 0..b {
            for i in 0..n {
                for j in n.saturating_sub(drop)..n {
                    z[k * n * n + i * n + j] = 0.0;
                }
            }
        }
        let a = t(&z, &[b, n, n]);
        let s = a.svdvals().unwrap();
        let sv = vals(&s);
        let rank = vals(&a.matrix_rank(None).unwrap());
        for k in 0..b {
            let sk = &sv[k * n..(k + 1) * n];
            let tol = sk[0] * n as f64 * f64::EPSILON;
            let want = sk.iter().filter(|&&x| x > tol).count() as f64;
            prop_assert_eq!(rank[k], want);
            prop_assert!(want <= (n - drop.min(n)) as f64);
        }
        // Penrose's first condition: a pinv(a) a = a.
        let p = a.pinv(None).unwrap();
        let back = a.matmul(&p).unwrap().matmul(&a).unwrap();
        assert_close(&vals(&back), &z, 1e-8);
        let two = vals(&a.matrix_norm(false, MatrixNorm::Spectral { max: true }).unwrap());
        let nuc = vals(&a.matrix_norm(false, MatrixNorm::Nuclear).unwrap());
        for k in 0..b {
            let sk = &sv[k * n..(k + 1) * n];
            prop_assert!((two[k] - sk[0]).abs() < 1e-12);
            prop_assert!((nuc[k] - sk.iter().sum::<f64>()).abs() < 1e-9);
        }
    }
}

#[test]
fn complex_matrices_factor_in_complex_arithmetic() {
    // a = [[2, i], [-i, 3]] (Hermitian, eigenvalues (5 ± √5) / 2, det 5).
    let c = |re, im| C128::new(re, im);
    let a = Tensor::from_vec(vec![c(2., 0.), c(0., 1.), c(0., -1.), c(3., 0.)], &[2, 2]).unwrap();
    let d = a.det().unwrap();
    assert_eq!(d.dtype(), DType::C128);
    let d = d.to_vec::<C128>().unwrap()[0];
    assert!((d.re() - 5.0).abs() < 1e-12 && d.im().abs() < 1e-12);
    let (w, _) = a.eigh().unwrap();
    assert_eq!(w.dtype(), DType::F64);
    let s5 = 5f64.sqrt();
    assert_close(
        &w.to_vec::<f64>().unwrap(),
        &[(5.0 - s5) / 2.0, (5.0 + s5) / 2.0],
        1e-12,
    );
    let (sign, log) = a.slogdet().unwrap();
    assert_eq!((sign.dtype(), log.dtype()), (DType::C128, DType::F64));
    assert!((log.to_vec::<f64>().unwrap()[0] - 5f64.ln()).abs() < 1e-12);
    // L L^H = a.
    let l = a.cholesky(false).unwrap();
    let back = l
        .matmul(&l.conj().unwrap().matrix_transpose().unwrap())
        .unwrap();
    for (g, w) in back
        .to_vec::<C128>()
        .unwrap()
        .iter()
        .zip(a.to_vec::<C128>().unwrap())
    {
        assert!((g.re() - w.re()).abs() < 1e-12 && (g.im() - w.im()).abs() < 1e-12);
    }
    // U S Vh = a for a non-Hermitian complex64 matrix, singular values float32.
    let b = a.astype(DType::C64).unwrap().mul_scalar(2.0).unwrap();
    let (_, s, _) = b.svd(true).unwrap();
    assert_eq!(s.dtype(), DType::F32);
}

#[test]
fn errors_are_typed() {
    let singular = t(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
    assert!(matches!(
        singular.inv().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    assert!(matches!(
        singular
            .solve(&t(&[1.0, 1.0], &[2]))
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    assert!(matches!(
        singular.matrix_power(-1).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    assert_eq!(vals(&singular.det().unwrap()), vec![0.0]);
    let (sign, log) = singular.slogdet().unwrap();
    assert_eq!(
        (vals(&sign), vals(&log)),
        (vec![0.0], vec![f64::NEG_INFINITY])
    );
    let indefinite = t(&[1.0, 2.0, 2.0, 1.0], &[2, 2]);
    assert!(matches!(
        indefinite.cholesky(false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    let nan = t(&[f64::NAN, 0.0, 0.0, 1.0], &[2, 2]);
    assert!(matches!(
        nan.svd(true).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    assert!(matches!(
        nan.eigh().as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
    let rect = t(&[1.0, 2.0, 3.0], &[1, 3]);
    for r in [
        rect.det(),
        rect.inv(),
        rect.cholesky(false),
        rect.eigvalsh(),
    ] {
        assert!(
            matches!(
                r.as_ref().map_err(|e| e.kind()),
                Err(ErrorKind::InvalidShape(_))
            ),
            "{r:?}"
        );
    }
    let v = t(&[1.0, 2.0], &[2]);
    assert!(matches!(
        v.svd(false).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidShape(_))
    ));
    // solve: a 2-D b whose rows differ from n, and batch dims that do not broadcast.
    let a = t(&[2.0, 0.0, 0.0, 2.0], &[2, 2]);
    assert!(a.solve(&t(&[1.0, 2.0, 3.0], &[3])).is_err());
    let a3 = Tensor::zeros(&[3, 2, 2], DType::F64).unwrap();
    assert!(a3
        .solve(&Tensor::zeros(&[2, 2, 1], DType::F64).unwrap())
        .is_err());
}

#[test]
fn empty_matrices_follow_numpy() {
    let e = Tensor::zeros(&[3, 0, 0], DType::F32).unwrap();
    assert_eq!(vals(&e.det().unwrap()), vec![1.0; 3]);
    assert_eq!(e.inv().unwrap().shape(), &[3, 0, 0]);
    let (w, v) = e.eigh().unwrap();
    assert_eq!(
        (w.shape(), v.shape()),
        (&[3usize, 0][..], &[3usize, 0, 0][..])
    );
    let wide = Tensor::zeros(&[0, 3], DType::F64).unwrap();
    let (u, s, vh) = wide.svd(true).unwrap();
    assert_eq!(
        (u.shape(), s.shape(), vh.shape()),
        (&[0usize, 0][..], &[0usize][..], &[3usize, 3][..])
    );
    assert_eq!(vals(&vh), eye_stack(1, 3));
    let (q, r) = Tensor::zeros(&[2, 0], DType::F64)
        .unwrap()
        .qr(true)
        .unwrap();
    assert_eq!((q.shape(), r.shape()), (&[2usize, 2][..], &[2usize, 0][..]));
    assert_eq!(vals(&q), eye_stack(1, 2));
    assert_eq!(wide.pinv(None).unwrap().shape(), &[3, 0]);
    assert_eq!(vals(&wide.matrix_rank(None).unwrap()), vec![0.0]);
    // Integer input computes in float64.
    let i = Tensor::from_vec(vec![2i64, 0, 0, 3], &[2, 2]).unwrap();
    assert_eq!(i.inv().unwrap().dtype(), DType::F64);
    assert_eq!(vals(&i.det().unwrap()), vec![6.0]);
}

/// `sum(w * V²)` through eigh's eigenvectors (squares: independent of each vector's sign)
/// against central differences; the gate checks the eigenvalues.
#[test]
fn eigh_vector_gradients_match_finite_differences() {
    use tessera::autograd;
    let a0 = [2.0, 0.3, -0.4, 0.3, 1.0, 0.2, -0.4, 0.2, -1.5];
    let w = t(&[0.3, -1.2, 0.7, 0.9, 0.1, -0.5, 1.1, -0.8, 0.4], &[3, 3]);
    // The loss of a matrix (a leaf or not): it reads both eigh outputs.
    let loss_of = |a: &Tensor| -> Tensor {
        let (vals, vecs) = a.eigh().unwrap();
        let through_vectors = vecs
            .square()
            .unwrap()
            .mul(&w)
            .unwrap()
            .sum(None, false)
            .unwrap();
        let through_values = vals.sum(None, false).unwrap().mul_scalar(0.25).unwrap();
        through_vectors.add(&through_values).unwrap()
    };
    let loss = |v: &[f64]| loss_of(&t(v, &[3, 3]));
    let leaf = t(&a0, &[3, 3]).requires_grad_(true).unwrap();
    let l = loss_of(&leaf);
    autograd::backward(&l, None, false).unwrap();
    let g = leaf.grad().unwrap().to_vec::<f64>().unwrap();
    let h = 1e-6;
    for j in 0..9 {
        let (mut plus, mut minus) = (a0.to_vec(), a0.to_vec());
        plus[j] += h;
        minus[j] -= h;
        let numeric =
            (loss(&plus).item::<f64>().unwrap() - loss(&minus).item::<f64>().unwrap()) / (2.0 * h);
        assert!(
            (g[j] - numeric).abs() <= 1e-5 * (1.0 + numeric.abs()),
            "element {j}: analytic {} vs numeric {numeric}",
            g[j]
        );
    }
}

#[test]
fn gradients_that_are_not_built_are_errors() {
    use tessera::autograd;
    let leaf = t(&[2.0, 1.0, 0.5, 3.0], &[2, 2])
        .requires_grad_(true)
        .unwrap();
    let (u, s, _) = leaf.svd(false).unwrap();
    // Through S: fine; through U: an Autograd error, not a wrong gradient.
    autograd::backward(&s.sum(None, false).unwrap(), None, false).unwrap();
    assert!(leaf.grad().is_some());
    let l = u.sum(None, false).unwrap();
    assert!(matches!(
        autograd::backward(&l, None, false)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::Autograd(_))
    ));
    // det of a singular matrix: the backward needs the inverse.
    let sing = t(&[1.0, 2.0, 2.0, 4.0], &[2, 2])
        .requires_grad_(true)
        .unwrap();
    let d = sing.det().unwrap();
    assert!(matches!(
        autograd::backward(&d, None, false)
            .as_ref()
            .map_err(|e| e.kind()),
        Err(ErrorKind::LinAlg(_))
    ));
}
