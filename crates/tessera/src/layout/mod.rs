//! Layout: where a tensor's elements sit in its storage. Metadata only (docs/design.md §1).
//!
//! Every view operation is a pure function `Layout -> Result<Layout>`: indexing
//! ([`crate::index::apply`]), [`Layout::expand`], [`Layout::reshape_view`], [`Layout::permute`],
//! [`Layout::flip`], [`Layout::squeeze`], [`Layout::unsqueeze`], [`Layout::narrow`],
//! [`Layout::as_strided`] and [`Layout::broadcast_to`]. Whether a layout can be written
//! (no two indices on one element, V7) is [`Layout::check_writable`].

pub(crate) mod overlap;
mod reshape;
mod transform;

pub use reshape::infer_shape;
pub use transform::{normalize_axes, normalize_axis};

use crate::error::{Result, ShapeFacts, TesseraError};
use crate::shape::{contiguous_strides, Shape};

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

    /// A layout with explicit dims, strides and offset, checked to stay inside a storage of
    /// `storage_len` elements (every reachable element, none for an empty shape).
    pub fn as_strided(
        dims: &[usize],
        strides: &[isize],
        offset: usize,
        storage_len: usize,
    ) -> Result<Layout> {
        let layout = Layout {
            shape: Shape::new(dims, strides)?,
            offset,
        };
        layout.check_bounds(storage_len)?;
        Ok(layout)
    }

    /// Errors unless every reachable element lies in `0..storage_len`.
    pub fn check_bounds(&self, storage_len: usize) -> Result<()> {
        if self.numel() == 0 {
            return Ok(());
        }
        let (lo, hi) = self.shape.offset_span();
        let first = self.offset as i128 + lo as i128;
        let last = self.offset as i128 + hi as i128;
        if first < 0 || last >= storage_len as i128 {
            return Err(TesseraError::OutOfBounds(format!(
                "layout dims {:?} strides {:?} offset {} reaches elements {first}..={last} of a storage of {storage_len}",
                self.dims(),
                self.strides(),
                self.offset
            )));
        }
        Ok(())
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

    /// True when this is exactly the layout [`Layout::contiguous`] gives for these dims:
    /// offset 0 and C-order strides, size-1 dims included. A fresh output of this shape can
    /// share the descriptor instead of looking it up in the shape cache.
    pub(crate) fn is_canonical(&self) -> bool {
        self.offset == 0
            && contiguous_strides(self.dims()).is_ok_and(|c| c.as_slice() == self.strides())
    }
}

/// The NumPy broadcast of two shapes: align on the right; each pair of dims must be equal or
/// one of them 1.
///
/// ```
/// use tessera::layout::broadcast_shapes;
/// assert_eq!(broadcast_shapes(&[3, 1, 5], &[4, 1]).unwrap(), vec![3, 4, 5]);
/// assert!(broadcast_shapes(&[2, 3], &[4]).is_err());
/// ```
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i + s.len() >= rank {
            s[i + s.len() - rank]
        } else {
            1
        }
    };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            (x, y) => Err(TesseraError::ShapeMismatch(ShapeFacts::Broadcast {
                lhs: a.to_vec(),
                rhs: b.to_vec(),
                dim: i,
                sizes: (x, y),
            })),
        })
        .collect()
}

impl Layout {
    /// This layout broadcast to `dims` (NumPy `broadcast_to`): new dims on the left and
    /// size-1 dims that grow get stride 0. Errors if the shapes are incompatible.
    pub fn broadcast_to(&self, dims: &[usize]) -> Result<Layout> {
        let (src, rank) = (self.dims(), dims.len());
        if src == dims {
            // The common case of same-shape operands: no new descriptor to intern.
            return Ok(self.clone());
        }
        let err = || {
            TesseraError::ShapeMismatch(ShapeFacts::BroadcastTo {
                from: src.to_vec(),
                to: dims.to_vec(),
            })
        };
        if src.len() > rank {
            return Err(err());
        }
        let lead = rank - src.len();
        let mut strides = vec![0isize; rank];
        for (i, (&d, &s)) in src.iter().zip(self.strides()).enumerate() {
            match (d, dims[lead + i]) {
                (x, y) if x == y => strides[lead + i] = s,
                (1, _) => strides[lead + i] = 0,
                _ => return Err(err()),
            }
        }
        Ok(Layout {
            shape: Shape::new(dims, &strides)?,
            offset: self.offset,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided(dims: &[usize], strides: &[isize], offset: usize) -> Layout {
        Layout::new(Shape::new(dims, strides).unwrap(), offset)
    }

    #[test]
    fn canonical_is_exactly_what_contiguous_builds() {
        assert!(Layout::contiguous(&[2, 1, 3]).unwrap().is_canonical());
        assert!(Layout::contiguous(&[]).unwrap().is_canonical());
        // Row-major, but a size-1 dim with another stride, or an offset: not canonical.
        assert!(!strided(&[2, 1, 3], &[3, 7, 1], 0).is_canonical());
        assert!(!strided(&[2, 3], &[3, 1], 6).is_canonical());
    }
}
