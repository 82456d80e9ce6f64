//! Shape descriptors: rank, dims, signed strides and derived facts, interned in a shared cache
//! (seed 004, docs/design.md C1).
//!
//! A [`Shape`] is a handle to an interned descriptor: reference counted, or a plain reference
//! to a descriptor its cache pinned for the rest of the process (docs/design.md C1). Two
//! handles for the same geometry point to the same descriptor, so equality and hashing are by
//! identity.

mod cache;
mod geometry;
mod handle;
mod trie;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use cache::{
    ShapeCache, DEFAULT_RETAIN_PER_STRIPE, FRONT_SLOTS, GLOBAL_PIN_BUDGET, NUM_STRIPES,
    PIN_MAX_RANK,
};
pub(crate) use geometry::{
    checked_byte_size, checked_numel, contiguous_strides, hash_key, is_contiguous, DimVec,
    DIM_INLINE,
};

use crate::error::Result;
use cache::{DenseOrder, Descriptor};
use handle::Handle;

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
pub struct Shape(pub(crate) Handle);

impl Shape {
    /// The handle for a descriptor the cache found or made.
    pub(crate) fn from_arc(d: Arc<Descriptor>) -> Shape {
        match d.pinned_ref() {
            Some(pinned) => Shape(Handle::pinned(pinned)),
            None => Shape(Handle::counted(d)),
        }
    }

    /// The handle for a descriptor its cache pinned.
    #[inline]
    pub(crate) fn from_pinned(d: &'static Descriptor) -> Shape {
        Shape(Handle::pinned(d))
    }

    /// The descriptor.
    #[inline(always)]
    fn d(&self) -> &Descriptor {
        self.0.get()
    }

