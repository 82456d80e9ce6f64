//! Sparse logistic regression on bag-of-words CSR features: `z = X W + b`, logistic loss,
//! the weight gradient row_sparse (only the words a batch contains), lazy Adam (docs/design.md
//! G5, G6).

use tessera::optim::{Adam, Optimizer};
use tessera::{autograd, CsrMatrix, DType, Result, SparseParts, Tensor};

use crate::data::{bag_of_words, split, BagOfWords};
use crate::{loss, progress, Report};

/// Sizes and rates of a run.
#[derive(Clone, Debug)]
pub struct LogRegConfig {
    /// Documents (a fifth are held out).
    pub docs: usize,
    /// Features (vocabulary size).
    pub features: usize,
    /// Words drawn per document.
    pub words: usize,
    /// Documents per step.
    pub batch: usize,
    /// Passes over the training documents.
    pub epochs: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// Seed of the data and the shuffles.
    pub seed: u64,
    /// Show a progress bar.
    pub progress: bool,
}

impl LogRegConfig {
    /// The tour's size: 100 000 features, 50 000 documents, one pass.
    pub fn tour() -> LogRegConfig {
        LogRegConfig {
            docs: 50_000,
            features: 100_000,
            words: 60,
            batch: 256,
            epochs: 1,
            lr: 0.01,
            seed: 7,
            progress: true,
        }
    }
}

/// The model: one weight per feature and a bias.
pub struct SparseLogReg {
    /// Weights `[features, 1]` (float32, a leaf).
    pub w: Tensor,
    /// Bias `[1]`.
    pub b: Tensor,
}

impl SparseLogReg {
    /// Zero weights.
    pub fn new(features: usize) -> Result<SparseLogReg> {
        Ok(SparseLogReg {
            w: Tensor::zeros(&[features, 1], DType::F32)?.requires_grad_(true)?,
            b: Tensor::zeros(&[1], DType::F32)?.requires_grad_(true)?,
        })
    }

    /// Scores `[batch, 1]` of a csr batch.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.dot(&self.w)?.add(&self.b)
    }
}

/// The documents `rows` as a csr batch `[len, features]` and their labels `[len, 1]`.
pub fn batch(data: &BagOfWords, rows: &[usize]) -> Result<(Tensor, Tensor)> {
    let mut indptr = vec![0i64];
    let (mut indices, mut values, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for &r in rows {
        let (ids, counts) = &data.docs[r];
        indices.extend_from_slice(ids);
        values.extend_from_slice(counts);
        indptr.push(indices.len() as i64);
        labels.push(data.labels[r]);
    }
    let n = values.len();
    let m = CsrMatrix::try_new(
        [rows.len(), data.features],
        indptr,
        indices,
        Tensor::from_vec(values, &[n])?,
    )?;
    Ok((
        Tensor::from_sparse_parts(SparseParts::Csr(m))?,
        Tensor::from_vec(labels, &[rows.len(), 1])?,
    ))
}

/// Accuracy of the sign of the scores on `rows`.
fn accuracy(model: &SparseLogReg, data: &BagOfWords, rows: &[usize]) -> Result<f64> {
    let _g = autograd::no_grad();
    let (x, y) = batch(data, rows)?;
    let z = model.forward(&x)?.to_vec::<f32>()?;
    let y = y.to_vec::<f32>()?;
    let right = z
        .iter()
        .zip(&y)
        .filter(|(z, y)| (**z >= 0.0) == (**y > 0.0))
        .count();
    Ok(right as f64 / rows.len().max(1) as f64)
}

/// Trains on a fresh data set; returns the curves.
pub fn train(cfg: &LogRegConfig) -> Result<Report> {
    let data = bag_of_words(cfg.docs, cfg.features, cfg.words, cfg.seed);
    let (train_rows, test_rows) = split(cfg.docs, cfg.docs / 5, cfg.seed + 1);
    let model = SparseLogReg::new(cfg.features)?;
    let mut opt = Adam::new(vec![model.w.clone(), model.b.clone()], cfg.lr)?;
    let steps_per_epoch = train_rows.len().div_ceil(cfg.batch);
    let total = steps_per_epoch * cfg.epochs;
    let pb = progress::bar("logreg", total, cfg.progress);
    let positives = test_rows.iter().filter(|&&r| data.labels[r] > 0.0).count();
    let chance = positives.max(test_rows.len() - positives) as f64 / test_rows.len() as f64;
    let mut report = Report {
        name: format!("sparse logistic regression ({} features)", cfg.features),
        loss: Vec::with_capacity(total),
        accuracy: vec![(0, accuracy(&model, &data, &test_rows)?)],
        chance,
    };
    let mut step = 0;
    for _ in 0..cfg.epochs {
        for chunk in train_rows.chunks(cfg.batch) {
            let (x, y) = batch(&data, chunk)?;
            opt.zero_grad()?;
            let l = loss::logistic(&model.forward(&x)?, &y)?;
            autograd::backward(&l, None, false)?;
            opt.step()?;
            step += 1;
            report.loss.push(l.item::<f32>()? as f64);
            if step % 20 == 0 || step == total {
                report
                    .accuracy
                    .push((step, accuracy(&model, &data, &test_rows)?));
            }
            pb.set_message(format!("loss {:.4}", report.last_loss(20)));
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    Ok(report)
}
