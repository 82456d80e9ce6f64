//! Caches of freed buffers kept for reuse: large anonymous regions and heap blocks.
//!
//! Together the two caches hold at most [`cache_max_bytes`] bytes: the value of the
//! environment variable `TESSERA_CACHE_MAX_BYTES` (a byte count; `0` turns caching off), read
//! on first use, or [`DEFAULT_CACHE_MAX_BYTES`] when it is unset or not a number; a program
//! may change it with [`set_cache_max_bytes`]. A freed buffer larger than the cap is never
//! cached; one that does not fit evicts the least recently freed buffers of its cache, and is
//! freed itself if that is still not enough (the other cache keeps its bytes).

use std::alloc::{self, Layout as AllocLayout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(target_os = "linux")]
use super::HUGE_PAGE;
use super::HUGE_PAGE_THRESHOLD;
#[cfg(target_os = "linux")]
use crate::error::{ErrorKind, Result};

/// The cap on cached bytes when `TESSERA_CACHE_MAX_BYTES` is not set: 512 MiB.
pub const DEFAULT_CACHE_MAX_BYTES: usize = 512 << 20;

/// `usize::MAX` until the cap was read from the environment or set.
static MAX_BYTES: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Bytes held by both caches (changed under the lock of the cache concerned).
static CACHED: AtomicUsize = AtomicUsize::new(0);

/// The cap parsed from a value of `TESSERA_CACHE_MAX_BYTES`.
fn parse_max(var: Option<&str>) -> usize {
    var.and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(DEFAULT_CACHE_MAX_BYTES, |n| n.min(usize::MAX - 1))
}

/// The most bytes the buffer caches hold together (see the module doc).
pub fn cache_max_bytes() -> usize {
    match MAX_BYTES.load(Ordering::Relaxed) {
        usize::MAX => {
            let max = parse_max(std::env::var("TESSERA_CACHE_MAX_BYTES").ok().as_deref());
            // A concurrent `set_cache_max_bytes` wins over the environment.
            match MAX_BYTES.compare_exchange(usize::MAX, max, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => max,
                Err(set) => set,
            }
        }
        max => max,
    }
}

/// Sets the cap on cached bytes (`0`: cache nothing). Buffers already cached stay until
/// reused or evicted by a later release.
pub fn set_cache_max_bytes(bytes: usize) {
    MAX_BYTES.store(bytes.min(usize::MAX - 1), Ordering::Relaxed);
}

/// Bytes currently held by the buffer caches.
pub fn cached_bytes() -> usize {
    CACHED.load(Ordering::Relaxed)
}

/// Large mapped regions kept for reuse after their storage is dropped (like glibc's heap
/// reuse that NumPy benefits from): reusing a region avoids faulting fresh pages in again.
/// At most [`CACHED_REGIONS`] regions of at most [`CACHED_REGION_MAX`] bytes each, most
/// recently freed last; when full, the least recently freed one is unmapped, so a size that
/// is allocated and freed repeatedly (an op's output in a loop) always finds its region
/// again, whatever sizes were freed before.
#[cfg(target_os = "linux")]
pub(super) static REGION_CACHE: parking_lot::Mutex<Vec<Region>> =
    parking_lot::Mutex::new(Vec::new());
/// Regions the cache keeps (at most; the byte cap may keep fewer).
pub const CACHED_REGIONS: usize = 4;
/// Largest region the cache keeps, in bytes (when the byte cap is not smaller).
pub const CACHED_REGION_MAX: usize = 256 << 20;

/// Freed heap buffers kept for reuse (at most [`CACHED_HEAP_BUFFERS`], each of at least
/// [`HEAP_REUSE_MIN`] and below [`HUGE_PAGE_THRESHOLD`] bytes), most recently freed last: an
/// overwrite-only allocation of the same size takes one back without the zero-fill (which for
/// a 1 MiB buffer costs as much as a small collective).
pub(super) static HEAP_CACHE: parking_lot::Mutex<Vec<HeapBlock>> =
    parking_lot::Mutex::new(Vec::new());
/// Heap buffers the cache keeps.
pub const CACHED_HEAP_BUFFERS: usize = 4;
/// Smallest heap buffer the cache keeps, in bytes.
pub const HEAP_REUSE_MIN: usize = 64 << 10;

/// Puts a freed buffer of `size(&buf)` bytes into `cache` (most recently freed last) when
/// `keep` and the byte cap allows, and returns what the caller must free now: the buffer
/// itself when not kept, and the least recently freed ones evicted to stay within `cap`
/// buffers and the byte cap. Both buffer caches (heap blocks, mapped regions) use this, so a
/// size freed and allocated again in a loop always finds its buffer.
fn keep_freed<T>(
    cache: &parking_lot::Mutex<Vec<T>>,
    cap: usize,
    buf: T,
    keep: bool,
    size: impl Fn(&T) -> usize,
) -> Vec<T> {
    let (bytes, max) = (size(&buf), cache_max_bytes());
    if !keep || bytes > max {
        return vec![buf];
    }
    let mut cache = cache.lock();
    let mut evicted = Vec::new();
    while !cache.is_empty() && (cache.len() >= cap || CACHED.load(Ordering::Relaxed) + bytes > max)
    {
        let old = cache.remove(0);
        CACHED.fetch_sub(size(&old), Ordering::Relaxed);
        evicted.push(old);
    }
    if CACHED.load(Ordering::Relaxed) + bytes > max {
        // The other cache holds the rest of the budget.
        evicted.push(buf);
    } else {
        CACHED.fetch_add(bytes, Ordering::Relaxed);
        cache.push(buf);
    }
    evicted
}

