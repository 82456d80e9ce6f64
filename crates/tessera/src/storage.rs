//! Dense storage: one 64-byte-aligned buffer shared by a tensor and all its views.
//!
//! Access goes through a reader-writer lock, so no safe API can race: many readers, or one
//! writer, at a time. Kernels that read and write the same storage must copy the source first
//! (DESIGN V7) rather than take both locks.

use std::alloc::{self, Layout as AllocLayout};
use std::ptr::NonNull;

use parking_lot::{
    MappedRwLockReadGuard, MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

use crate::dtype::{DType, Element};
use crate::error::{Result, TesseraError};

/// Alignment of every storage buffer, in bytes (a cache line; enough for any SIMD load).
pub const STORAGE_ALIGN: usize = 64;

/// Buffers of at least this many bytes are mapped directly and advised to use transparent
/// huge pages (as NumPy does): fresh memory then faults in 2 MiB at a time instead of 4 KiB,
/// which on virtual machines is the difference between 2 GB/s and memcpy speed.
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// An owned, zero-initialised, 64-byte-aligned byte buffer.
struct AlignedBuf {
    ptr: NonNull<u8>,
    origin: Origin,
}

/// Where the bytes came from, for freeing them.
enum Origin {
    /// The global allocator, with this layout.
    Heap(AllocLayout),
    /// An anonymous mapping starting at `base` of `len` bytes (`ptr` is `base` rounded up to
    /// a huge-page boundary).
    #[cfg(target_os = "linux")]
    Mapped { base: *mut libc::c_void, len: usize },
}

// SAFETY: `AlignedBuf` uniquely owns its allocation (like `Box<[u8]>`); access is synchronised
// by the `RwLock` around it.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references only hand out shared slices.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    fn zeroed(bytes: usize) -> Result<AlignedBuf> {
        #[cfg(target_os = "linux")]
        if bytes >= HUGE_PAGE_THRESHOLD {
            return AlignedBuf::mapped(bytes);
        }
        // Never allocate zero bytes (not allowed by `alloc`); an empty tensor gets one line.
        let layout = AllocLayout::from_size_align(bytes.max(STORAGE_ALIGN), STORAGE_ALIGN)
            .map_err(|_| TesseraError::Allocation(bytes))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(TesseraError::Allocation(bytes))?;
        Ok(AlignedBuf {
            ptr,
            origin: Origin::Heap(layout),
        })
    }

    /// A fresh anonymous mapping (zero-filled by the kernel, lazily), aligned to 2 MiB and
    /// advised to use huge pages.
    #[cfg(target_os = "linux")]
    fn mapped(bytes: usize) -> Result<AlignedBuf> {
        let len = bytes
            .checked_add(HUGE_PAGE)
            .ok_or(TesseraError::Allocation(bytes))?;
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
            return Err(TesseraError::Allocation(bytes));
        }
        let skip = (HUGE_PAGE - base as usize % HUGE_PAGE) % HUGE_PAGE;
        // SAFETY: `skip < HUGE_PAGE` and the mapping is `bytes + HUGE_PAGE` long, so the
        // aligned pointer and the `bytes` after it lie inside the mapping.
        let ptr = unsafe { base.cast::<u8>().add(skip) };
        // SAFETY: advice on a range inside our own mapping; failure only loses the hint.
        unsafe { libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE) };
        let ptr = NonNull::new(ptr).ok_or(TesseraError::Allocation(bytes))?;
        Ok(AlignedBuf {
            ptr,
            origin: Origin::Mapped { base, len },
        })
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.origin {
            // SAFETY: `ptr` was returned by `alloc_zeroed` with exactly this layout.
            Origin::Heap(layout) => unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: `base`/`len` are exactly the mapping `mmap` returned; nothing refers to
            // it any more (we own it and are being dropped).
            #[cfg(target_os = "linux")]
            Origin::Mapped { base, len } => unsafe {
                libc::munmap(base, len);
            },
        }
    }
}

/// The elements behind one or more tensors: a dtype, an element count and the buffer.
pub struct Storage {
    dtype: DType,
    len: usize,
    buf: RwLock<AlignedBuf>,
}

impl Storage {
    /// `len` zero elements of `dtype` (all-zero bits are a valid value of every dtype).
    pub fn zeroed(dtype: DType, len: usize) -> Result<Storage> {
        let bytes = len
            .checked_mul(dtype.itemsize())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| {
                TesseraError::ShapeOverflow(format!(
                    "{len} elements of {dtype} exceed isize::MAX bytes"
                ))
            })?;
        Ok(Storage {
            dtype,
            len,
            buf: RwLock::new(AlignedBuf::zeroed(bytes)?),
        })
    }

    /// A storage holding a copy of `data`.
    pub fn from_slice<T: Element>(data: &[T]) -> Result<Storage> {
        let s = Storage::zeroed(T::DTYPE, data.len())?;
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

    /// The base address of the buffer (64-byte aligned; stable for the storage's lifetime).
    ///
    /// For foreign-memory interop only: accesses through it bypass the reader-writer lock.
    pub fn as_ptr(&self) -> *const u8 {
        self.buf.read().ptr.as_ptr()
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
            Err(TesseraError::DTypeMismatch {
                expected: T::DTYPE,
                got: self.dtype,
            })
        }
    }

    /// Shared typed access for callers that already dispatched on this storage's dtype.
    pub(crate) fn read_as<T: Element>(&self) -> MappedRwLockReadGuard<'_, [T]> {
        assert_eq!(T::DTYPE, self.dtype, "read_as called with the wrong dtype");
        let len = self.len;
        RwLockReadGuard::map(self.buf.read(), |b| {
            // SAFETY: the buffer is aligned to 64 >= align_of::<T>() and holds at least
            // `len * size_of::<T>()` bytes; it was zero-initialised and is only ever written
            // as `T` (the dtype never changes), so every element is a valid `T`. The read
            // guard excludes writers for the slice's lifetime.
            unsafe { std::slice::from_raw_parts(b.ptr.as_ptr().cast::<T>(), len) }
        })
    }

    /// Exclusive typed access for callers that already dispatched on this storage's dtype.
    pub(crate) fn write_as<T: Element>(&self) -> MappedRwLockWriteGuard<'_, [T]> {
        assert_eq!(T::DTYPE, self.dtype, "write_as called with the wrong dtype");
        let len = self.len;
        RwLockWriteGuard::map(self.buf.write(), |b| {
            // SAFETY: as in `read_as`; the write guard makes this the only access.
            unsafe { std::slice::from_raw_parts_mut(b.ptr.as_ptr().cast::<T>(), len) }
        })
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({} x {})", self.len, self.dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn wrong_type_is_an_error() {
        let s = Storage::from_slice(&[1i32, 2]).unwrap();
        assert!(matches!(
            s.read::<f32>(),
            Err(TesseraError::DTypeMismatch { .. })
        ));
        assert!(s.write::<i64>().is_err());
    }

    #[test]
    fn huge_is_an_error_not_an_abort() {
        assert!(matches!(
            Storage::zeroed(DType::F64, usize::MAX / 4),
            Err(TesseraError::ShapeOverflow(_))
        ));
        // Representable but far beyond this machine's memory: the allocator says no.
        assert!(matches!(
            Storage::zeroed(DType::U8, 1 << 60),
            Err(TesseraError::Allocation(_))
        ));
        // The mapped path refuses too.
        assert!(matches!(
            Storage::zeroed(DType::U8, 1 << 50),
            Err(TesseraError::Allocation(_))
        ));
    }

    #[test]
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
