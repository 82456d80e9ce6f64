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
pub use transform::{normalize_axes, normalize_axis, DimList};

use crate::error::{ErrorKind, Result, ShapeFacts, TesseraError};
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

    /// A layout with explicit dims, strides and offset, checked to stay inside a storage of
    /// `storage_len` elements (every reachable element, none for an empty shape).
    #[inline]
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
    #[inline]
    pub fn check_bounds(&self, storage_len: usize) -> Result<()> {
        if self.numel() == 0 {
            return Ok(());
        }
        let (lo, hi) = self.shape.offset_span();
        let first = self.offset as i128 + lo as i128;
        let last = self.offset as i128 + hi as i128;
        if first < 0 || last >= storage_len as i128 {
            return Err(self.out_of_bounds(first, last, storage_len));
        }
        Ok(())
    }

    #[cold]
    fn out_of_bounds(&self, first: i128, last: i128, storage_len: usize) -> TesseraError {
        ErrorKind::OutOfBounds(format!(
            "layout dims {:?} strides {:?} offset {} reaches elements {first}..={last} of a storage of {storage_len}",
            self.dims(),
            self.strides(),
            self.offset
        ))
        .into()
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

    /// The layout a fresh output of an elementwise op takes to follow this input's memory
    /// order (NumPy's `order='K'`, PyTorch's preserved strides; docs/design.md P6): when this
    /// layout covers a dense block with positive strides in an order other than row-major (a
    /// transpose, any permutation of dims, at any offset), the same strides at offset 0, with
    /// size-1 dims given their row-major strides; `None` otherwise (row-major already,
    /// strided, broadcast, flipped or empty: the output is then row-major).
    pub(crate) fn dense_order(&self) -> Result<Option<Layout>> {
        // A dense block at offset 0 with positive strides spans exactly `0..numel`.
        Ok(self
            .shape
            .dense_order()?
            .map(|shape| Layout { shape, offset: 0 }))
    }

    /// Whether the elements cover `numel` consecutive storage positions with positive
    /// strides, in some dim order (row-major, a transpose, any permutation; size-1 dims
    /// ignored). Empty layouts are not.
    pub(crate) fn is_dense_block(&self) -> bool {
        self.shape.is_dense_block()
    }

    /// Whether `other` (of the same dims) has this layout's strides on every dim longer
    /// than 1: the two walk their storages in the same order.
    pub(crate) fn walks_like(&self, other: &Layout) -> bool {
        self.dims()
            .iter()
            .zip(self.strides().iter().zip(other.strides()))
            .all(|(&d, (&a, &b))| d == 1 || a == b)
    }

    /// True when this is exactly the layout [`Layout::contiguous`] gives for these dims:
    /// offset 0 and C-order strides, size-1 dims included. A fresh output of this shape can
    /// share the descriptor instead of looking it up in the shape cache.
    pub(crate) fn is_canonical(&self) -> bool {
        self.offset == 0 && self.shape.is_row_major()
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
            (x, y) => Err(ErrorKind::ShapeMismatch(ShapeFacts::Broadcast {
                lhs: a.to_vec(),
                rhs: b.to_vec(),
                dim: i,
                sizes: (x, y),
            })
            .into()),
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
            ErrorKind::ShapeMismatch(ShapeFacts::BroadcastTo {
                from: src.to_vec(),
                to: dims.to_vec(),
            })
            .into()
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

    #[test]
    fn dense_order_keeps_a_permuted_dense_block_and_refuses_the_rest() {
        // A transpose, a 3-D permutation at an offset, and a size-1 dim (given its
        // row-major stride, 3): the same order at offset 0.
        for (dims, strides, offset, want) in [
            (vec![4, 3], vec![1, 4], 0, vec![1, 4]),
            (vec![2, 3, 4], vec![1, 8, 2], 24, vec![1, 8, 2]),
            (vec![2, 1, 3], vec![1, -7, 2], 5, vec![1, 3, 2]),
        ] {
            let l = strided(&dims, &strides, offset)
                .dense_order()
                .unwrap()
                .unwrap();
            assert_eq!(
                (l.dims(), l.strides(), l.offset()),
                (&dims[..], &want[..], 0)
            );
        }
        // Row-major already (at an offset, or with odd size-1 strides), gaps, broadcast,
        // flipped, overlapping, empty: no.
        for (dims, strides) in [
            (vec![4, 3], vec![3, 1]),
            (vec![2, 1, 3], vec![3, 5, 1]),
            (vec![4, 3], vec![1, 8]),
            (vec![4, 3], vec![0, 1]),
            (vec![4, 3], vec![-3, 1]),
            (vec![4, 3], vec![1, 2]),
            (vec![0, 3], vec![1, 0]),
        ] {
            assert!(
                strided(&dims, &strides, 40)
                    .dense_order()
                    .unwrap()
                    .is_none(),
                "{dims:?} {strides:?}"
            );
        }
    }
}
