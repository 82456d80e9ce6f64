//! Storages over memory that someone else allocated and frees (docs/design.md I1): the MPI
//! backend's shared windows and DLPack imports. The storage keeps the memory's owner and
//! releases it exactly once, when the storage drops or is detached
//! ([`Storage::detach_external`]).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::{AlignedBuf, Origin, Storage};
use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::with_dtype;

/// What keeps foreign memory alive; dropping it releases the memory.
pub(super) enum ExternalOwner {
    /// An owner object ([`Storage::from_external`]).
    Boxed(#[allow(dead_code)] Box<dyn Send + Sync>),
    /// A release function and its argument ([`Storage::from_external_release`]): no
    /// allocation, for imports where one per tensor shows (a DLPack producer's deleter).
    Release {
        release: unsafe fn(*mut ()),
        ctx: *mut (),
    },
}

impl Drop for ExternalOwner {
    fn drop(&mut self) {
        if let ExternalOwner::Release { release, ctx } = *self {
            // SAFETY: `from_external_release`'s contract: `release(ctx)` may run once, on any
            // thread, after the last access; an `ExternalOwner` is dropped once (it is moved
            // out of the buffer's origin before the drop, never copied).
            unsafe { release(ctx) }
        }
    }
}

impl Storage {
    /// A storage of `len` elements of `dtype` at `ptr`, memory that `owner` keeps alive:
    /// dropping the storage drops `owner` (which may free or recycle the memory).
    ///
    /// The memory needs the alignment of the dtype's elements, not
    /// [`STORAGE_ALIGN`](super::STORAGE_ALIGN): foreign buffers (NumPy's, DLPack producers')
    /// are often only element-aligned, and no kernel assumes more of a storage's base than of
    /// a view's first element. Misaligned memory is an `InvalidArgument` error (and `owner`
    /// is dropped with it).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len * dtype.itemsize()` bytes until
    /// `owner` is dropped; every element must be a valid value of `dtype` (for `bool`: bytes 0
    /// or 1); and while this storage lives, other accesses to that memory (by other owners in
    /// this process, such as the NumPy array a DLPack import came from, or by other
    /// processes, as with MPI's shared windows) must not race with accesses through it: the
    /// caller orders them (docs/design.md I1).
    pub unsafe fn from_external(
        dtype: DType,
        len: usize,
        ptr: NonNull<u8>,
        owner: Box<dyn Send + Sync>,
    ) -> Result<Storage> {
        let owner = ExternalOwner::Boxed(owner);
        Storage::check_external(dtype, len, ptr)?;
        Ok(Storage::external_unchecked(dtype, len, ptr, owner))
    }

    /// [`Storage::from_external`] with the owner given as a function and its argument:
    /// `release(ctx)` runs exactly once, when the storage drops or is detached, or before an
    /// error returns (misaligned memory, or more bytes than `isize::MAX`). No allocation is
    /// made for the owner.
    ///
    /// # Safety
    /// As for [`Storage::from_external`], with "until `owner` is dropped" read as "until
    /// `release(ctx)` runs"; moreover `release(ctx)` must be sound to call once, from any
    /// thread, at any time after this call (it is how the memory is given back).
    ///
    /// Returned in its `Arc`, not in a `Result` the caller then moves into one: for a DLPack
    /// import of a small array that move was a tenth of the import's time (a wide load of a
    /// value just written in narrow stores waits for the stores to reach the cache).
    pub unsafe fn from_external_release(
        dtype: DType,
        len: usize,
        ptr: NonNull<u8>,
        release: unsafe fn(*mut ()),
        ctx: *mut (),
    ) -> Result<Arc<Storage>> {
        if let Err(e) = Storage::check_external(dtype, len, ptr) {
            // SAFETY: the caller's contract: `release(ctx)` runs once, here on refusal.
            unsafe { release(ctx) };
            return Err(e);
        }
        // Checked first, so that the owner is made only here, straight into the `Arc`: made
        // before (to be dropped on refusal) and moved in, it was read back in wide loads
        // right after its narrow stores.
        Ok(Arc::new(Storage::external_unchecked(
            dtype,
            len,
            ptr,
            ExternalOwner::Release { release, ctx },
        )))
    }

