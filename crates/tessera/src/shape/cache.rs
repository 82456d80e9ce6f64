//! The shared, thread-safe shape-descriptor cache (seed 004, docs/design.md C1).
//!
//! Lookup path, fastest first:
//! 1. a process-wide, direct-mapped table of [`PINNED_SLOTS`] pinned descriptors (see
//!    Pinning below), checked by hash and then by comparing dims and strides: one atomic load,
//!    no thread-local (which a shared library reaches through a `__tls_get_addr` call), no
//!    lock, no write;
//! 2. a per-thread, direct-mapped front cache of [`FRONT_SLOTS`] weak references, checked the
//!    same way (no lock, no shared write but the handle's reference count);
//! 3. the trie of one of [`NUM_STRIPES`] stripes, chosen by the key's hash, under that stripe's
//!    mutex. A miss inserts a new descriptor.
//!
//! Reclamation: the trie and the front caches hold only weak references (the table of pinned
//! descriptors holds plain pointers to descriptors that are never freed). When the last
//! strong reference drops, the descriptor's `Drop` locks its stripe and removes its path
//! (unless a newer descriptor already took the slot), so the cache never grows without bound.
//!
//! Retention: creating a view and dropping it straight away would otherwise build and free a
//! descriptor every time. Each stripe therefore keeps the last `retain` descriptors it created
//! (a small ring of strong references, [`DEFAULT_RETAIN_PER_STRIPE`] by default): at most
//! `NUM_STRIPES * retain` descriptors outlive their handles, and only until newer shapes push
//! them out or [`ShapeCache::release_retained`] is called. [`ShapeCache::with_retention`]`(0)`
//! frees every descriptor exactly when its last handle drops.
//!
//! Pinning: the global cache keeps the first [`GLOBAL_PIN_BUDGET`] descriptors of rank at most
//! [`PIN_MAX_RANK`] it creates for the rest of the process. Their handles are plain references
//! (no reference count to raise or lower: a view made and dropped paid two atomic operations
//! for its shape), and the front cache hands them out without upgrading a weak reference.
//! Descriptors past the budget are counted and reclaimed as above. Other caches pin only when
//! made with [`ShapeCache::with_pinning`].

use std::cell::RefCell;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, Weak};

use parking_lot::Mutex;
use smallvec::SmallVec;

use super::geometry::{contiguous_strides, hash_key, Geometry, DIM_INLINE};
use super::trie::Node;
use super::Shape;
use crate::error::Result;

/// Number of lock stripes. Each stripe owns a trie and a mutex; a shape's stripe is picked by
/// the high bits of its key hash. 32 stripes keep two threads (or sixteen) on distinct shapes
/// almost never on the same lock, at 32 small mutexes per cache.
pub const NUM_STRIPES: usize = 32;

/// Slots of the per-thread front cache (direct mapped by the low bits of the key hash).
pub const FRONT_SLOTS: usize = 256;

/// Slots of the process-wide table of pinned descriptors (direct mapped by the low bits of
/// the key hash; 8 KiB of pointers).
pub const PINNED_SLOTS: usize = 1024;

/// The table of pinned descriptors, of any cache (a hit checks the descriptor's cache). A
/// slot holds null or a pointer to a pinned descriptor, which is never freed; stores publish
/// it with `Release`, lookups read it with `Acquire`. Two threads storing into one slot
/// leave either descriptor there: a miss costs a trip to the front cache or the trie.
static PINNED_TABLE: [AtomicPtr<Descriptor>; PINNED_SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; PINNED_SLOTS];

/// Descriptors each stripe keeps alive after their last handle drops (see the module docs).
pub const DEFAULT_RETAIN_PER_STRIPE: usize = 4;

/// How many descriptors the global cache pins (see the module docs): at about 320 bytes each
/// plus their trie nodes, at most about 1.5 MiB kept for the process's lifetime.
pub const GLOBAL_PIN_BUDGET: usize = 2048;

/// The highest rank a pinned descriptor has: those up to rank 6 keep their dims and strides
/// inline; ranks 7 and 8 add 2 small heap blocks each. Higher ranks are rare and are counted.
pub const PIN_MAX_RANK: usize = DIM_INLINE + 2;

