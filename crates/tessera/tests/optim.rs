//! Optimisers (docs/design.md G6) against naive references: SGD with momentum and Adam on
//! dense gradients, lazy updates on row_sparse gradients, and state round trips.

use proptest::prelude::*;
use tessera::optim::{Adam, Optimizer, Sgd};
use tessera::{autograd, ops, DType, Tensor};

fn param(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

/// loss = sum(w * c): the gradient of w is c.
fn backward_with(w: &Tensor, c: &[f64]) {
    let ct = Tensor::from_slice(c, w.shape()).unwrap();
    let l = w.mul(&ct).unwrap().sum(None, false).unwrap();
    autograd::backward(&l, None, false).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sgd_momentum_matches_the_reference(
        w0 in prop::collection::vec(-2.0f64..2.0, 5),
        grads in prop::collection::vec(prop::collection::vec(-1.0f64..1.0, 5), 1..5),
        lr in 0.01f64..0.5, mu in prop_oneof![Just(0.0f64), 0.0f64..0.95],
    ) {
        let w = param(&w0, &[5]);
        let mut opt = Sgd::new(vec![w.clone()], lr, mu).unwrap();
        let (mut rw, mut rv) = (w0.clone(), vec![0.0; 5]);
        for g in &grads {
            opt.zero_grad().unwrap();
            backward_with(&w, g);
            opt.step().unwrap();
            for i in 0..5 {
                rv[i] = mu * rv[i] + g[i];
                rw[i] -= lr * if mu > 0.0 { rv[i] } else { g[i] };
            }
        }
        for (a, b) in vals(&w).iter().zip(&rw) {
            prop_assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn adam_matches_the_reference(
        w0 in prop::collection::vec(-2.0f64..2.0, 4),
        grads in prop::collection::vec(prop::collection::vec(-1.0f64..1.0, 4), 1..6),
        lr in 0.001f64..0.1,
    ) {
        let w = param(&w0, &[2, 2]);
        let mut opt = Adam::new(vec![w.clone()], lr).unwrap();
        let (mut rw, mut m, mut v) = (w0.clone(), vec![0.0; 4], vec![0.0; 4]);
        for (t, g) in grads.iter().enumerate() {
            opt.zero_grad().unwrap();
            backward_with(&w, g);
            opt.step().unwrap();
            let t = (t + 1) as i32;
            for i in 0..4 {
                m[i] = 0.9 * m[i] + 0.1 * g[i];
                v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
                let (mh, vh) = (m[i] / (1.0 - 0.9f64.powi(t)), v[i] / (1.0 - 0.999f64.powi(t)));
                rw[i] -= lr * mh / (vh.sqrt() + 1e-8);
            }
        }
        for (a, b) in vals(&w).iter().zip(&rw) {
            prop_assert!((a - b).abs() < 1e-12, "{} vs {}", a, b);
        }
    }
}

#[test]
fn lazy_adam_touches_only_the_rows_of_a_row_sparse_gradient() {
    let init: Vec<f64> = (0..10).map(|i| i as f64 * 0.1).collect();
    let w = param(&init, &[5, 2]);
    let dense_w = param(&init, &[5, 2]);
    let mut lazy = Adam::new(vec![w.clone()], 0.1).unwrap();
    let mut dense = Adam::new(vec![dense_w.clone()], 0.1).unwrap();
    let steps: [&[i64]; 3] = [&[1, 3], &[3], &[1, 1]];
    for ids in steps {
        let idx = Tensor::from_slice(ids, &[ids.len()]).unwrap();
        for (p, opt) in [(&w, &mut lazy), (&dense_w, &mut dense)] {
            opt.zero_grad().unwrap();
            let e = ops::invoke("embedding", &[p.clone(), idx.clone()], &[])
                .unwrap()
                .remove(0);
            autograd::backward(&e.sum(None, false).unwrap(), None, false).unwrap();
            if std::ptr::eq(p, &dense_w) {
                // The same gradient, densified: the dense (non-lazy) update.
                let g = p
                    .grad()
                    .unwrap()
                    .cast_storage(tessera::StorageType::Default)
                    .unwrap();
                p.set_grad(Some(g)).unwrap();
            } else {
                assert_eq!(p.grad().unwrap().stype(), tessera::StorageType::RowSparse);
            }
            opt.step().unwrap();
        }
    }
    let (lw, dw) = (vals(&w), vals(&dense_w));
    // Rows never read keep their values under the lazy update.
    for r in [0, 2, 4] {
        assert_eq!(&lw[2 * r..2 * r + 2], &init[2 * r..2 * r + 2], "row {r}");
    }
    // Row 1 was skipped at step 2: the dense update kept moving it with its stale momentum,
    // the lazy update did not.
    assert!((lw[2] - dw[2]).abs() > 1e-6, "{} vs {}", lw[2], dw[2]);
    // Lazy, by hand, for row 3 (gradient 1 at steps 1 and 2, none at step 3).
    let (mut m, mut v, mut x) = (0.0, 0.0, init[6]);
    for t in 1..=2 {
        m = 0.9 * m + 0.1;
        v = 0.999 * v + 0.001;
        x -= 0.1 * (m / (1.0 - 0.9f64.powi(t))) / ((v / (1.0 - 0.999f64.powi(t))).sqrt() + 1e-8);
    }
    assert!((lw[6] - x).abs() < 1e-12);
}

#[test]
fn state_round_trip_resumes_the_same_trajectory() {
    let run = |split: Option<usize>| -> Vec<f64> {
        let w = param(&[0.5, -1.0, 2.0], &[3]);
        let mut opt = Adam::new(vec![w.clone()], 0.05).unwrap();
        for s in 0..6 {
            if Some(s) == split {
                let state = opt.state().unwrap();
                let saved_w = w.detach().copy().unwrap();
                // A fresh parameter and optimiser, restored.
                let w2 = param(&saved_w.to_vec::<f64>().unwrap(), &[3]);
                let mut opt2 = Adam::new(vec![w2.clone()], 0.05).unwrap();
                opt2.load_state(&state).unwrap();
                for s2 in s..6 {
                    opt2.zero_grad().unwrap();
                    backward_with(&w2, &[1.0, -2.0 + s2 as f64, 0.5]);
                    opt2.step().unwrap();
                }
                return vals(&w2);
            }
            opt.zero_grad().unwrap();
            backward_with(&w, &[1.0, -2.0 + s as f64, 0.5]);
            opt.step().unwrap();
        }
        vals(&w)
    };
    assert_eq!(run(None), run(Some(3)));
}

#[test]
fn a_parameter_in_column_major_order_steps_as_its_row_major_twin() {
    // An op on a transposed tensor keeps its order (docs/design.md P6): a leaf made from it
    // owns a dense, column-major block. SGD with momentum and Adam move it exactly as they
    // move the same values held row-major.
    let base: Vec<f64> = (0..6).map(|i| 0.25 * i as f64 - 0.5).collect();
    let grads = [
        [0.5, -1.0, 0.25, 2.0, -0.75, 1.5],
        [1.0, 0.0, -0.5, 0.5, 0.25, -2.0],
    ];
    for adam in [false, true] {
        let from_t = Tensor::from_slice(&base, &[2, 3])
            .unwrap()
            .t()
            .unwrap()
            .mul_scalar(1.0)
            .unwrap();
        assert!(
            !from_t.is_contiguous(),
            "the product keeps the transpose's order"
        );
        let w = from_t.requires_grad_(true).unwrap();
        let twin = param(&vals(&w), &[3, 2]);
        let make = |p: Tensor| -> Box<dyn Optimizer> {
            if adam {
                Box::new(Adam::new(vec![p], 0.1).unwrap())
            } else {
                Box::new(Sgd::new(vec![p], 0.1, 0.9).unwrap())
            }
        };
        let (mut o1, mut o2) = (make(w.clone()), make(twin.clone()));
        for g in &grads {
            for (o, p) in [(&mut o1, &w), (&mut o2, &twin)] {
                o.zero_grad().unwrap();
                backward_with(p, g);
                o.step().unwrap();
            }
        }
        assert_eq!(vals(&w), vals(&twin), "adam {adam}");
        assert_ne!(vals(&w), vals(&param(&base, &[2, 3]).t().unwrap()));
        assert!(
            !w.is_contiguous(),
            "the step writes into the parameter's own storage"
        );
    }
}

#[test]
fn bad_parameters_and_rates_are_errors() {
    let w = param(&[1.0], &[1]);
    assert!(Sgd::new(vec![w.clone()], -1.0, 0.0).is_err());
    assert!(Sgd::new(vec![w.clone()], 0.1, 1.0).is_err());
    assert!(Adam::with_betas(vec![w.clone()], 0.1, 1.0, 0.9, 1e-8).is_err());
    assert!(Sgd::new(vec![Tensor::ones(&[1], DType::F64).unwrap()], 0.1, 0.0).is_err());
    assert!(Sgd::new(vec![w.mul_scalar(2).unwrap()], 0.1, 0.0).is_err());
    let big = param(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let view = big.t().unwrap();
    assert!(Sgd::new(vec![view], 0.1, 0.0).is_err());
    let mut opt = Adam::new(vec![w], 0.1).unwrap();
    assert!(opt.load_state(&[]).is_err());
    // A step without gradients changes nothing.
    opt.step().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Lazy Adam on row sets large enough to split across threads, and dense Adam on a
    /// parameter large enough to run in chunks, against Adam written naively per element.
    #[test]
    fn large_lazy_and_dense_updates_match_the_naive_rule(
        seed in 0u64..1000,
        row_len in 1usize..3,
        dense in any::<bool>(),
    ) {
        let rows = 40_000usize;
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        let init: Vec<f64> = (0..rows * row_len).map(|i| (i % 97) as f64 * 0.01).collect();
        let w = param(&init, &[rows, row_len]);
        let mut opt = Adam::new(vec![w.clone()], 0.05).unwrap();
        let mut reference = init.clone();
        let (mut m, mut v) = (vec![0.0; init.len()], vec![0.0; init.len()]);
        for t in 1..=2 {
            // ids with repeats: each stored row's gradient is its count of reads.
            let ids: Vec<i64> = (0..12_000).map(|_| (next() % rows) as i64).collect();
            let mut count = vec![0.0; rows];
            for &i in &ids {
                count[i as usize] += 1.0;
            }
            opt.zero_grad().unwrap();
            let idx = Tensor::from_slice(&ids, &[ids.len()]).unwrap();
            let e = ops::invoke("embedding", &[w.clone(), idx], &[]).unwrap().remove(0);
            autograd::backward(&e.sum(None, false).unwrap(), None, false).unwrap();
            if dense {
                let g = w.grad().unwrap().cast_storage(tessera::StorageType::Default).unwrap();
                w.set_grad(Some(g)).unwrap();
            }
            opt.step().unwrap();
            let (c1, c2) = (1.0 - 0.9f64.powi(t), 1.0 - 0.999f64.powi(t));
            for (r, &g) in count.iter().enumerate() {
                if g == 0.0 && !dense {
                    continue; // lazy: untouched rows keep their values and moments
                }
                for j in 0..row_len {
                    let k = r * row_len + j;
                    m[k] = 0.9 * m[k] + 0.1 * g;
                    v[k] = 0.999 * v[k] + 0.001 * g * g;
                    reference[k] -= 0.05 * (m[k] / c1) / ((v[k] / c2).sqrt() + 1e-8);
                }
            }
        }
        let got = vals(&w);
        for (k, (a, b)) in got.iter().zip(&reference).enumerate() {
            prop_assert!((a - b).abs() < 1e-12, "element {k}: {a} vs {b}");
        }
    }
}
