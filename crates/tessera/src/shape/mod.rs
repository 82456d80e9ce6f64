//! Shape descriptors: rank, dims, signed strides and derived facts, interned in a shared cache
//! (seed 004, docs/design.md C1).
//!
//! A [`Shape`] is a reference-counted handle to an interned descriptor. Two handles for the
//! same geometry point to the same descriptor, so equality and hashing are by identity.

mod cache;
mod geometry;
mod trie;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use cache::{ShapeCache, DEFAULT_RETAIN_PER_STRIPE, FRONT_SLOTS, NUM_STRIPES};
pub(crate) use geometry::{
    checked_byte_size, checked_numel, contiguous_strides, hash_key, is_contiguous, DimVec,
    DIM_INLINE,
};

use crate::error::Result;
use cache::Descriptor;

/// A handle to an interned shape descriptor.
///
/// ```
/// use tessera::shape::Shape;
/// let s = Shape::contiguous(&[2, 3, 4]).unwrap();
/// assert_eq!(s.dims(), &[2, 3, 4]);
/// assert_eq!(s.strides(), &[12, 4, 1]);
/// assert_eq!(s.numel(), 24);
/// assert!(s.is_c_contiguous());
/// assert_eq!(s, Shape::new(&[2, 3, 4], &[12, 4, 1]).unwrap());
/// ```
#[derive(Clone)]
pub struct Shape(Arc<Descriptor>);

impl Shape {
    /// The descriptor for `dims` with `strides` (in elements) from the global cache.
    #[inline]
    pub fn new(dims: &[usize], strides: &[isize]) -> Result<Shape> {
        ShapeCache::global().intern(dims, strides)
    }

    /// [`Shape::new`] with the key hash already computed (`hash_key(dims, strides)`).
    #[inline]
    pub(crate) fn new_hashed(hash: u64, dims: &[usize], strides: &[isize]) -> Result<Shape> {
        ShapeCache::global().intern_hashed(hash, dims, strides)
    }

    /// The C-contiguous descriptor for `dims` from the global cache.
    pub fn contiguous(dims: &[usize]) -> Result<Shape> {
        ShapeCache::global().contiguous(dims)
    }

    /// This shape without its first dim: the shape of `t[i]` for any `i` (the descriptor
    /// keeps it, so asking again costs no lookup). `None` for rank 0.
    ///
    /// ```
    /// use tessera::shape::Shape;
    /// let s = Shape::new(&[2, 3, 4], &[1, 8, 2]).unwrap();
    /// let t = s.tail().unwrap().unwrap();
    /// assert_eq!((t.dims(), t.strides()), (&[3, 4][..], &[8, 2][..]));
    /// assert_eq!(t, &Shape::new(&[3, 4], &[8, 2]).unwrap());
    /// assert!(Shape::new(&[], &[]).unwrap().tail().unwrap().is_none());
    /// ```
    pub fn tail(&self) -> Result<Option<&Shape>> {
        if self.rank() == 0 {
            return Ok(None);
        }
        self.0.tail().map(Some)
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.0.geom.dims.len()
    }

    /// Size of each dimension.
    pub fn dims(&self) -> &[usize] {
        &self.0.geom.dims
    }

    /// Stride of each dimension, in elements (may be negative or zero).
    pub fn strides(&self) -> &[isize] {
        &self.0.geom.strides
    }

    /// Number of elements (product of dims; 1 for rank 0).
    pub fn numel(&self) -> usize {
        self.0.geom.numel
    }

    /// Row-major contiguous, ignoring size-1 dims; empty shapes are contiguous (V6).
    pub fn is_c_contiguous(&self) -> bool {
        self.0.geom.c_contiguous
    }

    /// The strides are exactly the row-major ones of the dims (stricter than
    /// [`Shape::is_c_contiguous`], which ignores size-1 dims), kept with the descriptor.
    pub(crate) fn is_row_major(&self) -> bool {
        self.0.geom.row_major
    }

    /// Column-major contiguous, ignoring size-1 dims; empty shapes are contiguous (V6).
    pub fn is_f_contiguous(&self) -> bool {
        self.0.geom.f_contiguous
    }

    /// Lowest and highest element offset reachable from the base, relative to it
    /// (both 0 for an empty shape, which reaches nothing).
    pub fn offset_span(&self) -> (isize, isize) {
        if self.numel() == 0 {
            return (0, 0);
        }
        let (mut lo, mut hi) = (0isize, 0isize);
        for (&d, &s) in self.dims().iter().zip(self.strides()) {
            // Cannot overflow: the descriptor was checked to have an addressable span.
            let reach = (d as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi)
    }

    /// Bytes needed to hold this many elements of `itemsize` bytes, checked against
    /// `isize::MAX` the way NumPy checks it.
    pub fn checked_bytes(&self, itemsize: usize) -> Result<usize> {
        checked_byte_size(self.dims(), itemsize)
    }
}

impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Shape {}

impl Hash for Shape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0), state);
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Shape{{dims: {:?}, strides: {:?}}}",
            self.dims(),
            self.strides()
        )
    }
}