/// A live, interned descriptor: what a [`Shape`] handle points to.
///
/// Aligned to a cache line so that the reference counts of one descriptor never share a line
/// with the fields of another: threads hitting distinct shapes do not false-share.
#[repr(align(64))]
pub(crate) struct Descriptor {
    pub(crate) geom: Geometry,
    /// Weak, so that a cache's retained descriptors do not keep the cache alive in a cycle.
    home: Weak<CacheInner>,
    /// The descriptor of this geometry without its first dim, once [`Shape::tail`] asked for
    /// it: the shape of `t[i]`, whatever `i` is. A strong reference to a lower-rank
    /// descriptor, so the references never form a cycle.
    tail: OnceLock<Shape>,
    /// The descriptor with this one's dims and strides reversed (the shape of `t.T`), kept
    /// only when this descriptor is pinned: the two point at each other, a cycle that only
    /// descriptors that are never freed may form.
    reversed: OnceLock<Shape>,
    /// The descriptor with the last two dims swapped (the shape of `.mT`), kept as `reversed`.
    swapped_last: OnceLock<Shape>,
    /// The dense order of this geometry ([`Shape::dense_order`]), once asked for.
    pub(crate) dense: OnceLock<DenseOrder>,
    /// Pinned by its cache when it was made: one strong reference to it was leaked then, so
    /// it is never freed.
    pinned: bool,
}

/// What [`Shape::dense_order`] found for a descriptor. `Same` is not a handle to the
/// descriptor itself, which would be a reference cycle.
pub(crate) enum DenseOrder {
    /// Not a dense block, or already row-major: no other order to follow.
    None,
    /// The descriptor is its own dense order.
    Same,
    /// Another descriptor: the same strides with size-1 dims given row-major ones.
    Other(Shape),
}

impl Descriptor {
    /// This descriptor as a plain `'static` reference when it is pinned.
    pub(crate) fn pinned_ref(self: &Arc<Self>) -> Option<&'static Descriptor> {
        // SAFETY: a pinned descriptor's strong count never reaches zero: `intern_slow` leaked
        // one strong reference to it (`mem::forget` of a clone) before publishing it, and
        // nothing ever gives that reference back, so the allocation lives until the process
        // exits. Its contents are only read through `&` (every mutable field is a `OnceLock`).
        self.pinned.then(|| unsafe { &*Arc::as_ptr(self) })
    }

    /// This geometry without its first dim (rank >= 1), interned in the same cache (the
    /// global one if that cache is gone), computed once per descriptor.
    pub(crate) fn tail(&self) -> Result<&Shape> {
        if let Some(t) = self.tail.get() {
            return Ok(t);
        }
        let t = self.intern_beside(&self.geom.dims[1..], &self.geom.strides[1..])?;
        // Two threads racing here interned the same descriptor; either handle will do.
        Ok(self.tail.get_or_init(|| t))
    }

    /// This geometry with its dims and strides reversed, interned in the same cache (the
    /// global one if that cache is gone); computed once when this descriptor is pinned, each
    /// time otherwise (see `reversed`).
    pub(crate) fn reversed(&self) -> Result<Shape> {
        let rank = self.geom.dims.len();
        self.permuted(&self.reversed, |i| rank - 1 - i)
    }

    /// This geometry with its last two dims swapped (rank >= 2), memoised as [`Self::reversed`].
    pub(crate) fn swapped_last(&self) -> Result<Shape> {
        let rank = self.geom.dims.len();
        debug_assert!(rank >= 2);
        self.permuted(&self.swapped_last, |i| match rank - i {
            1 => rank - 2,
            2 => rank - 1,
            _ => i,
        })
    }

    /// The geometry whose dim `i` is this one's dim `source(i)`, from `memo` when it holds
    /// one; set into `memo` only when this descriptor and the result are both pinned (a
    /// counted pair would point at each other and never be freed, and a counted result held
    /// by a pinned descriptor would never be reclaimed).
    fn permuted(&self, memo: &OnceLock<Shape>, source: impl Fn(usize) -> usize) -> Result<Shape> {
        if let Some(s) = memo.get() {
            return Ok(s.clone());
        }
        let (from_dims, from_strides) = (&self.geom.dims, &self.geom.strides);
        let dims: SmallVec<[usize; 8]> =
            (0..from_dims.len()).map(|i| from_dims[source(i)]).collect();
        let strides: SmallVec<[isize; 8]> = (0..from_dims.len())
            .map(|i| from_strides[source(i)])
            .collect();
        let s = self.intern_beside(&dims, &strides)?;
        if self.pinned && s.is_pinned() {
            // Two threads racing here interned the same descriptor; either handle will do.
            // A counted result is not kept: held by a descriptor that is never freed, it
            // would never be reclaimed either.
            let _ = memo.set(s.clone());
        }
        Ok(s)
    }

    /// `dims` with `strides` interned in this descriptor's cache (the global one if that
    /// cache is gone).
    pub(crate) fn intern_beside(&self, dims: &[usize], strides: &[isize]) -> Result<Shape> {
        match self.home.upgrade() {
            Some(inner) => ShapeCache { inner }.intern(dims, strides),
            None => ShapeCache::global().intern(dims, strides),
        }
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        if let Some(home) = self.home.upgrade() {
            home.remove(self);
        }
    }
}

