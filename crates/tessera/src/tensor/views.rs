//! Zero-copy views of a tensor: the same storage seen through another layout.

use super::Tensor;
use crate::error::Result;
use crate::layout::Layout;

impl Tensor {
    /// A view of the same storage through `layout`, which must already be checked against
    /// the storage bounds (all layout functions keep views in bounds).
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor::from_parts(self.storage.clone(), layout)
    }

    /// A view with explicit `dims`, element `strides` (may be negative or zero) and storage
    /// `offset`, like `torch.as_strided`. Errors if any reachable element lies outside the
    /// storage.
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 6, 1, DType::I64).unwrap();
    /// let v = t.as_strided(&[2, 2], &[1, 2], 1).unwrap(); // [[1, 3], [2, 4]]
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 3, 2, 4]);
    /// assert!(t.as_strided(&[4], &[2], 0).is_err()); // would reach element 6
    /// ```
    pub fn as_strided(&self, dims: &[usize], strides: &[isize], offset: usize) -> Result<Tensor> {
        let layout = Layout::as_strided(dims, strides, offset, self.storage.len())?;
        Ok(self.with_layout(layout))
    }
}
