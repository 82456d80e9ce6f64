//! Zero-copy views of a tensor: the same storage seen through another layout.

use super::Tensor;
use crate::error::{ErrorKind, Result};
use crate::index::{self, IndexSpec};
use crate::layout::{infer_shape, Layout};

impl Tensor {
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
    pub(crate) fn as_strided_dense(
        &self,
        dims: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Tensor> {
        let layout = Layout::as_strided(dims, strides, offset, self.dense_storage()?.len())?;
        self.with_layout(layout)
    }

    /// A zero-copy view of `len` positions from `start` along `axis` (PyTorch `narrow`; NumPy
    /// `t[..., start:start + len, ...]`). `axis` may be negative.
    ///
    /// Errors: `Index` for an axis out of range or `start + len` beyond the dim; a sparse
    /// tensor is an error (views are dense).
    ///
    /// ```
    /// use tessera::{DType, Tensor};
    /// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
    /// let v = t.narrow(-1, 1, 2).unwrap();
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![1, 2, 5, 6, 9, 10]);
    /// assert!(v.shares_storage(&t));
    /// assert!(t.narrow(0, 2, 2).is_err());
    /// ```
    pub(crate) fn narrow_dense(&self, axis: isize, start: usize, len: usize) -> Result<Tensor> {
        self.with_layout(self.layout().narrow(axis, start, len)?)
    }
}

impl Tensor {
    /// A view selected by index specs (CreateView, V1–V3): points drop dims, intervals slice
    /// (negative steps give negative strides), `NewAxis` inserts a dim, `Ellipsis` fills.
    ///
    /// ```
    /// use tessera::{idx, DType, Tensor};
    /// use tessera::index::NewAxis;
    /// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
    /// let v = t.index(&idx![1..; 1, ..; -2, NewAxis]).unwrap();
    /// assert_eq!(v.shape(), &[2, 2, 1]);
    /// assert_eq!(v.to_vec::<i64>().unwrap(), vec![7, 5, 11, 9]);
    /// assert!(v.shares_storage(&t));
    /// ```
    #[inline]
    pub(crate) fn index_dense(&self, specs: &[IndexSpec]) -> Result<Tensor> {
        self.with_layout(index::apply(&self.layout, specs)?)
    }

    /// PyTorch `expand` (E1): a stride-0 view; see [`Layout::expand`].
    pub(crate) fn expand_dense(&self, sizes: &[isize]) -> Result<Tensor> {
        self.with_layout(self.layout.expand(sizes)?)
    }

    /// NumPy `broadcast_to`: a read-only-in-spirit stride-0 view (writes into it error, V7).
    pub(crate) fn broadcast_to_dense(&self, dims: &[usize]) -> Result<Tensor> {
        self.with_layout(self.layout.broadcast_to(dims)?)
    }

    /// Reorders dims (NumPy `transpose(axes)`, PyTorch `permute`).
    pub(crate) fn permute_dense(&self, axes: &[isize]) -> Result<Tensor> {
        self.with_layout(self.layout.permute(axes)?)
    }

    /// Swaps two dims.
    pub(crate) fn transpose_dense(&self, a: isize, b: isize) -> Result<Tensor> {
        self.with_layout(self.layout.transpose(a, b)?)
    }

    /// Reverses all dims (NumPy `.T`).
    pub(crate) fn t_dense(&self) -> Result<Tensor> {
        self.with_layout(self.layout.t())
    }

    /// Removes size-1 dims (all, or the listed ones, which must have size 1).
    pub(crate) fn squeeze_dense(&self, axes: Option<&[isize]>) -> Result<Tensor> {
        self.with_layout(self.layout.squeeze(axes)?)
    }

    /// Inserts a size-1 dim at `axis`.
    pub(crate) fn unsqueeze_dense(&self, axis: isize) -> Result<Tensor> {
        self.with_layout(self.layout.unsqueeze(axis)?)
    }

    /// Reverses the listed dims (all for `None`): a zero-copy view with negative strides.
    pub(crate) fn flip_dense(&self, axes: Option<&[isize]>) -> Result<Tensor> {
        self.with_layout(self.layout.flip(axes)?)
    }

    /// Reshape that never copies (PyTorch `view`, V5): errors when the layout cannot express
    /// the new shape; `-1` infers one dim.
    pub(crate) fn view_dense(&self, shape: &[isize]) -> Result<Tensor> {
        let dims = infer_shape(shape, self.numel())?;
        match self.layout.reshape_view(&dims)? {
            Some(l) => self.with_layout(l),
            None => Err(ErrorKind::InvalidArgument(format!(
                "view {shape:?} of a tensor with dims {:?} and strides {:?} needs a copy; use reshape",
                self.shape(),
                self.strides()
            )).into()),
        }
    }

    /// Reshape (V5): a view when the chunk rule allows it, otherwise a contiguous copy;
    /// `-1` infers one dim. Check [`Tensor::shares_storage`] to know which happened.
    pub(crate) fn reshape_dense(&self, shape: &[isize]) -> Result<Tensor> {
        let dims = infer_shape(shape, self.numel())?;
        match self.layout.reshape_view(&dims)? {
            Some(l) => self.with_layout(l),
            None => self.copy_dense()?.view_dense(shape),
        }
    }
}
