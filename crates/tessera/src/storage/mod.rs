//! Dense storage: one 64-byte-aligned buffer shared by a tensor and all its views.
//!
//! Buffers of [`HUGE_PAGE_THRESHOLD`] bytes or more are anonymous mappings advised to use
//! huge pages, and a few of them are cached for reuse when freed; smaller ones come from the
//! global allocator, zeroed, and a few freed ones of at least [`HEAP_REUSE_MIN`] bytes are kept
//! for reuse too. The two caches hold at most `TESSERA_CACHE_MAX_BYTES` bytes together
//! (environment variable, a byte count, default [`DEFAULT_CACHE_MAX_BYTES`]; `0` disables
//! caching; see [`cache_max_bytes`]), and a buffer larger than that is never cached.
//! Bytes are always initialised: every element is a valid value of its dtype
//! (kernels that overwrite everything may skip clearing a reused buffer, except for `bool`).
//! A storage may also wrap memory that someone else allocated and frees
//! ([`Storage::from_external`]): the MPI backend of `tessera-dist` hands out outputs in MPI
//! shared-memory windows this way, and foreign buffers can be adopted the same way.
//!
//! Access goes through a reader-writer lock, so no safe API can race: many readers, or one
//! writer, at a time. Kernels that read and write the same storage must copy the source first
//! (docs/design.md V7) rather than take both locks.

mod cache;
mod external;
mod fallible;
use cache::HeapBlock;
#[cfg(target_os = "linux")]
use cache::Region;
pub use cache::{
    cache_max_bytes, cached_bytes, set_cache_max_bytes, CACHED_HEAP_BUFFERS, CACHED_REGIONS,
    CACHED_REGION_MAX, DEFAULT_CACHE_MAX_BYTES, HEAP_REUSE_MIN,
};
pub use fallible::{checked_numel, checked_vec_bytes, try_vec, try_with_capacity, try_zeroed_vec};

use std::alloc::{self, Layout as AllocLayout};
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::dtype::{DType, Element};
use crate::error::{ErrorKind, Result, TesseraError};

/// Alignment of every storage buffer, in bytes (a cache line; enough for any SIMD load).
pub const STORAGE_ALIGN: usize = 64;

/// Buffers of at least this many bytes are mapped directly and advised to use transparent
/// huge pages (as NumPy does): fresh memory then faults in 2 MiB at a time instead of 4 KiB,
/// which on virtual machines is the difference between 2 GB/s and memcpy speed.
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// Buffers of at most this many bytes come from the allocator's small-block path (glibc's
/// per-thread cache answers in a few dozen instructions) and are aligned by hand inside a
/// block 48 bytes longer: an aligned allocation of a few hundred bytes costs
/// `posix_memalign`, which splits and coalesces chunks on every call and was a fifth of a
/// 16-element `a + b` (docs/design.md P4).
pub const SMALL_BUF_MAX: usize = 1024;
/// The extra bytes of a small block: the allocator aligns to at least 16, so the first
/// 64-byte boundary is at most 48 bytes in.
const SMALL_SLACK: usize = STORAGE_ALIGN - 16;

/// An owned, zero-initialised, 64-byte-aligned byte buffer.
struct AlignedBuf {
    ptr: NonNull<u8>,
    origin: Origin,
}

/// Where the bytes came from, for freeing them.
enum Origin {
    /// The global allocator, with this layout.
    Heap(AllocLayout),
    /// A small block of the global allocator (at most [`SMALL_BUF_MAX`] + [`SMALL_SLACK`]
    /// bytes, 16-aligned) that the buffer starts inside: its start and layout.
    Small(NonNull<u8>, AllocLayout),
    /// A large anonymous mapping (returned to the region cache or unmapped on drop).
    #[cfg(target_os = "linux")]
    Mapped(Region),
    /// Memory owned by someone else ([`Storage::from_external`],
    /// [`Storage::from_external_release`]): dropping the owner releases it.
    External(external::ExternalOwner),
    /// Moved out during drop.
    Taken,
}

