//! Borrowed views: a window on a tensor's storage that lives no longer than the tensor and
//! costs no reference count and no shape-cache lookup to create (ndarray's `ArrayView`).
//!
//! A [`Tensor`] view owns a reference to its storage and to its interned shape descriptor, so
//! creating and dropping one costs four atomic read-modify-writes. Code that slices in a hot
//! loop (picking rows, windows, strided samples) can use [`Tensor::index_ref`] instead: the
//! geometry is computed on the stack and interned only when the view is turned into a tensor
//! ([`TensorRef::to_tensor`]); reads and in-place writes go through that tensor.

use super::Tensor;
use crate::dtype::{DType, Element, Scalar};
use crate::error::Result;
use crate::index::{resolve, IndexSpec, ViewGeometry};
use crate::layout::Layout;

/// A view borrowed from a dense [`Tensor`]: the base and the view's geometry, not interned.
///
/// ```
/// use tessera::{idx, DType, Tensor};
/// let t = Tensor::arange(0, 12, 1, DType::I64).unwrap().view(&[3, 4]).unwrap();
/// let v = t.index_ref(&idx![1..; 1, ..; -2]).unwrap();
/// assert_eq!(v.shape(), &[2, 2]);
/// assert_eq!(v.strides(), &[4, -2]);
/// assert_eq!(v.to_vec::<i64>().unwrap(), vec![7, 5, 11, 9]);
/// v.fill_(0).unwrap(); // writes reach the base (V7)
/// assert_eq!(t.to_vec::<i64>().unwrap()[4..8], [4, 0, 6, 0]);
/// ```
#[derive(Clone, Debug)]
pub struct TensorRef<'a> {
    base: &'a Tensor,
    geometry: ViewGeometry,
}

impl Tensor {
    /// A borrowed view selected by index specs, with the semantics of [`Tensor::index`]
    /// (V1–V3) but without reference counting or interning; see [`TensorRef`]. Errors like
    /// `index`, and for a sparse tensor.
    pub fn index_ref(&self, specs: &[IndexSpec]) -> Result<TensorRef<'_>> {
        self.dense_storage()?;
        let l = &self.layout;
        Ok(TensorRef {
            base: self,
            geometry: resolve(l.dims(), l.strides(), l.offset(), specs)?,
        })
    }
}

impl<'a> TensorRef<'a> {
    /// Size of each dimension.
    pub fn shape(&self) -> &[usize] {
        self.geometry.dims()
    }

    /// Strides in elements (signed).
    pub fn strides(&self) -> &[isize] {
        self.geometry.strides()
    }

    /// Element offset of the first element in the storage.
    pub fn offset(&self) -> usize {
        self.geometry.offset()
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.base.dtype()
    }

    /// The tensor this view borrows from.
    pub fn base(&self) -> &'a Tensor {
        self.base
    }

    /// A view of this view (the specs apply to this view's dims), still borrowed from the base.
    pub fn index(&self, specs: &[IndexSpec]) -> Result<TensorRef<'a>> {
        let g = &self.geometry;
        Ok(TensorRef {
            base: self.base,
            geometry: resolve(g.dims(), g.strides(), g.offset(), specs)?,
        })
    }

    /// The same view as an owned [`Tensor`] sharing the base's storage (interns the shape);
    /// equal to what [`Tensor::index`] returns for the same specs.
    pub fn to_tensor(&self) -> Result<Tensor> {
        let layout: Layout = self.geometry.to_layout()?;
        self.base.with_layout(layout)
    }

    /// The elements in row-major order; errors if `T` is not the dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.to_tensor()?.to_vec()
    }

    /// Writes `src`, broadcast to this view's shape, into the base ([`Tensor::assign`]).
    pub fn assign(&self, src: &Tensor) -> Result<()> {
        self.base().check_inplace("assign", &[src])?;
        self.to_tensor()?.assign(src)
    }

    /// Writes `value` into every element of this view ([`Tensor::fill_`]).
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        self.base().check_inplace("fill_", &[])?;
        self.to_tensor()?.fill_(value)
    }
}
