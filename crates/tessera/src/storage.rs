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

/// An owned, zero-initialised, 64-byte-aligned byte buffer.
struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: AllocLayout,
}

// SAFETY: `AlignedBuf` uniquely owns its allocation (like `Box<[u8]>`); access is synchronised
// by the `RwLock` around it.
unsafe impl Send for AlignedBuf {}
// SAFETY: as above; shared references only hand out shared slices.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    fn zeroed(bytes: usize) -> Result<AlignedBuf> {
        // Never allocate zero bytes (not allowed by `alloc`); an empty tensor gets one line.
        let layout = AllocLayout::from_size_align(bytes.max(STORAGE_ALIGN), STORAGE_ALIGN)
            .map_err(|_| TesseraError::Allocation(bytes))?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or(TesseraError::Allocation(bytes))?;
        Ok(AlignedBuf { ptr, layout })
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was returned by `alloc_zeroed` with exactly this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
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
    }
}
