//! Training with Tessera, as a user would: synthetic data sets, two models, training loops
//! with a progress bar, and loss/accuracy curves written as SVG (docs/design.md G7).
//!
//! - [`logreg`]: sparse logistic regression on bag-of-words-like CSR features, with a
//!   row_sparse weight gradient (`dot(csr, W)`) and lazy Adam.
//! - [`mlp`]: a small MLP classifier on a dense data set (interleaved spirals), with
//!   softmax cross-entropy and Adam.
//!
//! Both are written with the public API only (`Tensor` methods, `autograd`, `optim`).

pub mod data;
pub mod logreg;
pub mod loss;
pub mod mlp;
pub mod plot;
pub mod progress;

/// What a training run measured.
#[derive(Clone, Debug)]
pub struct Report {
    /// The model's name.
    pub name: String,
    /// Training loss after each step.
    pub loss: Vec<f64>,
    /// Held-out accuracy, measured every few steps: `(step, accuracy)`.
    pub accuracy: Vec<(usize, f64)>,
    /// Accuracy of always guessing the most frequent class of the held-out set.
    pub chance: f64,
}

impl Report {
    /// Mean loss over the first `n` steps.
    pub fn first_loss(&self, n: usize) -> f64 {
        mean(&self.loss[..n.min(self.loss.len())])
    }

    /// Mean loss over the last `n` steps.
    pub fn last_loss(&self, n: usize) -> f64 {
        mean(&self.loss[self.loss.len().saturating_sub(n)..])
    }

    /// A few lines of the run: the smoothed loss and the held-out accuracy at up to `lines`
    /// of the accuracy checkpoints.
    pub fn table(&self, lines: usize) -> String {
        let every = self.accuracy.len().div_ceil(lines.max(1)).max(1);
        let mut out = String::new();
        for (i, &(step, acc)) in self.accuracy.iter().enumerate() {
            if i % every != 0 && i + 1 != self.accuracy.len() {
                continue;
            }
            let loss = if step == 0 {
                self.first_loss(1)
            } else {
                mean(&self.loss[step.saturating_sub(20)..step])
            };
            out += &format!("  step {step:>5}  loss {loss:.4}  held-out accuracy {acc:.3}\n");
        }
        out
    }

    /// The last measured held-out accuracy.
    pub fn final_accuracy(&self) -> f64 {
        self.accuracy.last().map_or(0.0, |a| a.1)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}