    /// Errors unless `len` elements of `dtype` fit in `isize::MAX` bytes and `ptr` is
    /// aligned for `dtype`.
    #[inline(always)]
    fn check_external(dtype: DType, len: usize, ptr: NonNull<u8>) -> Result<()> {
        Storage::bytes(dtype, len)?;
        let align = with_dtype!(dtype, T => std::mem::align_of::<T>());
        if !(ptr.as_ptr() as usize).is_multiple_of(align) {
            return Err(ErrorKind::InvalidArgument(format!(
                "external memory at {ptr:p} is not aligned for {dtype} ({align} bytes)"
            ))
            .into());
        }
        Ok(())
    }

    /// The storage of both constructors, once [`Storage::check_external`] passed.
    #[inline(always)]
    fn external_unchecked(
        dtype: DType,
        len: usize,
        ptr: NonNull<u8>,
        owner: ExternalOwner,
    ) -> Storage {
        Storage {
            dtype,
            len,
            buf: RwLock::new(AlignedBuf {
                ptr,
                origin: Origin::External(owner),
            }),
            base: AtomicPtr::new(ptr.as_ptr()),
            version: AtomicU64::new(0),
        }
    }

    /// Moves the elements of a storage made by [`Storage::from_external`] (or
    /// [`Storage::from_external_release`]) into memory the storage owns, and releases the
    /// external owner (nothing happens for other storages): for an owner whose memory is
    /// about to go away while tensors still use it. Takes the write lock, so it waits for
    /// current readers and writers; afterwards [`Storage::as_ptr`]
    /// returns the new address.
    pub fn detach_external(&self) -> Result<()> {
        let mut buf = self.buf.write();
        if !matches!(buf.origin, Origin::External(_)) {
            return Ok(());
        }
        let bytes = Storage::bytes(self.dtype, self.len)?;
        let own = AlignedBuf::new(bytes, false)?;
        // SAFETY: both buffers hold at least `bytes` bytes and are distinct allocations; the
        // write lock excludes every other access through this storage, and the external
        // memory stays valid until the old buffer (and with it its owner) drops below.
        unsafe { std::ptr::copy_nonoverlapping(buf.ptr.as_ptr(), own.ptr.as_ptr(), bytes) };
        self.base.store(own.ptr.as_ptr(), Ordering::Release);
        *buf = own;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::STORAGE_ALIGN;

    /// Counts its drops, so a test sees the owner of external memory released exactly once;
    /// holds the memory (freed with it).
    struct Owner(
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
        #[allow(dead_code)] RawMem,
    );

    /// Memory from `Box::into_raw`, freed on drop. Held as a raw pointer, not a `Box`: moving
    /// a `Box` asserts unique access and would invalidate the pointer the storage was given
    /// (Miri's Stacked Borrows caught that).
    struct RawMem(*mut [u64]);

    impl RawMem {
        fn new(n: usize) -> RawMem {
            RawMem(Box::into_raw(vec![0u64; n].into_boxed_slice()))
        }
    }

    // SAFETY: `RawMem` uniquely owns its allocation (like the `Box` it came from); it is only
    // freed, never accessed, through this handle.
    unsafe impl Send for RawMem {}
    // SAFETY: as above: `&RawMem` gives no access to the memory.
    unsafe impl Sync for RawMem {}

    impl Drop for RawMem {
        fn drop(&mut self) {
            // SAFETY: the pointer came from `Box::into_raw` in `new` and is freed once, here.
            drop(unsafe { Box::from_raw(self.0) });
        }
    }

    impl Drop for Owner {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn external_memory_is_read_written_and_released_once() {
        let drops = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        // 16 u64 = 128 bytes: a 64-byte-aligned window of 8 f64 inside it.
        let mem = RawMem::new(16);
        let at = mem.0.cast::<u8>();
        let skip = at.align_offset(STORAGE_ALIGN);
        // SAFETY: `skip < 64`, so `at + skip .. + 64` lies inside the 128-byte box.
        let ptr = NonNull::new(unsafe { at.add(skip) }).unwrap();
        let owner = Box::new(Owner(drops.clone(), mem));
        // SAFETY: `ptr` is aligned, and 8 f64 (64 bytes) fit in the box `owner` keeps alive;
        // zero bytes are valid f64s; nothing else touches the box.
        let s = unsafe { Storage::from_external(DType::F64, 8, ptr, owner) }.unwrap();
        s.write::<f64>().unwrap()[3] = 2.5;
        assert_eq!(s.read::<f64>().unwrap()[..4], [0.0, 0.0, 0.0, 2.5]);
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 0);
        // Detaching copies the elements out and releases the owner at once.
        s.detach_external().unwrap();
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_ne!(s.as_ptr(), ptr.as_ptr().cast_const());
        assert_eq!(s.as_ptr(), s.read::<f64>().unwrap().as_ptr().cast::<u8>());
        assert_eq!(s.read::<f64>().unwrap()[..4], [0.0, 0.0, 0.0, 2.5]);
        s.detach_external().unwrap();
        drop(s);
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 1);

        // Misaligned memory is refused, and its owner is dropped with the error.
        let mem = RawMem::new(16);
        let at = mem.0.cast::<u8>();
        // SAFETY: as above; +4 keeps the pointer inside the box and breaks f64's alignment.
        let bad = NonNull::new(unsafe { at.add(at.align_offset(STORAGE_ALIGN) + 4) }).unwrap();
        let owner = Box::new(Owner(drops.clone(), mem));
        // SAFETY: the call only checks the pointer and drops `owner` on refusal.
        let r = unsafe { Storage::from_external(DType::F64, 4, bad, owner) };
        assert!(matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ));
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 2);

