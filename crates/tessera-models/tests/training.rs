//! The two example models train, on smaller copies of the tour's runs: the loss falls and the
//! held-out accuracy beats chance by a wide margin (docs/design.md G7).

use tessera_models::logreg::{self, LogRegConfig};
use tessera_models::mlp::{self, MlpConfig};

#[test]
fn sparse_logistic_regression_learns() {
    let cfg = LogRegConfig {
        docs: 8_000,
        features: 20_000,
        words: 40,
        batch: 128,
        epochs: 1,
        lr: 0.02,
        seed: 3,
        progress: false,
    };
    let r = logreg::train(&cfg).unwrap();
    let (first, last) = (r.first_loss(10), r.last_loss(10));
    assert!(last < first - 0.05, "loss {first} -> {last}");
    assert!(
        r.final_accuracy() > r.chance + 0.1,
        "accuracy {} vs chance {}",
        r.final_accuracy(),
        r.chance
    );
}

#[test]
fn mlp_learns_the_spirals() {
    let cfg = MlpConfig {
        per_class: 150,
        classes: 3,
        hidden: 32,
        batch: 64,
        steps: 400,
        lr: 0.02,
        seed: 5,
        progress: false,
    };
    let r = mlp::train(&cfg).unwrap();
    let (first, last) = (r.first_loss(20), r.last_loss(20));
    assert!(last < first / 3.0, "loss {first} -> {last}");
    assert!(
        r.final_accuracy() > 0.8,
        "accuracy {} (chance {})",
        r.final_accuracy(),
        r.chance
    );
}

/// The README's example, as written there.
#[test]
fn readme_gradient_example_runs_and_fits() -> tessera::Result<()> {
    use tessera::optim::{Adam, Optimizer};
    use tessera::{autograd, DType, Tensor};
    let w = Tensor::zeros(&[3, 1], DType::F32)?.requires_grad_(true)?;
    let mut opt = Adam::new(vec![w.clone()], 0.1)?;
    let x = Tensor::from_vec(vec![1f32, 2., 3., 4., 5., 6.], &[2, 3])?;
    let y = Tensor::from_vec(vec![1f32, -1.], &[2, 1])?;
    let mut last = f32::INFINITY;
    for _ in 0..100 {
        opt.zero_grad()?;
        let loss = x.matmul(&w)?.sub(&y)?.square()?.mean(None, false)?;
        autograd::backward(&loss, None, false)?;
        opt.step()?;
        last = loss.item::<f32>()?;
    }
    assert!(last < 1e-2, "loss {last}");
    Ok(())
}
