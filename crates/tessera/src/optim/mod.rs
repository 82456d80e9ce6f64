//! Optimisers (docs/design.md G6): [`Sgd`] (with momentum) and [`Adam`], updating leaf
//! parameters in place from their `.grad`. A row_sparse gradient (from `embedding` or
//! `dot(csr, W)`) gets MXNet's lazy update: only the stored rows of the parameter and of the
//! optimiser state change.
//!
//! ```
//! use tessera::optim::{Optimizer, Sgd};
//! use tessera::{autograd, DType, Tensor};
//! let w = Tensor::from_slice(&[1.0f32, -2.0], &[2]).unwrap().requires_grad_(true).unwrap();
//! let mut opt = Sgd::new(vec![w.clone()], 0.1, 0.0).unwrap();
//! let loss = w.mul(&w).unwrap().sum(None, false).unwrap(); // gradient 2w
//! autograd::backward(&loss, None, false).unwrap();
//! opt.step().unwrap();
//! assert_eq!(w.to_vec::<f32>().unwrap(), vec![0.8, -1.6]);
//! opt.zero_grad().unwrap();
//! assert!(w.grad().is_none());
//! ```

mod adam;
mod rows;
mod sgd;

pub use adam::Adam;
pub use sgd::Sgd;

use crate::error::{ErrorKind, Result, TesseraError};
use crate::tensor::Tensor;

/// An optimiser over a fixed list of parameters.
pub trait Optimizer {
    /// One update of every parameter that has a gradient (parameters without one are left
    /// alone), under `no_grad`.
    fn step(&mut self) -> Result<()>;
    /// Clears every parameter's gradient.
    fn zero_grad(&self) -> Result<()>;
    /// The parameters.
    fn params(&self) -> &[Tensor];
    /// The state to checkpoint, as named tensors (the step count is a one-element `int64`).
    fn state(&self) -> Result<Vec<(String, Tensor)>>;
    /// Restores the state written by [`Optimizer::state`] (names, shapes and dtypes must
    /// match; nothing changes on error).
    fn load_state(&mut self, state: &[(String, Tensor)]) -> Result<()>;
}

/// A boxed optimiser is one: code generic over [`Optimizer`] takes an optimiser chosen at run
/// time (`Box<dyn Optimizer + Send + Sync>`, what the Python bindings hold).
impl<O: Optimizer + ?Sized> Optimizer for Box<O> {
    fn step(&mut self) -> Result<()> {
        (**self).step()
    }
    fn zero_grad(&self) -> Result<()> {
        (**self).zero_grad()
    }
    fn params(&self) -> &[Tensor] {
        (**self).params()
    }
    fn state(&self) -> Result<Vec<(String, Tensor)>> {
        (**self).state()
    }
    fn load_state(&mut self, state: &[(String, Tensor)]) -> Result<()> {
        (**self).load_state(state)
    }
}

/// Checks that every parameter is a float leaf that requires a gradient and owns its
/// storage as one dense block (row-major, or another order such as the result of an op on a
/// transposed tensor, docs/design.md P6; not a view into a larger tensor).
pub(crate) fn check_params(params: &[Tensor]) -> Result<()> {
    for (i, p) in params.iter().enumerate() {
        if !p.requires_grad() || !p.is_leaf() {
            return Err(ErrorKind::InvalidArgument(format!(
                "optimiser parameter {i} must be a leaf that requires a gradient"
            ))
            .into());
        }
        if !matches!(p.dtype(), crate::DType::F32 | crate::DType::F64) {
            return Err(ErrorKind::InvalidArgument(format!(
                "optimiser parameter {i} has dtype {}; optimisers update float32 and float64",
                p.dtype()
            ))
            .into());
        }
        if !(p.is_contiguous() || p.layout().is_dense_block())
            || p.layout().offset() != 0
            || p.storage()?.len() != p.numel()
        {
            return Err(ErrorKind::InvalidArgument(format!(
                "optimiser parameter {i} must own its storage as one dense block (not a view into part of it; \
                 `contiguous()` makes one)"
            )).into());
        }
    }
    Ok(())
}

/// Zeros like each parameter (optimiser state).
pub(crate) fn zeros_like(params: &[Tensor]) -> Result<Vec<Tensor>> {
    params
        .iter()
        .map(|p| Tensor::zeros(p.shape(), p.dtype()))
        .collect()
}

pub(crate) fn clear_grads(params: &[Tensor]) -> Result<()> {
    params.iter().try_for_each(|p| p.set_grad(None))
}

/// Finds `name` in `state` and checks it has `like`'s shape and dtype.
pub(crate) fn take<'a>(
    state: &'a [(String, Tensor)],
    name: &str,
    like: &Tensor,
) -> Result<&'a Tensor> {
    let t = state
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t)
        .ok_or_else(|| {
            TesseraError::from(ErrorKind::InvalidArgument(format!(
                "optimiser state has no {name:?}"
            )))
        })?;
    if t.shape() != like.shape() || t.dtype() != like.dtype() {
        return Err(ErrorKind::InvalidArgument(format!(
            "optimiser state {name:?} is {:?} {}, expected {:?} {}",
            t.shape(),
            t.dtype(),
            like.shape(),
            like.dtype()
        ))
        .into());
    }
    Ok(t)
}

/// The step counter as a one-element `int64` tensor, and back.
pub(crate) fn step_tensor(step: u64) -> Result<Tensor> {
    Tensor::from_vec(vec![step as i64], &[1])
}

pub(crate) fn read_step(state: &[(String, Tensor)], name: &str) -> Result<u64> {
    let like = step_tensor(0)?;
    let t = take(state, name, &like)?;
    u64::try_from(t.item::<i64>()?).map_err(|_| {
        TesseraError::from(ErrorKind::InvalidArgument(format!(
            "optimiser state {name:?} is negative"
        )))
    })
}