// SAFETY: `AlignedBuf` uniquely owns its allocation (like `Box<[u8]>`), or holds the owner of
// external memory: a `Send + Sync` object, or a release function and context pointer that
// `Storage::from_external_release`'s contract makes callable once from any thread; access
// is synchronised by the `RwLock` around it.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references only hand out shared slices.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `bytes`; all zero when `zero`, otherwise with unspecified (but
    /// initialised) contents.
    fn new(bytes: usize, zero: bool) -> Result<AlignedBuf> {
        #[cfg(target_os = "linux")]
        if bytes >= HUGE_PAGE_THRESHOLD {
            let region = match Region::from_cache(bytes) {
                Some(r) => {
                    if zero {
                        // SAFETY: the region holds `cap >= bytes` writable bytes we own.
                        unsafe { std::ptr::write_bytes(r.ptr.as_ptr(), 0, bytes) };
                    }
                    r
                }
                // Fresh mappings are zero already.
                None => Region::map(bytes)?,
            };
            return Ok(AlignedBuf {
                ptr: region.ptr,
                origin: Origin::Mapped(region),
            });
        }
        if bytes <= SMALL_BUF_MAX {
            return AlignedBuf::small(bytes);
        }
        // Never allocate zero bytes (not allowed by `alloc`); an empty tensor gets one line.
        let layout = AllocLayout::from_size_align(bytes.max(STORAGE_ALIGN), STORAGE_ALIGN)
            .map_err(|_| TesseraError::from(ErrorKind::Allocation(bytes)))?;
        if let Some(b) = HeapBlock::from_cache(layout) {
            if zero {
                // SAFETY: the block holds `layout.size()` writable bytes we own.
                unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), 0, layout.size()) };
            }
            return Ok(AlignedBuf {
                ptr: b.ptr,
                origin: Origin::Heap(layout),
            });
        }
        // SAFETY: `layout` has a non-zero size. New heap buffers are always zeroed: this
        // keeps every byte initialised (a reused one holds old, initialised values).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(ErrorKind::Allocation(bytes))?;
        Ok(AlignedBuf {
            ptr,
            origin: Origin::Heap(layout),
        })
    }
}

impl AlignedBuf {
    /// A zeroed buffer of `bytes <= SMALL_BUF_MAX` bytes at the first 64-byte boundary of a
    /// 16-aligned block [`SMALL_SLACK`] bytes longer (so an empty tensor, too, gets a block).
    fn small(bytes: usize) -> Result<AlignedBuf> {
        debug_assert!(bytes <= SMALL_BUF_MAX);
        let layout = AllocLayout::from_size_align(bytes + SMALL_SLACK, 16)
            .map_err(|_| TesseraError::from(ErrorKind::Allocation(bytes)))?;
        // SAFETY: `layout` has a non-zero size. New heap buffers are always zeroed: this keeps
        // every byte initialised (plain `alloc` plus a clear is the allocator's fast path).
        // `black_box` hides the block's origin from LLVM, which otherwise may fuse the two
        // back into `calloc`: glibc's `calloc` skips the thread cache, and a 16-element `a + b`
        // from Python took 0.15 -> 0.19 us in the build where that happened (2026-12-05).
        let start = std::hint::black_box(unsafe { alloc::alloc(layout) });
        let start = NonNull::new(start).ok_or(ErrorKind::Allocation(bytes))?;
        // SAFETY: the block holds `layout.size()` writable bytes we own.
        unsafe { std::ptr::write_bytes(start.as_ptr(), 0, layout.size()) };
        let skip = start.as_ptr().align_offset(STORAGE_ALIGN);
        // The block is 16-aligned, so the boundary is at most `SMALL_SLACK` bytes in and
        // `skip + bytes <= layout.size()`.
        assert!(
            skip <= SMALL_SLACK,
            "allocator returned a block aligned to less than 16"
        );
        // SAFETY: `skip <= SMALL_SLACK < layout.size()`: in bounds of the block, not null.
        let ptr = unsafe { NonNull::new_unchecked(start.as_ptr().add(skip)) };
        Ok(AlignedBuf {
            ptr,
            origin: Origin::Small(start, layout),
        })
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.origin, Origin::Taken) {
            // The block came from `alloc_zeroed` with exactly this layout (possibly through
            // the cache); the cache keeps it or frees it.
            Origin::Heap(layout) => HeapBlock {
                ptr: self.ptr,
                layout,
            }
            .release(),
            // SAFETY: `start` came from `alloc` with exactly `layout` (`AlignedBuf::small`)
            // and is freed once: the origin was replaced by `Taken` above.
            Origin::Small(start, layout) => unsafe { alloc::dealloc(start.as_ptr(), layout) },
            #[cfg(target_os = "linux")]
            Origin::Mapped(region) => region.release(),
            Origin::External(owner) => drop(owner),
            Origin::Taken => {}
        }
    }
}