struct Stripe {
    root: Node<Descriptor>,
    /// Strong references to the stripe's most recently created descriptors.
    retained: Vec<Option<Arc<Descriptor>>>,
    next: usize,
}

struct CacheInner {
    stripes: [Mutex<Stripe>; NUM_STRIPES],
    live: AtomicUsize,
    /// Descriptors this cache may pin in all.
    pin_budget: usize,
    /// Descriptors this cache may still pin.
    pin_left: AtomicUsize,
}

impl CacheInner {
    /// Whether a new descriptor of `rank` gets pinned: it is small enough and the budget is
    /// not spent (which this then spends one of).
    fn take_pin(&self, rank: usize) -> bool {
        rank <= PIN_MAX_RANK
            && self
                .pin_left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
    }

    fn stripe(&self, hash: u64) -> &Mutex<Stripe> {
        &self.stripes[(hash >> 48) as usize % NUM_STRIPES]
    }

    fn remove(&self, dead: &Descriptor) {
        let key = dead.geom.key();
        let removed = self
            .stripe(dead.geom.hash)
            .lock()
            .root
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
/// let cache = ShapeCache::with_retention(0);
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

static GLOBAL: LazyLock<ShapeCache> =
    LazyLock::new(|| ShapeCache::with_pinning(DEFAULT_RETAIN_PER_STRIPE, GLOBAL_PIN_BUDGET));

struct FrontSlot {
    hash: u64,
    shape: Front,
}

/// What a front-cache slot holds.
enum Front {
    Empty,
    /// A pinned descriptor: handed out as is.
    Pinned(&'static Descriptor),
    /// Any other: upgraded on a hit, which fails once the descriptor is gone.
    Counted(Weak<Descriptor>),
}

thread_local! {
    static FRONT: RefCell<[FrontSlot; FRONT_SLOTS]> = const {
        RefCell::new([const { FrontSlot { hash: 0, shape: Front::Empty } }; FRONT_SLOTS])
    };
}

/// Slice equality by an element loop: for the few elements of a shape this beats the `memcmp`
/// call that `==` on integer slices compiles to.
fn same_elements<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

impl ShapeCache {
    /// A new, empty cache retaining [`DEFAULT_RETAIN_PER_STRIPE`] descriptors per stripe.
    pub fn new() -> ShapeCache {
        ShapeCache::with_retention(DEFAULT_RETAIN_PER_STRIPE)
    }

    /// A new, empty cache keeping the last `retain` descriptors each stripe created alive
    /// after their handles drop (0: free every descriptor with its last handle).
    ///
    /// # Panics
    /// When the retention slots cannot be allocated (see [`ShapeCache::try_with_retention`]).
    pub fn with_retention(retain: usize) -> ShapeCache {
        ShapeCache::try_with_retention(retain).expect("ShapeCache retention slots")
    }

    /// [`ShapeCache::with_retention`], with [`crate::ErrorKind::Allocation`] or
    /// [`crate::ErrorKind::ShapeOverflow`] when `retain` slots per stripe cannot be had.
    pub fn try_with_retention(retain: usize) -> crate::Result<ShapeCache> {
        ShapeCache::try_with_limits(retain, 0)
    }

    /// A new, empty cache that retains `retain` descriptors per stripe (as
    /// [`ShapeCache::with_retention`]) and pins the first `pin_budget` descriptors of rank at
    /// most [`PIN_MAX_RANK`] it makes: those are never freed, not even with the cache, and
    /// their handles carry no reference count. The global cache pins [`GLOBAL_PIN_BUDGET`].
    ///
    /// ```
    /// use tessera::shape::ShapeCache;
    /// let cache = ShapeCache::with_pinning(0, 1);
    /// let a = cache.contiguous(&[2, 3]).unwrap();
    /// let b = cache.contiguous(&[4]).unwrap();
    /// assert!(a.is_pinned() && !b.is_pinned()); // the budget of one went to the first
    /// drop((a, b));
    /// assert_eq!(cache.len(), 1); // the pinned one stays
    /// assert!(cache.contiguous(&[2, 3]).unwrap().is_pinned());
    /// ```
    ///
    /// # Panics
    /// When the retention slots cannot be allocated (see [`ShapeCache::try_with_retention`]).
    pub fn with_pinning(retain: usize, pin_budget: usize) -> ShapeCache {
        ShapeCache::try_with_limits(retain, pin_budget).expect("ShapeCache retention slots")
    }

    fn try_with_limits(retain: usize, pin_budget: usize) -> crate::Result<ShapeCache> {
        let mut stripes = Vec::with_capacity(NUM_STRIPES);
        for _ in 0..NUM_STRIPES {
            stripes.push(Mutex::new(Stripe {
                root: Node::default(),
                retained: crate::storage::try_vec(None, retain)?,
                next: 0,
            }));
        }
        Ok(ShapeCache {
            inner: Arc::new(CacheInner {
                stripes: stripes.try_into().unwrap_or_else(|_| unreachable!()),
                live: AtomicUsize::new(0),
                pin_budget,
                pin_left: AtomicUsize::new(pin_budget),
            }),
        })
    }

    /// The process-wide cache that tensors use.
    pub fn global() -> &'static ShapeCache {
        &GLOBAL
    }

    /// Number of live descriptors: those some handle refers to, plus the retained ones.
    pub fn len(&self) -> usize {
        self.inner.live.load(Ordering::Relaxed)
    }

    /// Number of descriptors this cache pinned (live for the rest of the process).
    pub fn pinned(&self) -> usize {
        self.inner.pin_budget - self.inner.pin_left.load(Ordering::Relaxed)
    }

    /// True when no descriptor is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of retention slots in use (descriptors kept alive by the cache itself; some may
    /// also have handles).
    pub fn retained(&self) -> usize {
        self.inner
            .stripes
            .iter()
            .map(|s| s.lock().retained.iter().flatten().count())
            .sum()
    }

    /// Drops the cache's own references to retained descriptors; those without handles are
    /// freed.
    pub fn release_retained(&self) {
        for stripe in &self.inner.stripes {
            // Take the references out under the lock, drop them after it is released: dropping
            // the last reference runs the descriptor's Drop, which locks this stripe.
            let taken: Vec<_> = stripe
                .lock()
                .retained
                .iter_mut()
                .map(Option::take)
                .collect();
            drop(taken);
        }
    }

    /// Number of trie nodes over all stripes (a diagnostic: 0 when the cache is empty).
    pub fn node_count(&self) -> usize {
        self.inner
            .stripes
            .iter()
            .map(|s| {
                let s = s.lock();
                if s.root.is_empty() {
                    0
                } else {
                    s.root.node_count()
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
    #[inline]
    pub fn intern(&self, dims: &[usize], strides: &[isize]) -> Result<Shape> {
        self.intern_hashed(hash_key(dims, strides), dims, strides)
    }

    /// [`ShapeCache::intern`] with the key hash already computed: `hash` must be
    /// `hash_key(dims, strides)` (callers that remember a geometry remember its hash too).
    #[inline]
    pub(crate) fn intern_hashed(
        &self,
        hash: u64,
        dims: &[usize],
        strides: &[isize],
    ) -> Result<Shape> {
        debug_assert_eq!(hash, hash_key(dims, strides));
        if dims.len() == strides.len() {
            if let Some(hit) = self.pinned_lookup(hash, dims, strides) {
                return Ok(Shape::from_pinned(hit));
            }
            if let Some(hit) = self.front_lookup(hash, dims, strides) {
                return Ok(hit);
            }
        }
        self.intern_slow(hash, dims, strides)
    }

    /// The trie path of [`ShapeCache::intern`], kept out of line so that the front-cache hit
    /// stays a small function.
    #[inline(never)]
    fn intern_slow(&self, hash: u64, dims: &[usize], strides: &[isize]) -> Result<Shape> {
        let geom = Geometry::new(dims, strides)?;
        let key = geom.key();
        let mut evicted = None;
        let shape = {
            let mut stripe = self.inner.stripe(hash).lock();
            let Stripe {
                root,
                retained,
                next,
            } = &mut *stripe;
            root.get_or_insert(&key, |replaces_dead| {
                // A dead descriptor still counted in `live` hands its count to the new one.
                if !replaces_dead {
                    self.inner.live.fetch_add(1, Ordering::Relaxed);
                }
                let pinned = self.inner.take_pin(geom.dims.len());
                let fresh = Arc::new(Descriptor {
                    geom,
                    home: Arc::downgrade(&self.inner),
                    tail: OnceLock::new(),
                    reversed: OnceLock::new(),
                    swapped_last: OnceLock::new(),
                    dense: OnceLock::new(),
                    pinned,
                });
                if pinned {
                    // The strong reference that keeps it for ever (`Descriptor::pinned_ref`).
                    std::mem::forget(Arc::clone(&fresh));
                } else if !retained.is_empty() {
                    evicted = retained[*next].replace(Arc::clone(&fresh));
                    *next = (*next + 1) % retained.len();
                }
                fresh
            })
        };
        // Dropped outside the stripe lock: it may be the last reference (its Drop locks).
        drop(evicted);
        self.front_store(hash, &shape);
        Ok(Shape::from_arc(shape))
    }

    /// Whether `d` is this cache's descriptor of `dims` and `strides`.
    #[inline(always)]
    fn holds(&self, d: &Descriptor, dims: &[usize], strides: &[isize]) -> bool {
        std::ptr::eq(d.home.as_ptr(), Arc::as_ptr(&self.inner))
            && same_elements(&d.geom.dims, dims)
            && same_elements(&d.geom.strides, strides)
    }

    #[inline]
    fn pinned_lookup(
        &self,
        hash: u64,
        dims: &[usize],
        strides: &[isize],
    ) -> Option<&'static Descriptor> {
        let p = PINNED_TABLE[hash as usize % PINNED_SLOTS].load(Ordering::Acquire);
        // SAFETY: the table holds null or pointers to pinned descriptors (`pinned_store`),
        // which are never freed (`Descriptor::pinned_ref`) and only read through `&`; the
        // `Acquire` load pairs with the `Release` store that published the pointer, so the
        // descriptor's contents written before are visible.
        let d: &'static Descriptor = unsafe { p.as_ref() }?;
        (d.geom.hash == hash && self.holds(d, dims, strides)).then_some(d)
    }

    fn pinned_store(hash: u64, d: &'static Descriptor) {
        PINNED_TABLE[hash as usize % PINNED_SLOTS]
            .store(std::ptr::from_ref(d).cast_mut(), Ordering::Release);
    }

    #[inline]
    fn front_lookup(&self, hash: u64, dims: &[usize], strides: &[isize]) -> Option<Shape> {
        FRONT
            .try_with(|front| {
                let front = front.borrow();
                let slot = &front[hash as usize % FRONT_SLOTS];
                if slot.hash != hash {
                    return None;
                }
                let same = |d: &Descriptor| self.holds(d, dims, strides);
                match &slot.shape {
                    Front::Empty => None,
                    Front::Pinned(d) => same(d).then(|| Shape::from_pinned(d)),
                    Front::Counted(weak) => {
                        let live = weak.upgrade()?;
                        // Dropping `live` on a mismatch may free a descriptor, which locks a
                        // stripe but never touches this thread-local, so holding the borrow
                        // here is fine.
                        same(&live).then(|| Shape::from_arc(live))
                    }
                }
            })
            .ok()
            .flatten()
    }

    fn front_store(&self, hash: u64, shape: &Arc<Descriptor>) {
        let shape = match shape.pinned_ref() {
            Some(d) => {
                ShapeCache::pinned_store(hash, d);
                Front::Pinned(d)
            }
            None => Front::Counted(Arc::downgrade(shape)),
        };
        let _ = FRONT.try_with(|front| {
            // Dropping the replaced weak reference frees at most an allocation whose value
            // is already dropped; it never runs a descriptor's Drop.
            front.borrow_mut()[hash as usize % FRONT_SLOTS] = FrontSlot { hash, shape };
        });
    }
}

#[cfg(test)]
#[path = "cache_pinning_tests.rs"]
mod pinning_tests;
