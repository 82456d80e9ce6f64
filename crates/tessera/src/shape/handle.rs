//! [`Handle`], how a [`super::Shape`] holds its descriptor: one word, the descriptor's
//! address with its low bit telling whether the handle owns a reference count.
//!
//! A two-variant enum (`&'static Descriptor` or `Arc<Descriptor>`) took two words, so a
//! `Layout` was 24 bytes and a `Result<Layout>` came back through memory; moving the pair
//! between a view's layers was read back with wider loads than it was written with, a
//! store-forwarding stall per layer (docs/performance.md, "Memoised transposes and a one-word
//! shape handle").

use std::ptr::NonNull;
use std::sync::Arc;

use super::cache::Descriptor;

/// Set in a handle's address when the handle owns one strong count of an `Arc<Descriptor>`;
/// clear for a pinned descriptor. Descriptors are aligned to 64 bytes, so the bit is free.
const COUNTED: usize = 1;

/// A descriptor handle: a pinned descriptor (no count), or one strong count of a counted one.
pub(crate) struct Handle(NonNull<Descriptor>);

// SAFETY: a handle is a `&'static Descriptor` or an `Arc<Descriptor>` in one word, and both
// are `Send` and `Sync` because `Descriptor` is (its mutable fields are `OnceLock`s; the
// assertion below keeps that true).
unsafe impl Send for Handle {}
// SAFETY: as for `Send`.
unsafe impl Sync for Handle {}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Arc<Descriptor>>();
    assert!(std::mem::align_of::<Descriptor>() > COUNTED);
};

impl Handle {
    /// A handle to a descriptor that lives for the rest of the process.
    #[inline]
    pub(crate) fn pinned(d: &'static Descriptor) -> Handle {
        Handle(NonNull::from(d))
    }

    /// A handle that owns `d`'s strong count.
    #[inline]
    pub(crate) fn counted(d: Arc<Descriptor>) -> Handle {
        let raw = Arc::into_raw(d).cast_mut();
        // `Arc::into_raw` is never null and the alignment keeps bit 0 clear, so setting it
        // gives a non-null address that `ptr` masks back.
        let tagged = raw.map_addr(|a| a | COUNTED);
        Handle(NonNull::new(tagged).expect("Arc::into_raw is not null"))
    }

    /// Whether the handle owns a reference count.
    #[inline(always)]
    pub(crate) fn is_counted(&self) -> bool {
        self.0.as_ptr().addr() & COUNTED != 0
    }

    /// The descriptor's address, without the tag.
    #[inline(always)]
    fn ptr(&self) -> *const Descriptor {
        self.0.as_ptr().map_addr(|a| a & !COUNTED).cast_const()
    }

    /// The descriptor.
    #[inline(always)]
    pub(crate) fn get(&self) -> &Descriptor {
        // SAFETY: the address is a pinned descriptor's (never freed) or one this handle holds
        // a strong count of (freed only after the count is given back in `drop`); either way
        // it is live for as long as `self` is borrowed.
        unsafe { &*self.ptr() }
    }
}

impl Clone for Handle {
    #[inline]
    fn clone(&self) -> Handle {
        if self.is_counted() {
            // SAFETY: the pointer came from `Arc::into_raw` and this handle keeps its count,
            // so the allocation is live; the new handle owns the count added here.
            unsafe { Arc::increment_strong_count(self.ptr()) };
        }
        Handle(self.0)
    }
}

impl Drop for Handle {
    #[inline]
    fn drop(&mut self) {
        if self.is_counted() {
            // SAFETY: the pointer came from `Arc::into_raw`, and this handle owns one strong
            // count of it, given back exactly once here.
            unsafe { Arc::decrement_strong_count(self.ptr()) };
        }
    }
}

#[cfg(test)]
mod tests {
    //! Under Miri (scripts/miri, `shape::handle`): counts given and taken exactly once, and
    //! the tag never reaches a dereference.
    use crate::shape::ShapeCache;

    #[test]
    fn counted_handles_keep_their_descriptor_and_give_their_count_back() {
        let cache = ShapeCache::with_pinning(0, 0);
        let s = cache.intern(&[2, 3], &[3, 1]).unwrap();
        assert!(s.0.is_counted());
        let copies: Vec<_> = (0..3).map(|_| s.clone()).collect();
        drop(s);
        assert_eq!(cache.len(), 1, "the copies keep it");
        for c in &copies {
            assert_eq!(c.dims(), &[2, 3]);
        }
        drop(copies);
        assert_eq!(cache.len(), 0, "freed with its last handle");
    }

    #[test]
    fn pinned_handles_carry_no_count() {
        assert_eq!(std::mem::size_of::<crate::shape::Shape>(), 8);
        assert_eq!(std::mem::size_of::<Option<crate::shape::Shape>>(), 8);
        // The global cache: a pinned descriptor stays reachable from its trie, so Miri sees
        // no leak (a private cache's pinned descriptors outlive it, which Miri reports).
        let s = ShapeCache::global()
            .intern(&[9, 2, 7], &[14, 7, 1])
            .unwrap();
        if !s.is_pinned() {
            return; // The pin budget went to other tests of this process.
        }
        assert!(!s.0.is_counted());
        let t = s.clone();
        drop(s);
        assert_eq!(t.strides(), &[14, 7, 1]);
    }
}
