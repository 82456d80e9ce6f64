//! Layout: where a tensor's elements sit in its storage. Metadata only (DESIGN §1).

use crate::error::Result;
use crate::shape::Shape;

/// Shape (dims and signed strides, in elements, from the shape cache) plus the element offset
/// of the first element in the storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Shape,
    offset: usize,
}

impl Layout {
    /// A C-contiguous layout starting at offset 0.
    pub fn contiguous(dims: &[usize]) -> Result<Layout> {
        Ok(Layout {
            shape: Shape::contiguous(dims)?,
            offset: 0,
        })
    }

    /// A layout from parts. Bounds against a storage are checked by the caller.
    pub fn new(shape: Shape, offset: usize) -> Layout {
        Layout { shape, offset }
    }

    /// The shape descriptor.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Size of each dimension.
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[isize] {
        self.shape.strides()
    }

    /// Element offset of the first element.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// C-contiguous (V6).
    pub fn is_contiguous(&self) -> bool {
        self.shape.is_c_contiguous()
    }
}