    /// Whether this handle holds a pinned descriptor (no reference count).
    pub fn is_pinned(&self) -> bool {
        !self.0.is_counted()
    }

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
        self.d().tail().map(Some)
    }

    /// This geometry with its dims and strides reversed (NumPy's `.T`), from a memo on the
    /// descriptor when it is pinned.
    ///
    /// ```
    /// use tessera::shape::Shape;
    /// let s = Shape::new(&[2, 3, 4], &[12, 4, 1]).unwrap();
    /// assert_eq!(s.reversed().unwrap(), Shape::new(&[4, 3, 2], &[1, 4, 12]).unwrap());
    /// ```
    pub fn reversed(&self) -> Result<Shape> {
        self.d().reversed()
    }

    /// This geometry with its last two dims swapped (`.mT`; the same geometry below rank 2),
    /// from a memo on the descriptor when it is pinned.
    ///
    /// ```
    /// use tessera::shape::Shape;
    /// let s = Shape::new(&[2, 3, 4], &[12, 4, 1]).unwrap();
    /// assert_eq!(s.swapped_last().unwrap(), Shape::new(&[2, 4, 3], &[12, 1, 4]).unwrap());
    /// ```
    pub fn swapped_last(&self) -> Result<Shape> {
        if self.rank() < 2 {
            return Ok(self.clone());
        }
        self.d().swapped_last()
    }

    /// The descriptor a fresh output takes to follow this geometry's memory order (P6): when
    /// it covers a dense block with positive strides in an order other than row-major, the
    /// same strides with size-1 dims given their row-major ones; `None` otherwise (row-major
    /// already, strided, broadcast, flipped or empty). Computed once per descriptor.
    pub(crate) fn dense_order(&self) -> Result<Option<Shape>> {
        let memo = match self.d().dense.get() {
            Some(m) => m,
            None => {
                let m = self.find_dense_order()?;
                self.d().dense.get_or_init(|| m)
            }
        };
        Ok(match memo {
            DenseOrder::None => None,
            DenseOrder::Same => Some(self.clone()),
            DenseOrder::Other(s) => Some(s.clone()),
        })
    }

    fn find_dense_order(&self) -> Result<DenseOrder> {
        if self.numel() == 0 || self.is_c_contiguous() || !self.is_dense_block() {
            return Ok(DenseOrder::None);
        }
        let row_major = contiguous_strides(self.dims())?;
        let strides: DimVec<isize> = self
            .dims()
            .iter()
            .zip(self.strides())
            .zip(&row_major)
            .map(|((&d, &s), &c)| if d == 1 { c } else { s })
            .collect();
        if strides[..] == *self.strides() {
            return Ok(DenseOrder::Same);
        }
        Ok(DenseOrder::Other(
            self.d().intern_beside(self.dims(), &strides)?,
        ))
    }

    /// Whether the elements cover `numel` consecutive positions from the lowest one with
    /// positive strides, in some dim order (row-major, a transpose, any permutation; size-1
    /// dims ignored). Empty shapes are not.
    pub(crate) fn is_dense_block(&self) -> bool {
        if self.numel() == 0 {
            return false;
        }
        let mut axes: DimVec<(isize, usize)> = self
            .dims()
            .iter()
            .zip(self.strides())
            .filter(|&(&d, _)| d > 1)
            .map(|(&d, &s)| (s, d))
            .collect();
        axes.sort_unstable();
        let mut expected: isize = 1;
        for &(s, d) in &axes {
            if s != expected {
                return false;
            }
            // A dense block of `numel` elements: these products stay at most `numel`.
            expected = expected.wrapping_mul(d as isize);
        }
        true
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.d().geom.dims.len()
    }

    /// Size of each dimension.
    pub fn dims(&self) -> &[usize] {
        &self.d().geom.dims
    }

    /// Stride of each dimension, in elements (may be negative or zero).
    pub fn strides(&self) -> &[isize] {
        &self.d().geom.strides
    }

    /// Number of elements (product of dims; 1 for rank 0).
    pub fn numel(&self) -> usize {
        self.d().geom.numel
    }

    /// Row-major contiguous, ignoring size-1 dims; empty shapes are contiguous (V6).
    pub fn is_c_contiguous(&self) -> bool {
        self.d().geom.c_contiguous
    }

    /// The strides are exactly the row-major ones of the dims (stricter than
    /// [`Shape::is_c_contiguous`], which ignores size-1 dims), kept with the descriptor.
    pub(crate) fn is_row_major(&self) -> bool {
        self.d().geom.row_major
    }

    /// Column-major contiguous, ignoring size-1 dims; empty shapes are contiguous (V6).
    pub fn is_f_contiguous(&self) -> bool {
        self.d().geom.f_contiguous
    }

    /// Lowest and highest element offset reachable from the base, relative to it
    /// (both 0 for an empty shape, which reaches nothing).
    #[inline]
    pub fn offset_span(&self) -> (isize, isize) {
        self.d().geom.span
    }

    /// Bytes needed to hold this many elements of `itemsize` bytes, checked against
    /// `isize::MAX` the way NumPy checks it.
    pub fn checked_bytes(&self, itemsize: usize) -> Result<usize> {
        checked_byte_size(self.dims(), itemsize)
    }
}

impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.d(), other.d())
    }
}

impl Eq for Shape {}

impl Hash for Shape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.d(), state);
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

#[cfg(test)]
mod dense_order_tests {
    use super::*;

    #[test]
    fn dense_order_is_kept_once_without_a_reference_cycle() {
        let cache = ShapeCache::with_retention(0);
        // A transpose is its own dense order: the descriptor keeps no handle to itself.
        let t = cache.intern(&[3, 4], &[1, 3]).unwrap();
        assert_eq!(t.dense_order().unwrap(), Some(t.clone()));
        // A size-1 dim with another stride: a second descriptor, kept with its head.
        let u = cache.intern(&[3, 1, 4], &[1, 7, 3]).unwrap();
        let d = u.dense_order().unwrap().unwrap();
        assert_eq!((d.dims(), d.strides()), (&[3, 1, 4][..], &[1, 4, 3][..]));
        assert_eq!(u.dense_order().unwrap(), Some(d.clone()));
        assert_eq!(cache.len(), 3);
        drop(d);
        assert_eq!(cache.len(), 3, "the head keeps its dense order");
        drop((t, u));
        assert_eq!(cache.len(), 0, "nothing leaks");
        // Row-major, strided, flipped and empty shapes have none.
        for (dims, strides) in [
            (vec![3, 4], vec![4, 1]),
            (vec![3], vec![2]),
            (vec![3], vec![-1]),
            (vec![0, 2], vec![1, 0]),
        ] {
            let s = cache.intern(&dims, &strides).unwrap();
            assert!(s.dense_order().unwrap().is_none(), "{dims:?} {strides:?}");
        }
    }
}
