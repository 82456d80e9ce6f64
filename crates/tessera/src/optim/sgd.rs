//! Stochastic gradient descent with momentum (PyTorch's form): `v = μ v + g`, `p -= lr v`
//! (`v` is not kept when `μ = 0`). A row_sparse gradient updates only its rows, and only their
//! velocity decays (MXNet's lazy update).

use super::{check_params, clear_grads, read_step, rows, step_tensor, take, zeros_like, Optimizer};
use crate::autograd::no_grad;
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// SGD with momentum over a list of parameters.
pub struct Sgd {
    params: Vec<Tensor>,
    lr: f64,
    momentum: f64,
    velocity: Vec<Tensor>,
    steps: u64,
}

impl Sgd {
    /// SGD with learning rate `lr` and `momentum` in `[0, 1)`. Errors for a parameter that is
    /// not a float leaf owning its storage as a dense block and requiring a gradient, or a bad rate.
    pub fn new(params: Vec<Tensor>, lr: f64, momentum: f64) -> Result<Sgd> {
        check_params(&params)?;
        if !(lr.is_finite() && lr > 0.0 && (0.0..1.0).contains(&momentum)) {
            return Err(ErrorKind::InvalidArgument(format!(
                "Sgd: lr must be positive and momentum in [0, 1), got lr {lr}, momentum {momentum}"
            ))
            .into());
        }
        let velocity = if momentum > 0.0 {
            zeros_like(&params)?
        } else {
            Vec::new()
        };
        Ok(Sgd {
            params,
            lr,
            momentum,
            velocity,
            steps: 0,
        })
    }
}

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        let _g = no_grad();
        let (lr, mu) = (self.lr, self.momentum);
        for (i, p) in self.params.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            if mu > 0.0 {
                rows::update(p, &g, [&self.velocity[i]], move |p, g, [v]| {
                    *v = mu * *v + g;
                    *p -= lr * *v;
                })?;
            } else {
                rows::update(p, &g, [], move |p, g, _| *p -= lr * g)?;
            }
        }
        self.steps += 1;
        Ok(())
    }

    fn zero_grad(&self) -> Result<()> {
        clear_grads(&self.params)
    }

    fn params(&self) -> &[Tensor] {
        &self.params
    }

    fn state(&self) -> Result<Vec<(String, Tensor)>> {
        let mut out = vec![("sgd.step".to_string(), step_tensor(self.steps)?)];
        for (i, v) in self.velocity.iter().enumerate() {
            out.push((format!("sgd.velocity.{i}"), v.copy()?));
        }
        Ok(out)
    }

    fn load_state(&mut self, state: &[(String, Tensor)]) -> Result<()> {
        let steps = read_step(state, "sgd.step")?;
        let vs: Vec<Tensor> = self
            .velocity
            .iter()
            .enumerate()
            .map(|(i, v)| take(state, &format!("sgd.velocity.{i}"), v).cloned())
            .collect::<Result<_>>()?;
        let _g = no_grad();
        for (dst, src) in self.velocity.iter().zip(&vs) {
            dst.assign(src)?;
        }
        self.steps = steps;
        Ok(())
    }
}
