//! A small MLP classifier on interleaved spirals: `relu(x W1 + b1)`, `relu(h W2 + b2)`,
//! `h W3 + b3`, softmax cross-entropy, Adam.

use rand::rngs::StdRng;
use rand::SeedableRng;
use tessera::optim::{Adam, Optimizer};
use tessera::{autograd, DType, Result, Tensor};

use crate::data::{normal, spirals, split};
use crate::{loss, progress, Report};

/// Sizes and rates of a run.
#[derive(Clone, Debug)]
pub struct MlpConfig {
    /// Points per spiral arm (a fifth are held out).
    pub per_class: usize,
    /// Spiral arms (classes).
    pub classes: usize,
    /// Width of the two hidden layers.
    pub hidden: usize,
    /// Points per step.
    pub batch: usize,
    /// Training steps.
    pub steps: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Seed of the data, the split and the initial weights.
    pub seed: u64,
    /// Show a progress bar.
    pub progress: bool,
}

impl MlpConfig {
    /// The tour's size.
    pub fn tour() -> MlpConfig {
        MlpConfig {
            per_class: 500,
            classes: 3,
            hidden: 64,
            batch: 128,
            steps: 1500,
            lr: 0.01,
            seed: 11,
            progress: true,
        }
    }
}

/// The network's parameters (float32 leaves).
pub struct Mlp {
    /// `[(W, b)]` of the three layers.
    pub layers: Vec<(Tensor, Tensor)>,
}

impl Mlp {
    /// He-initialised layers `inputs → hidden → hidden → outputs`.
    pub fn new(inputs: usize, hidden: usize, outputs: usize, seed: u64) -> Result<Mlp> {
        Mlp::with_dims(&[inputs, hidden, hidden, outputs], seed)
    }

    /// He-initialised layers between consecutive `dims` (ReLU between them).
    pub fn with_dims(dims: &[usize], seed: u64) -> Result<Mlp> {
        let mut rng = StdRng::seed_from_u64(seed);
        let layers = dims
            .windows(2)
            .map(|d| {
                let std = (2.0 / d[0] as f32).sqrt();
                let w = Tensor::from_vec(normal(&mut rng, d[0] * d[1], std), &[d[0], d[1]])?
                    .requires_grad_(true)?;
                let b = Tensor::zeros(&[d[1]], DType::F32)?.requires_grad_(true)?;
                Ok((w, b))
            })
            .collect::<Result<_>>()?;
        Ok(Mlp { layers })
    }

    /// Logits `[batch, outputs]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for (i, (w, b)) in self.layers.iter().enumerate() {
            h = h.matmul(w)?.add(b)?;
            if i + 1 < self.layers.len() {
                h = h.relu()?;
            }
        }
        Ok(h)
    }

    /// Every parameter.
    pub fn params(&self) -> Vec<Tensor> {
        self.layers
            .iter()
            .flat_map(|(w, b)| [w.clone(), b.clone()])
            .collect()
    }
}

/// Points `[n, 2]` and one-hot targets `[n, classes]` of `rows`.
fn batch(
    points: &[[f32; 2]],
    labels: &[usize],
    classes: usize,
    rows: &[usize],
) -> Result<(Tensor, Tensor)> {
    let x: Vec<f32> = rows.iter().flat_map(|&r| points[r]).collect();
    let mut t = vec![0f32; rows.len() * classes];
    for (i, &r) in rows.iter().enumerate() {
        t[i * classes + labels[r]] = 1.0;
    }
    Ok((
        Tensor::from_vec(x, &[rows.len(), 2])?,
        Tensor::from_vec(t, &[rows.len(), classes])?,
    ))
}

fn accuracy(model: &Mlp, x: &Tensor, labels: &[usize]) -> Result<f64> {
    let _g = autograd::no_grad();
    let logits = model.forward(x)?;
    let classes = logits.shape()[1];
    let v = logits.to_vec::<f32>()?;
    let right = labels
        .iter()
        .enumerate()
        .filter(|(i, &y)| {
            let row = &v[i * classes..(i + 1) * classes];
            let best = (0..classes)
                .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                .unwrap_or(0);
            best == y
        })
        .count();
    Ok(right as f64 / labels.len().max(1) as f64)
}

/// Trains on a fresh data set; returns the curves.
pub fn train(cfg: &MlpConfig) -> Result<Report> {
    let (points, labels) = spirals(cfg.per_class, cfg.classes, cfg.seed);
    let n = points.len();
    let (train_rows, test_rows) = split(n, n / 5, cfg.seed + 1);
    let (test_x, _) = batch(&points, &labels, cfg.classes, &test_rows)?;
    let test_labels: Vec<usize> = test_rows.iter().map(|&r| labels[r]).collect();
    let model = Mlp::new(2, cfg.hidden, cfg.classes, cfg.seed + 2)?;
    let mut opt = Adam::new(model.params(), cfg.lr)?;
    let pb = progress::bar("mlp", cfg.steps, cfg.progress);
    let mut counts = vec![0usize; cfg.classes];
    test_labels.iter().for_each(|&c| counts[c] += 1);
    let mut report = Report {
        name: format!("MLP 2-{0}-{0}-{1} on spirals", cfg.hidden, cfg.classes),
        loss: Vec::with_capacity(cfg.steps),
        accuracy: vec![(0, accuracy(&model, &test_x, &test_labels)?)],
        chance: *counts.iter().max().unwrap_or(&0) as f64 / test_labels.len().max(1) as f64,
    };
    let mut order = train_rows.clone();
    let mut at = 0;
    for step in 1..=cfg.steps {
        if at + cfg.batch > order.len() {
            let (shuffled, _) = split(order.len(), 0, cfg.seed + step as u64);
            order = shuffled.iter().map(|&i| train_rows[i]).collect();
            at = 0;
        }
        let rows = &order[at..(at + cfg.batch).min(order.len())];
        at += cfg.batch;
        let (x, t) = batch(&points, &labels, cfg.classes, rows)?;
        opt.zero_grad()?;
        let l = loss::cross_entropy(&model.forward(&x)?, &t)?;
        autograd::backward(&l, None, false)?;
        opt.step()?;
        report.loss.push(l.item::<f32>()? as f64);
        if step % 50 == 0 || step == cfg.steps {
            report
                .accuracy
                .push((step, accuracy(&model, &test_x, &test_labels)?));
        }
        pb.set_message(format!("loss {:.4}", report.last_loss(50)));
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(report)
}