/// The elements behind one or more tensors: a dtype, an element count and the buffer.
pub struct Storage {
    dtype: DType,
    len: usize,
    buf: RwLock<AlignedBuf>,
    /// `buf`'s base address, readable without the lock ([`Storage::as_ptr`]): set at
    /// allocation and changed only by [`Storage::detach_external`], under the write lock.
    base: AtomicPtr<u8>,
    /// The version counter (docs/design.md G3): bumped whenever a write guard is taken, so
    /// autograd can tell that a tensor it saved for backward was modified in place.
    version: AtomicU64,
}

impl Storage {
    /// `len` zero elements of `dtype` (all-zero bits are a valid value of every dtype).
    pub fn zeroed(dtype: DType, len: usize) -> Result<Storage> {
        Storage::alloc(dtype, len, true)
    }

    /// `len` elements of `dtype` whose values are unspecified, for kernels that overwrite
    /// every element before anything reads them. Buffers may come from the region or heap
    /// cache without being cleared. `bool` storage is always zeroed, so every byte is a valid bool.
    pub(crate) fn for_overwrite(dtype: DType, len: usize) -> Result<Storage> {
        Storage::alloc(dtype, len, dtype == DType::Bool)
    }

    /// `len` elements of `dtype` left as the cache gave them (initialised bytes of whatever
    /// was there, for `bool` possibly invalid ones), for a kernel that writes every element
    /// through [`Storage::fresh_uninit`] before any handle shares the storage. Unlike
    /// [`Storage::for_overwrite`], a `bool` buffer is not cleared first: for a 64 Ki-element
    /// comparison the clearing took a tenth of the call.
    pub(crate) fn uninit(dtype: DType, len: usize) -> Result<Storage> {
        Storage::alloc(dtype, len, false)
    }

