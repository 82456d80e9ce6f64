//! Losses composed from differentiable ops.

use tessera::{Result, Tensor};

/// Mean logistic loss `log(1 + exp(-y z))` for labels `y` of ±1, in the stable form
/// `max(u, 0) + log(1 + exp(-|u|))` with `u = -y z`. `maximum` (not `relu`) matters at
/// `u = 0`, where a model starting from zero weights sits: `maximum` splits the gradient on
/// the tie (1/2, the true derivative of softplus at 0) where `relu` would give 0, and the
/// `|u|` term's gradient is 0 there, so `relu` would leave the model stuck.
pub fn logistic(z: &Tensor, y: &Tensor) -> Result<Tensor> {
    let u = y.mul(z)?.neg()?;
    let soft = u
        .maximum_scalar(0)?
        .add(&u.abs()?.neg()?.exp()?.add_scalar(1)?.log()?)?;
    soft.mean(None, false)
}

/// Mean softmax cross-entropy of `logits` `[batch, classes]` against `one_hot` targets of the
/// same shape. The row maximum is subtracted as a constant (it cancels in the loss).
pub fn cross_entropy(logits: &Tensor, one_hot: &Tensor) -> Result<Tensor> {
    let m = logits.detach().max(Some(&[1]), true)?;
    let shifted = logits.sub(&m)?;
    let lse = shifted.exp()?.sum(Some(&[1]), true)?.log()?;
    let logp = shifted.sub(&lse)?;
    one_hot
        .mul(&logp)?
        .sum(Some(&[1]), false)?
        .mean(None, false)?
        .neg()
}
