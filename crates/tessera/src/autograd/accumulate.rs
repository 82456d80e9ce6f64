//! Summing two gradients of one tensor (docs/design.md G5): dense + dense is dense,
//! row_sparse + row_sparse stays row_sparse (the union of rows), anything else is dense.

use crate::error::Result;
use crate::sparse::kernels::add_sub_same;
use crate::stype::StorageType;
use crate::tensor::arith::BinaryOp;
use crate::tensor::Tensor;

/// `a + b` for two gradients of one tensor (same shape and dtype).
pub(crate) fn accumulate(a: Tensor, b: Tensor) -> Result<Tensor> {
    match (a.stype(), b.stype()) {
        (StorageType::Default, StorageType::Default) => a.binary_dense(&b, BinaryOp::Add),
        (x, y) if x == y => add_sub_same(&a, &b, BinaryOp::Add),
        _ => a.densified()?.binary_dense(&b.densified()?, BinaryOp::Add),
    }
}