    fn bytes(dtype: DType, len: usize) -> Result<usize> {
        len.checked_mul(dtype.itemsize())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                ErrorKind::ShapeOverflow(format!(
                    "{len} elements of {dtype} exceed isize::MAX bytes"
                ))
                .into()
            })
    }

    fn alloc(dtype: DType, len: usize, zero: bool) -> Result<Storage> {
        let bytes = Storage::bytes(dtype, len)?;
        let buf = AlignedBuf::new(bytes, zero)?;
        Ok(Storage {
            dtype,
            len,
            base: AtomicPtr::new(buf.ptr.as_ptr()),
            buf: RwLock::new(buf),
            version: AtomicU64::new(0),
        })
    }

    /// A storage holding a copy of `data`.
    pub fn from_slice<T: Element>(data: &[T]) -> Result<Storage> {
        let s = Storage::for_overwrite(T::DTYPE, data.len())?;
        s.write_as::<T>().copy_from_slice(data);
        Ok(s)
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the storage holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The base address of the buffer (64-byte aligned; stable for the storage's lifetime,
    /// except that [`Storage::detach_external`] moves an external storage's elements).
    ///
    /// For foreign-memory interop only: accesses through it bypass the reader-writer lock.
    ///
    /// Takes no lock (a caller may hold a read or write guard of this storage): the address
    /// is kept beside the buffer. Racing with `detach_external` yields either address; the
    /// old one is dangling once the detach returns, as the caveat above says.
    pub fn as_ptr(&self) -> *const u8 {
        self.base.load(Ordering::Acquire)
    }

    /// Shared access to the elements as `[T]`; errors if `T` is not the storage's dtype.
    pub fn read<T: Element>(&self) -> Result<MappedRwLockReadGuard<'_, [T]>> {
        self.check::<T>()?;
        Ok(self.read_as::<T>())
    }

    /// Exclusive access to the elements as `[T]`; errors if `T` is not the storage's dtype.
    pub fn write<T: Element>(&self) -> Result<MappedRwLockWriteGuard<'_, [T]>> {
        self.check::<T>()?;
        Ok(self.write_as::<T>())
    }

    fn check<T: Element>(&self) -> Result<()> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(ErrorKind::DTypeMismatch {
                expected: T::DTYPE,
                got: self.dtype,
            }
            .into())
        }
    }

    /// The version counter: how many write guards have been taken on this storage. Writes
    /// through foreign memory (a NumPy export, [`Storage::as_ptr`]) are not counted.
    ///
    /// ```
    /// use tessera::Storage;
    /// let s = Storage::from_slice(&[1f32, 2.0]).unwrap();
    /// let v = s.version();
    /// s.write::<f32>().unwrap()[0] = 5.0;
    /// assert_eq!(s.version(), v + 1);
    /// ```
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Shared typed access for callers that already dispatched on this storage's dtype.
    pub(crate) fn read_as<T: Element>(&self) -> MappedRwLockReadGuard<'_, [T]> {
        assert_eq!(T::DTYPE, self.dtype, "read_as called with the wrong dtype");
        let len = self.len;
        RwLockReadGuard::map(self.buf.read(), |b| {
            // SAFETY: the buffer is aligned to 64 >= align_of::<T>() and holds at least
            // `len * size_of::<T>()` bytes, all initialised: zeroed when new, and a reused
            // buffer holds bytes written as some dtype, where every bit pattern is a valid
            // value of every dtype but `bool`, whose storage is zeroed even when reused, or
            // (`Storage::uninit`) written in full before any handle shares it. So every
            // element is a valid `T`. The read guard excludes writers for the slice's
            // lifetime.
            unsafe { std::slice::from_raw_parts(b.ptr.as_ptr().cast::<T>(), len) }
        })
    }

    /// Typed access to a storage that no handle shares yet (it is not in an `Arc`): the
    /// borrow is exclusive, so no lock is taken and no version bumped (nothing can have saved
    /// it for backward). For kernels that fill a fresh output before wrapping it in a tensor.
    pub(crate) fn fresh_mut<T: Element>(&mut self) -> &mut [T] {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "fresh_mut called with the wrong dtype"
        );
        let (len, buf) = (self.len, self.buf.get_mut());
        // SAFETY: as in `read_as`; `&mut self` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(buf.ptr.as_ptr().cast::<T>(), len) }
    }

    /// [`Storage::fresh_mut`] for a storage from [`Storage::uninit`]: its elements as still to
    /// be written (`MaybeUninit`), so a `bool` buffer holding invalid bytes is never seen as
    /// `bool`s before the kernel has written them.
    pub(crate) fn fresh_uninit<T: Element>(&mut self) -> &mut [MaybeUninit<T>] {
        assert_eq!(
            T::DTYPE,
            self.dtype,
            "fresh_uninit called with the wrong dtype"
        );
        let (len, buf) = (self.len, self.buf.get_mut());
        // SAFETY: as in `fresh_mut`, with `MaybeUninit<T>` (`T`'s layout), which accepts
        // any bytes.
        unsafe { std::slice::from_raw_parts_mut(buf.ptr.as_ptr().cast::<MaybeUninit<T>>(), len) }
    }

    /// Exclusive typed access for callers that already dispatched on this storage's dtype.
    pub(crate) fn write_as<T: Element>(&self) -> MappedRwLockWriteGuard<'_, [T]> {
        assert_eq!(T::DTYPE, self.dtype, "write_as called with the wrong dtype");
        let len = self.len;
        let guard = self.buf.write();
        self.version.fetch_add(1, Ordering::AcqRel);
        RwLockWriteGuard::map(guard, |b| {
            // SAFETY: as in `read_as`; the write guard makes this the only access.
            unsafe { std::slice::from_raw_parts_mut(b.ptr.as_ptr().cast::<T>(), len) }
        })
    }
}

