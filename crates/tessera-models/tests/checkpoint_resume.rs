//! A training run stopped at a checkpoint and resumed from the file continues with exactly
//! the losses of a run that was never stopped (issue 16, item 7; docs/design.md G6, F1): the
//! sparse logistic regression with row_sparse gradients and lazy Adam, whose moments and step
//! count must survive the file for the trajectories to agree.

use std::collections::BTreeMap;

use tessera::optim::{Adam, Optimizer};
use tessera::{autograd, io, Tensor};
use tessera_models::data::{bag_of_words, BagOfWords};
use tessera_models::logreg::{batch, SparseLogReg};
use tessera_models::loss;

const FEATURES: usize = 5_000;
const BATCH: usize = 64;

/// One step on batch `k`; returns the loss.
fn step(model: &SparseLogReg, opt: &mut Adam, data: &BagOfWords, k: usize) -> f64 {
    let rows: Vec<usize> = (k * BATCH..(k + 1) * BATCH).collect();
    let (x, y) = batch(data, &rows).unwrap();
    opt.zero_grad().unwrap();
    let l = loss::logistic(&model.forward(&x).unwrap(), &y).unwrap();
    autograd::backward(&l, None, false).unwrap();
    opt.step().unwrap();
    l.item::<f32>().unwrap() as f64
}

fn fresh() -> (SparseLogReg, Adam) {
    let model = SparseLogReg::new(FEATURES).unwrap();
    let opt = Adam::new(vec![model.w.clone(), model.b.clone()], 0.05).unwrap();
    (model, opt)
}

/// A fresh model with the weights `w`, `b` and a fresh optimiser.
fn restored(w: &Tensor, b: &Tensor) -> (SparseLogReg, Adam) {
    let (model, opt) = fresh();
    let _g = autograd::no_grad();
    model.w.assign(w).unwrap();
    model.b.assign(b).unwrap();
    (model, opt)
}

#[test]
fn resumed_run_repeats_the_losses_of_an_uninterrupted_one() {
    let (steps, stop_at) = (12, 5);
    let data = bag_of_words(steps * BATCH, FEATURES, 30, 11);

    let (model, mut opt) = fresh();
    let straight: Vec<f64> = (0..steps)
        .map(|k| step(&model, &mut opt, &data, k))
        .collect();

    let (model, mut opt) = fresh();
    let mut resumed: Vec<f64> = (0..stop_at)
        .map(|k| step(&model, &mut opt, &data, k))
        .collect();
    let path =
        std::env::temp_dir().join(format!("tessera-resume-{}.safetensors", std::process::id()));
    let state = opt.state().unwrap();
    let mut named: Vec<(&str, &Tensor)> = vec![("w", &model.w), ("b", &model.b)];
    named.extend(state.iter().map(|(n, t)| (n.as_str(), t)));
    io::save(&path, &named, &BTreeMap::new()).unwrap();
    drop((model, opt, state));

    let ck = io::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let (model, mut opt) = restored(ck.get("w").unwrap(), ck.get("b").unwrap());
    let opt_state: Vec<(String, Tensor)> = ck
        .tensors
        .iter()
        .filter(|(n, _)| n != "w" && n != "b")
        .cloned()
        .collect();
    opt.load_state(&opt_state).unwrap();
    resumed.extend((stop_at..steps).map(|k| step(&model, &mut opt, &data, k)));

    assert!(
        straight[steps - 1] < straight[0],
        "the loss falls: {straight:?}"
    );
    assert_eq!(straight, resumed);
}

#[test]
fn a_checkpoint_without_the_optimiser_state_does_not_resume_the_same_run() {
    // The test above would pass vacuously if Adam's state did not matter: check it does.
    let (steps, stop_at) = (8, 3);
    let data = bag_of_words(steps * BATCH, FEATURES, 30, 12);
    let (model, mut opt) = fresh();
    let straight: Vec<f64> = (0..steps)
        .map(|k| step(&model, &mut opt, &data, k))
        .collect();
    let (model, mut opt) = fresh();
    let mut restarted: Vec<f64> = (0..stop_at)
        .map(|k| step(&model, &mut opt, &data, k))
        .collect();
    let (w, b) = (
        model.w.detach().copy().unwrap(),
        model.b.detach().copy().unwrap(),
    );
    let (model, mut opt) = restored(&w, &b);
    restarted.extend((stop_at..steps).map(|k| step(&model, &mut opt, &data, k)));
    assert_eq!(straight[..stop_at], restarted[..stop_at]);
    assert_ne!(straight[stop_at..], restarted[stop_at..]);
}