        // Element alignment is enough (foreign buffers are often not line-aligned).
        let mem = RawMem::new(16);
        let at = mem.0.cast::<u8>();
        // SAFETY: +8 keeps 4 f64 (32 bytes) inside the 128-byte box, 8-byte aligned.
        let ok = NonNull::new(unsafe { at.add(at.align_offset(STORAGE_ALIGN) + 8) }).unwrap();
        let owner = Box::new(Owner(drops.clone(), mem));
        // SAFETY: 4 f64 fit in the box `owner` keeps alive; zero bytes are valid f64s.
        let s = unsafe { Storage::from_external(DType::F64, 4, ok, owner) }.unwrap();
        s.write::<f64>().unwrap()[3] = 1.5;
        assert_eq!(s.read::<f64>().unwrap()[3], 1.5);
        drop(s);
        assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    /// `from_external_release`'s release function: counts into the `AtomicUsize` at `ctx`.
    ///
    /// # Safety
    /// `ctx` points at an `AtomicUsize` that outlives the call.
    unsafe fn count_release(ctx: *mut ()) {
        // SAFETY: the function's contract.
        unsafe { &*ctx.cast::<std::sync::atomic::AtomicUsize>() }
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    #[test]
    fn a_release_function_runs_once_on_drop_detach_or_refusal() {
        use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
        let released = AtomicUsize::new(0);
        let ctx = std::ptr::from_ref(&released).cast_mut().cast::<()>();
        let mem = RawMem::new(16);
        let at = mem.0.cast::<u8>();
        // SAFETY: `skip < 64`, so 8 f64 from `at + skip` lie inside the 128-byte box.
        let ptr = NonNull::new(unsafe { at.add(at.align_offset(STORAGE_ALIGN)) }).unwrap();
        // SAFETY: the box outlives every storage below; `count_release` only counts.
        let s = unsafe { Storage::from_external_release(DType::F64, 8, ptr, count_release, ctx) }
            .unwrap();
        s.write::<f64>().unwrap()[7] = 3.0;
        assert_eq!(s.as_ptr(), ptr.as_ptr().cast_const());
        assert_eq!(released.load(SeqCst), 0);
        drop(s);
        assert_eq!(released.load(SeqCst), 1);
        // SAFETY: as above.
        let s = unsafe { Storage::from_external_release(DType::F64, 8, ptr, count_release, ctx) }
            .unwrap();
        s.detach_external().unwrap();
        assert_eq!(released.load(SeqCst), 2);
        assert_eq!(s.read::<f64>().unwrap()[7], 3.0);
        drop(s);
        assert_eq!(released.load(SeqCst), 2);
        // Misaligned: refused, and released with the error.
        // SAFETY: +4 stays inside the box; the call only checks the pointer.
        let bad = NonNull::new(unsafe { ptr.as_ptr().add(4) }).unwrap();
        // SAFETY: as above.
        let r = unsafe { Storage::from_external_release(DType::F64, 2, bad, count_release, ctx) };
        assert!(matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::InvalidArgument(_))
        ));
        assert_eq!(released.load(SeqCst), 3);
        drop(mem);
    }
}