/// Takes from `cache` the smallest buffer of at least `bytes` bytes (by `size`) that does not
/// waste more than half of itself, if any. Both mapped caches (anonymous regions)
/// use this.
#[cfg(target_os = "linux")]
fn take_fitting<T>(
    cache: &parking_lot::Mutex<Vec<T>>,
    bytes: usize,
    size: impl Fn(&T) -> usize,
) -> Option<T> {
    let mut cache = cache.lock();
    let best = (0..cache.len())
        .filter(|&i| size(&cache[i]) >= bytes && size(&cache[i]) / 2 <= bytes)
        .min_by_key(|&i| size(&cache[i]))?;
    // `remove`, not `swap_remove`: the order is the release order.
    let taken = cache.remove(best);
    CACHED.fetch_sub(size(&taken), Ordering::Relaxed);
    Some(taken)
}

/// One freed global-allocator buffer.
pub(super) struct HeapBlock {
    pub(super) ptr: NonNull<u8>,
    pub(super) layout: AllocLayout,
}

// SAFETY: a `HeapBlock` exclusively owns its allocation, moved between the cache and one
// buffer.
unsafe impl Send for HeapBlock {}

impl HeapBlock {
    /// A cached buffer of exactly `layout`, if any.
    pub(super) fn from_cache(layout: AllocLayout) -> Option<HeapBlock> {
        if !Self::cacheable(layout) {
            return None;
        }
        let mut cache = HEAP_CACHE.lock();
        let i = cache.iter().rposition(|b| b.layout == layout)?;
        CACHED.fetch_sub(layout.size(), Ordering::Relaxed);
        Some(cache.remove(i))
    }

    pub(super) fn cacheable(layout: AllocLayout) -> bool {
        (HEAP_REUSE_MIN..HUGE_PAGE_THRESHOLD).contains(&layout.size())
    }

    /// Keeps the buffer for reuse (evicting the least recently freed one when full), or
    /// frees it when it is not a cacheable size.
    pub(super) fn release(self) {
        let keep = Self::cacheable(self.layout);
        let size = |b: &HeapBlock| b.layout.size();
        for b in keep_freed(&HEAP_CACHE, CACHED_HEAP_BUFFERS, self, keep, size) {
            // SAFETY: `ptr` was returned by the global allocator with exactly `layout`, and
            // nothing refers to it any more (it left the cache or its buffer is dropped).
            unsafe { alloc::dealloc(b.ptr.as_ptr(), b.layout) };
        }
    }
}

/// One anonymous mapping: `base`/`len` as mapped, `ptr` the 2 MiB-aligned start of `cap`
/// usable bytes.
#[cfg(target_os = "linux")]
pub(super) struct Region {
    base: *mut libc::c_void,
    len: usize,
    pub(super) ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: a `Region` is an exclusively owned mapping, moved between the cache and one buffer.
#[cfg(target_os = "linux")]
unsafe impl Send for Region {}

#[cfg(target_os = "linux")]
impl Region {
    /// A fresh anonymous mapping of at least `bytes` (zero-filled by the kernel, lazily),
    /// aligned to 2 MiB and advised to use huge pages over whole huge pages: advice on a
    /// range ending inside a huge page leaves that last part in 4 KiB pages (a 16 MB buffer
    /// then faults ~320 times more on first use and keeps 1.3 MB of small pages).
    pub(super) fn map(bytes: usize) -> Result<Region> {
        let usable = bytes
            .checked_next_multiple_of(HUGE_PAGE)
            .ok_or(ErrorKind::Allocation(bytes))?;
        let len = usable
            .checked_add(HUGE_PAGE)
            .ok_or(ErrorKind::Allocation(bytes))?;
        // SAFETY: an anonymous private mapping with no address hint has no preconditions.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(ErrorKind::Allocation(bytes).into());
        }
        let skip = (HUGE_PAGE - base as usize % HUGE_PAGE) % HUGE_PAGE;
        // SAFETY: `skip < HUGE_PAGE` and the mapping is `usable + HUGE_PAGE` long, so the
        // aligned pointer and the `usable >= bytes` bytes after it lie inside the mapping.
        let ptr = unsafe { base.cast::<u8>().add(skip) };
        // SAFETY: advice on a range inside our own mapping; failure only loses the hint.
        unsafe { libc::madvise(ptr.cast(), usable, libc::MADV_HUGEPAGE) };
        let ptr = NonNull::new(ptr).ok_or(ErrorKind::Allocation(bytes))?;
        Ok(Region {
            base,
            len,
            ptr,
            cap: len - skip,
        })
    }

    /// A cached region that fits `bytes` without wasting more than half of it, if any.
    pub(super) fn from_cache(bytes: usize) -> Option<Region> {
        take_fitting(&REGION_CACHE, bytes, |r| r.cap)
    }

    /// Keeps the region for reuse (unmapping the least recently freed one when the cache is
    /// full), or unmaps it when it is too large to keep.
    pub(super) fn release(self) {
        let keep = self.cap <= CACHED_REGION_MAX;
        for r in keep_freed(&REGION_CACHE, CACHED_REGIONS, self, keep, |r| r.len) {
            // SAFETY: `base`/`len` are exactly the mapping `mmap` returned, and nothing
            // refers to it any more (it left the cache, or its buffer is being dropped).
            unsafe { libc::munmap(r.base, r.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_variable_is_a_byte_count() {
        assert_eq!(parse_max(None), DEFAULT_CACHE_MAX_BYTES);
        assert_eq!(parse_max(Some("0")), 0);
        assert_eq!(parse_max(Some(" 8388608 ")), 8 << 20);
        assert_eq!(parse_max(Some("lots")), DEFAULT_CACHE_MAX_BYTES);
        assert_eq!(parse_max(Some("-1")), DEFAULT_CACHE_MAX_BYTES);
    }
}
