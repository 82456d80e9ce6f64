//! Adam (Kingma and Ba): `m = β1 m + (1-β1) g`, `v = β2 v + (1-β2) g²`,
//! `p -= lr m̂ / (√v̂ + ε)` with `m̂ = m / (1-β1^t)`, `v̂ = v / (1-β2^t)`.
//!
//! With a row_sparse gradient the update is lazy (MXNet's `lazy_update`, PyTorch's
//! `SparseAdam`): only the stored rows' `m`, `v` and parameters change; the other rows keep
//! their moments instead of decaying them, and do not move. A dense Adam step on the same
//! gradient densified would decay every row's moments and keep moving rows with stale
//! momentum, so the two differ once a row is skipped; both use the global step `t` for bias
//! correction.

use super::{check_params, clear_grads, read_step, rows, step_tensor, take, zeros_like, Optimizer};
use crate::autograd::no_grad;
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// Adam over a list of parameters.
pub struct Adam {
    params: Vec<Tensor>,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    steps: u64,
}

impl Adam {
    /// Adam with learning rate `lr`, the usual `β1 = 0.9`, `β2 = 0.999`, `ε = 1e-8`.
    pub fn new(params: Vec<Tensor>, lr: f64) -> Result<Adam> {
        Adam::with_betas(params, lr, 0.9, 0.999, 1e-8)
    }

    /// Adam with explicit `β1`, `β2` in `[0, 1)` and `ε > 0`.
    pub fn with_betas(
        params: Vec<Tensor>,
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
    ) -> Result<Adam> {
        check_params(&params)?;
        let ok = lr.is_finite()
            && lr > 0.0
            && (0.0..1.0).contains(&beta1)
            && (0.0..1.0).contains(&beta2)
            && eps.is_finite()
            && eps > 0.0;
        if !ok {
            return Err(ErrorKind::InvalidArgument(format!(
                "Adam: need lr > 0, betas in [0, 1), eps > 0; got lr {lr}, betas ({beta1}, {beta2}), eps {eps}"
            )).into());
        }
        Ok(Adam {
            m: zeros_like(&params)?,
            v: zeros_like(&params)?,
            params,
            lr,
            beta1,
            beta2,
            eps,
            steps: 0,
        })
    }
}

impl Optimizer for Adam {
    fn step(&mut self) -> Result<()> {
        let _g = no_grad();
        let t = (self.steps + 1) as i32;
        let (lr, b1, b2, eps) = (self.lr, self.beta1, self.beta2, self.eps);
        let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
        // PyTorch's update, `p -= lr * (m / c1) / (sqrt(v / c2) + eps)`, with the bias
        // corrections taken out of the loop: one square root and one division an element.
        let (step, inv_sqrt_c2) = (lr / c1, 1.0 / c2.sqrt());
        for (i, p) in self.params.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            rows::update(p, &g, [&self.m[i], &self.v[i]], move |p, g, [m, v]| {
                *m = b1 * *m + (1.0 - b1) * g;
                *v = b2 * *v + (1.0 - b2) * g * g;
                *p -= step * *m / (v.sqrt() * inv_sqrt_c2 + eps);
            })?;
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
        let mut out = vec![("adam.step".to_string(), step_tensor(self.steps)?)];
        for (i, (m, v)) in self.m.iter().zip(&self.v).enumerate() {
            out.push((format!("adam.m.{i}"), m.copy()?));
            out.push((format!("adam.v.{i}"), v.copy()?));
        }
        Ok(out)
    }

    fn load_state(&mut self, state: &[(String, Tensor)]) -> Result<()> {
        let steps = read_step(state, "adam.step")?;
        let mut pairs = Vec::new();
        for (i, (m, v)) in self.m.iter().zip(&self.v).enumerate() {
            pairs.push((m, take(state, &format!("adam.m.{i}"), m)?));
            pairs.push((v, take(state, &format!("adam.v.{i}"), v)?));
        }
        let _g = no_grad();
        for (dst, src) in pairs {
            dst.assign(src)?;
        }
        self.steps = steps;
        Ok(())
    }
}
