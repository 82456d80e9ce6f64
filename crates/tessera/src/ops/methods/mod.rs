//! The typed `Tensor` methods that compute: each runs its op's registry definition through
//! [`OpDef::call`](super::def::OpDef::call), the one storage-type dispatch and the one
//! autograd recording point (`dispatch.rs`, docs/design.md G1), so the typed Rust API,
//! `invoke` and Python behave alike and are all differentiable. The tensor layer below holds
//! only their dense kernels (`*_dense`).
//!
//! Here: `astype`, `sum`, and the helpers; `arith.rs` (elementwise, reductions, products);
//! `views.rs` (views, copies, repeat); `products.rs` (`matrix_transpose`, `vecdot`, `tensordot`
//! on `matmul`).

mod advanced;
mod arith;
mod arrayfns;
mod complex_parts;
mod factorizations;
mod fft;
mod linalg;
mod manipulation;
mod products;
mod statistics;
mod ufunc;
mod views;

pub use linalg::MatrixNorm;

use std::slice;

use super::defs::{astype_def, sum_def, AstypeParams, ReduceParams};
use super::dispatch::plain_dense;
use super::params::OpParams;
use super::registry::registry;
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// The one output of a one-output op.
fn single(mut outputs: Vec<Tensor>) -> Result<Tensor> {
    if outputs.is_empty() {
        return Err(ErrorKind::InvalidArgument("op returned no output".into()).into());
    }
    Ok(outputs.swap_remove(0))
}

/// Runs the registered one-output op `name` with typed parameters.
fn call1<P: OpParams>(name: &str, p: &P, inputs: &[Tensor]) -> Result<Tensor> {
    single(registry().def::<P>(name)?.call(p, inputs)?)
}

impl Tensor {
    /// A new tensor (order: design.md P6) with the elements converted to `dtype` (NumPy `astype`:
    /// always a copy; float to integer truncates toward zero and saturates, NaN becomes 0,
    /// non-zero becomes `true`). The source is read under one read lock released on return.
    ///
    /// A csr / row_sparse tensor keeps its storage type and pattern (values converted).
    ///
    /// ```
    /// use tessera::{DType, StorageType, Tensor};
    /// let t = Tensor::from_vec(vec![1.9f64, -2.5, 0.0, 300.0], &[2, 2]).unwrap();
    /// assert_eq!(t.astype(DType::U8).unwrap().to_vec::<u8>().unwrap(), vec![1, 0, 0, 255]);
    /// let c = t.cast_storage(StorageType::Csr).unwrap().astype(DType::I32).unwrap();
    /// assert_eq!((c.stype(), c.to_vec::<i32>().unwrap()), (StorageType::Csr, vec![1, -2, 0, 300]));
    /// ```
    pub fn astype(&self, dtype: DType) -> Result<Tensor> {
        if plain_dense(&[self]) {
            return self.astype_dense(dtype);
        }
        single(astype_def().call(&AstypeParams { dtype }, slice::from_ref(self))?)
    }

    /// Sum over `axes` (all when `None`): bool and signed integers sum to `int64`, unsigned
    /// integers to `uint64`, floats keep their dtype (`f16`/`bf16` accumulate in `f32`),
    /// pairwise summation as NumPy; see `tensor/reduce.rs` for the rules.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::from_slice(&[1i8, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    /// let s = t.sum(Some(&[-1]), false).unwrap();
    /// assert_eq!((s.dtype(), s.to_vec::<i64>().unwrap()), (DType::I64, vec![6, 15]));
    /// let u = Tensor::from_slice(&[1u8, 2, 3], &[3]).unwrap().sum(None, false).unwrap();
    /// assert_eq!((u.dtype(), u.to_vec::<u64>().unwrap()), (DType::U64, vec![6]));
    /// assert_eq!(t.sum(None, true).unwrap().shape(), &[1, 1]);
    /// ```
    ///
    /// A csr / row_sparse tensor sums its stored values only (the result is dense).
    pub fn sum(&self, axes: Option<&[isize]>, keepdims: bool) -> Result<Tensor> {
        let p = ReduceParams {
            axis: axes.map(<[isize]>::to_vec),
            keepdims,
        };
        single(sum_def().call(&p, slice::from_ref(self))?)
    }
}
