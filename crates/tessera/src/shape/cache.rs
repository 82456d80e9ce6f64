//! The shared, thread-safe shape-descriptor cache (seed 004, DESIGN C1).
//!
//! Lookup path, fastest first:
//! 1. a per-thread, direct-mapped front cache of [`FRONT_SLOTS`] weak references, checked by
//!    hash and then by comparing dims and strides (no lock, no shared write but the handle's
//!    reference count);
//! 2. the trie of one of [`NUM_STRIPES`] stripes, chosen by the key's hash, under that stripe's
//!    mutex. A miss inserts a new descriptor.
//!
//! Reclamation: the trie and the front caches hold only weak references. When the last
//! [`Shape`] handle drops, the descriptor's `Drop` locks its stripe and removes its path (unless
//! a newer descriptor already took the slot), so [`ShapeCache::len`] counts live shapes only.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Weak};

use parking_lot::Mutex;

use super::geometry::{contiguous_strides, hash_key, Geometry};
use super::trie::Node;
use super::Shape;
use crate::error::Result;

/// Number of lock stripes. Each stripe owns a trie and a mutex; a shape's stripe is picked by
/// the high bits of its key hash. 32 stripes keep two threads (or sixteen) on distinct shapes
/// almost never on the same lock, at 32 small mutexes per cache.
pub const NUM_STRIPES: usize = 32;

/// Slots of the per-thread front cache (direct mapped by the low bits of the key hash).
pub const FRONT_SLOTS: usize = 64;

/// A live, interned descriptor: what a [`Shape`] handle points to.
///
/// Aligned to a cache line so that the reference counts of one descriptor never share a line
/// with the fields of another: threads hitting distinct shapes do not false-share.
#[repr(align(64))]
pub(crate) struct Descriptor {
    pub(crate) geom: Geometry,
    home: Arc<CacheInner>,
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        self.home.remove(self);
    }
}

struct CacheInner {
    stripes: [Mutex<Node<Descriptor>>; NUM_STRIPES],
    live: AtomicUsize,
}

impl CacheInner {
    fn stripe(&self, hash: u64) -> &Mutex<Node<Descriptor>> {
        &self.stripes[(hash >> 48) as usize % NUM_STRIPES]
    }

    fn remove(&self, dead: &Descriptor) {
        let key = dead.geom.key();
        let removed = self
            .stripe(dead.geom.hash)
            .lock()
            .remove_if_same(&key, dead);
        if removed {
            self.live.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A cache of shape descriptors. Most code uses the process-wide [`ShapeCache::global`]
/// (through [`Shape::new`]); separate caches exist for isolation in tests and benchmarks.
///
/// ```
/// use tessera::shape::ShapeCache;
/// let cache = ShapeCache::new();
/// let a = cache.contiguous(&[2, 3]).unwrap();
/// let b = cache.intern(&[2, 3], &[3, 1]).unwrap();
/// assert_eq!(a, b); // same geometry, same descriptor
/// assert_eq!(cache.len(), 1);
/// drop((a, b));
/// assert_eq!(cache.len(), 0); // freed with its last handle
/// ```
#[derive(Clone)]
pub struct ShapeCache {
    inner: Arc<CacheInner>,
}

impl Default for ShapeCache {
    fn default() -> Self {
        Self::new()
    }
}

static GLOBAL: LazyLock<ShapeCache> = LazyLock::new(ShapeCache::new);

struct FrontSlot {
    hash: u64,
    shape: Option<Weak<Descriptor>>,
}

thread_local! {
    static FRONT: RefCell<[FrontSlot; FRONT_SLOTS]> =
        const { RefCell::new([const { FrontSlot { hash: 0, shape: None } }; FRONT_SLOTS]) };
}

impl ShapeCache {
    /// A new, empty cache.
    pub fn new() -> ShapeCache {
        ShapeCache {
            inner: Arc::new(CacheInner {
                stripes: std::array::from_fn(|_| Mutex::new(Node::default())),
                live: AtomicUsize::new(0),
            }),
        }
    }

    /// The process-wide cache that tensors use.
    pub fn global() -> &'static ShapeCache {
        &GLOBAL
    }

    /// Number of live descriptors (shapes some handle still refers to).
    pub fn len(&self) -> usize {
        self.inner.live.load(Ordering::Relaxed)
    }

    /// True when no descriptor is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of trie nodes over all stripes (a diagnostic: 0 when the cache is empty).
    pub fn node_count(&self) -> usize {
        self.inner
            .stripes
            .iter()
            .map(|s| {
                let root = s.lock();
                if root.is_empty() {
                    0
                } else {
                    root.node_count()
                }
            })
            .sum()
    }

    /// The descriptor for a C-contiguous shape with these dims.
    pub fn contiguous(&self, dims: &[usize]) -> Result<Shape> {
        let strides = contiguous_strides(dims)?;
        self.intern(dims, &strides)
    }

    /// The descriptor for `dims` with `strides` (in elements): the existing one when the same
    /// geometry is live, otherwise a new one.
    ///
    /// Errors: `dims` and `strides` of different lengths, or a geometry whose element count or
    /// reachable offsets overflow `isize`.
    pub fn intern(&self, dims: &[usize], strides: &[isize]) -> Result<Shape> {
        let hash = hash_key(dims, strides);
        if dims.len() == strides.len() {
            if let Some(hit) = self.front_lookup(hash, dims, strides) {
                return Ok(hit);
            }
        }
        let geom = Geometry::new(dims, strides)?;
        let key = geom.key();
        let shape = {
            let mut root = self.inner.stripe(hash).lock();
            root.get_or_insert(&key, |replaces_dead| {
                // A dead descriptor still counted in `live` hands its count to the new one.
                if !replaces_dead {
                    self.inner.live.fetch_add(1, Ordering::Relaxed);
                }
                Arc::new(Descriptor {
                    geom,
                    home: Arc::clone(&self.inner),
                })
            })
        };
        self.front_store(hash, &shape);
        Ok(Shape(shape))
    }

    fn front_lookup(&self, hash: u64, dims: &[usize], strides: &[isize]) -> Option<Shape> {
        FRONT
            .try_with(|front| {
                let front = front.borrow();
                let slot = &front[hash as usize % FRONT_SLOTS];
                if slot.hash != hash {
                    return None;
                }
                let live = slot.shape.as_ref()?.upgrade()?;
                let same = Arc::ptr_eq(&live.home, &self.inner)
                    && live.geom.dims.as_slice() == dims
                    && live.geom.strides.as_slice() == strides;
                // Dropping `live` on a mismatch may free a descriptor, which locks a stripe but
                // never touches this thread-local, so holding the borrow here is fine.
                same.then_some(Shape(live))
            })
            .ok()
            .flatten()
    }

    fn front_store(&self, hash: u64, shape: &Arc<Descriptor>) {
        let weak = Arc::downgrade(shape);
        let _ = FRONT.try_with(|front| {
            // Dropping the replaced weak reference frees at most an allocation whose value
            // is already dropped; it never runs a descriptor's Drop.
            front.borrow_mut()[hash as usize % FRONT_SLOTS] = FrontSlot {
                hash,
                shape: Some(weak),
            };
        });
    }
}