/// Elements from [`Storage::fresh_uninit`] as values of a dtype other than `bool`, for a
/// kernel that overwrites them (as [`Storage::fresh_mut`] hands a [`Storage::for_overwrite`]
/// buffer out). Panics for `bool`, whose buffer may hold invalid bytes.
pub(crate) fn overwritable<T: Element>(out: &mut [MaybeUninit<T>]) -> &mut [T] {
    assert_ne!(
        T::DTYPE,
        DType::Bool,
        "a bool buffer must be written as MaybeUninit"
    );
    // SAFETY: every byte of a storage buffer is initialised (`AlignedBuf::new`: new buffers
    // are zeroed, reused ones hold old values), and every bit pattern is a value of every
    // dtype but `bool`; `MaybeUninit<T>` has `T`'s layout.
    unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({} x {})", self.len, self.dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cache::HEAP_CACHE;
    #[cfg(target_os = "linux")]
    use cache::REGION_CACHE;

    #[test]
    fn aligned_and_zeroed() {
        for d in DType::ALL {
            for len in [0, 1, 3, 1000] {
                let s = Storage::zeroed(d, len).unwrap();
                let b = s.buf.read();
                assert_eq!(b.ptr.as_ptr() as usize % STORAGE_ALIGN, 0);
                assert_eq!(s.len(), len);
            }
        }
        let s = Storage::zeroed(DType::F64, 5).unwrap();
        assert_eq!(&*s.read::<f64>().unwrap(), &[0.0; 5]);
    }

    #[test]
    fn small_buffers_are_aligned_zeroed_and_whole() {
        // Every size around the small-block limit, reused blocks included: each buffer is
        // 64-byte aligned, zero when asked, and writable to its last byte (Miri checks the
        // bounds and the frees).
        let sizes: Vec<usize> = if cfg!(miri) {
            vec![
                0,
                1,
                15,
                16,
                63,
                64,
                65,
                SMALL_BUF_MAX - 1,
                SMALL_BUF_MAX,
                SMALL_BUF_MAX + 1,
            ]
        } else {
            (0..=SMALL_BUF_MAX + 70).collect()
        };
        for round in 0..2 {
            for &n in &sizes {
                let s = Storage::alloc(DType::U8, n, round == 0 || n % 2 == 0).unwrap();
                assert_eq!(s.as_ptr() as usize % STORAGE_ALIGN, 0, "{n} bytes");
                let mut w = s.write::<u8>().unwrap();
                if round == 0 || n % 2 == 0 {
                    assert!(w.iter().all(|&b| b == 0), "{n} bytes not zeroed");
                }
                w.fill(0xAB);
                assert!(w.iter().all(|&b| b == 0xAB));
            }
        }
    }

    #[test]
    fn wrong_type_is_an_error() {
        let s = Storage::from_slice(&[1i32, 2]).unwrap();
        assert!(matches!(
            s.read::<f32>().as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::DTypeMismatch { .. })
        ));
        assert!(s.write::<i64>().is_err());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot simulate a refused allocation")]
    fn huge_is_an_error_not_an_abort() {
        assert!(matches!(
            Storage::zeroed(DType::F64, usize::MAX / 4)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ));
        // Representable but far beyond this machine's memory: the allocator says no.
        assert!(matches!(
            Storage::zeroed(DType::U8, 1 << 60)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::Allocation(_))
        ));
        // The mapped path refuses too.
        assert!(matches!(
            Storage::zeroed(DType::U8, 1 << 50)
                .as_ref()
                .map_err(|e| e.kind()),
            Err(ErrorKind::Allocation(_))
        ));
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap'd huge-page regions of several MiB")]
    fn reused_regions_are_zeroed_when_asked() {
        let n = HUGE_PAGE_THRESHOLD / 8 + 1;
        for _ in 0..3 {
            let s = Storage::zeroed(DType::F64, n).unwrap();
            assert!(s.read::<f64>().unwrap().iter().all(|&x| x == 0.0));
            s.write::<f64>().unwrap().fill(-1.5);
            drop(s);
            // A bool storage never sees the previous bytes, even without zeroing asked.
            let b = Storage::for_overwrite(DType::Bool, n * 8).unwrap();
            assert!(b.read::<bool>().unwrap().iter().all(|&x| !x));
            let o = Storage::for_overwrite(DType::F64, n).unwrap();
            assert_eq!(o.len(), n);
        }
    }

    #[test]
    fn reused_heap_buffers_are_zeroed_when_asked() {
        // A size no other test uses, so a parallel test cannot take the freed buffer (it
        // could push others and evict it, so reuse itself is only checked when it happened).
        let n = HEAP_REUSE_MIN / 8 + 13;
        let ptr = |s: &Storage| s.buf.read().ptr.as_ptr() as usize;
        // One round covers every path; Miri interprets each element, so it runs one.
        let rounds = if cfg!(miri) { 1 } else { 3 };
        for _ in 0..rounds {
            let s = Storage::zeroed(DType::F64, n).unwrap();
            assert!(s.read::<f64>().unwrap().iter().all(|&x| x == 0.0));
            s.write::<f64>().unwrap().fill(-1.5);
            let at = ptr(&s);
            drop(s);
            let o = Storage::for_overwrite(DType::F64, n).unwrap();
            assert_eq!(ptr(&o) % STORAGE_ALIGN, 0);
            if ptr(&o) == at {
                // Reused without clearing.
                assert!(o.read::<f64>().unwrap().iter().all(|&x| x == -1.5));
            }
            drop(o);
            let z = Storage::zeroed(DType::F64, n).unwrap();
            assert!(z.read::<f64>().unwrap().iter().all(|&x| x == 0.0));
            z.write::<f64>().unwrap().fill(2.0);
            drop(z);
            // A bool storage never sees the previous bytes, even without zeroing asked.
            let b = Storage::for_overwrite(DType::Bool, n * 8).unwrap();
            assert!(b.read::<bool>().unwrap().iter().all(|&x| !x));
        }
        let size = |bytes| AllocLayout::from_size_align(bytes, STORAGE_ALIGN).unwrap();
        assert!(!HeapBlock::cacheable(size(HEAP_REUSE_MIN - 64)));
        assert!(HeapBlock::cacheable(size(HEAP_REUSE_MIN)));
        assert!(!HeapBlock::cacheable(size(HUGE_PAGE_THRESHOLD)));
        assert!(HEAP_CACHE.lock().len() <= CACHED_HEAP_BUFFERS);
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap'd huge-page regions of several MiB")]
    fn a_region_freed_last_is_reused_even_when_the_cache_was_full() {
        // Fill the cache with regions of another size, then free and re-allocate one size
        // (an op's output in a loop): the second allocation gets the same region. Sizes no
        // other test uses (a parallel test could still take or push regions; that can only
        // make this pass without the eviction, never fail with it).
        let other = (9 << 20) / 8 + 5;
        let fill: Vec<Storage> = (0..CACHED_REGIONS)
            .map(|_| Storage::zeroed(DType::F64, other).unwrap())
            .collect();
        drop(fill);
        let n = (40 << 20) / 8 + 7;
        let ptr = |s: &Storage| s.buf.read().ptr.as_ptr() as usize;
        let first = Storage::for_overwrite(DType::F64, n).unwrap();
        first.write::<f64>().unwrap().fill(3.0);
        let at = ptr(&first);
        drop(first);
        let again = Storage::for_overwrite(DType::F64, n).unwrap();
        assert_eq!(ptr(&again), at);
        assert!(again.read::<f64>().unwrap().iter().all(|&x| x == 3.0));
        drop(again);
        // Zeroing is still honoured on a reused region.
        let z = Storage::zeroed(DType::F64, n).unwrap();
        assert!(z.read::<f64>().unwrap().iter().all(|&x| x == 0.0));
        assert!(REGION_CACHE.lock().len() <= CACHED_REGIONS);
    }

    #[test]
    #[cfg_attr(miri, ignore = "mmap'd huge-page regions of several MiB")]
    fn large_buffers_are_mapped_zeroed_and_aligned() {
        let n = HUGE_PAGE_THRESHOLD / 4 + 3;
        let s = Storage::zeroed(DType::F32, n).unwrap();
        assert_eq!(s.buf.read().ptr.as_ptr() as usize % HUGE_PAGE, 0);
        {
            let mut w = s.write::<f32>().unwrap();
            assert!(w.iter().all(|&x| x == 0.0));
            w[n - 1] = 7.0;
            w[0] = 1.0;
        }
        let r = s.read::<f32>().unwrap();
        assert_eq!((r[0], r[n - 1], r[n / 2]), (1.0, 7.0, 0.0));
    }
}
