//! MPI-3 shared-memory windows (`MPI_Win_allocate_shared`) as an arena of tensor storage.
//!
//! Each window gives every rank of a communicator on one host a segment that every other
//! rank of it has mapped too (`MPI_Win_shared_query` gives the address). A rank leases byte
//! ranges of its own segment for the outputs of collectives, and peers write into them
//! directly. Windows are created collectively (every rank calls [`Window::allocate`] at the
//! same point) and live until [`free_all`] frees them, collectively, before `MPI_Finalize`,
//! because Open MPI unmaps the windows left at finalize: tensors still using one are first
//! detached into private memory ([`tessera::Storage::detach_external`]).

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;
use tessera::storage::STORAGE_ALIGN;
use tessera::{DType, Storage, Tensor};

use super::super::wire::check;
use crate::error::{DistError, Result};

/// Locks `m`, whatever a panicking holder left (every critical section here leaves the data
/// consistent).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every window of this process, in creation order (the order [`free_all`] frees them in).
static WINDOWS: Mutex<Vec<Arc<Window>>> = Mutex::new(Vec::new());

/// Test hook: the next window this process allocates fails after `MPI_Win_allocate_shared`,
/// as a failed `MPI_Win_lock_all` would ([`crate::mpi_backend::fail_next_window`]).
static FAIL_NEXT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Arms (`true`) or disarms the hook; returns whether it was armed.
pub(crate) fn fail_next_window(arm: bool) -> bool {
    FAIL_NEXT.swap(arm, std::sync::atomic::Ordering::SeqCst)
}

fn take_window_failure() -> bool {
    FAIL_NEXT.swap(false, std::sync::atomic::Ordering::SeqCst)
}

/// One shared-memory window: this rank's segment, its free ranges, and every rank's segment
/// address in this process.
pub(crate) struct Window {
    win: Mutex<ffi::MPI_Win>,
    /// A duplicate of the window's communicator, for the agreement before the free
    /// ([`free_all`], which takes and frees it: freeing it after `MPI_Finalize` aborts).
    comm: Mutex<Option<SimpleCommunicator>>,
    /// Every rank's segment: address in this process (0 for an empty one) and bytes.
    segments: Vec<(usize, usize)>,
    me: usize,
    /// Free byte ranges of this rank's segment (offsets from its start), sorted, disjoint.
    free: Mutex<Vec<Range<usize>>>,
    /// The storages over leases of this window, to detach before the window is freed.
    users: Mutex<Vec<Weak<Storage>>>,
}

// SAFETY: the window handle is only used under its mutex or by collective calls made by the
// thread that runs the communicator's collective; the segment addresses are plain numbers.
unsafe impl Send for Window {}
// SAFETY: as above.
unsafe impl Sync for Window {}

impl Window {
    /// Collective over `comm` (every rank on this host): a new window in which this rank's
    /// segment has `bytes` bytes (0 allowed). The ranks agree on the outcome (one all-reduce
    /// of failure flags after the local steps), so a failure on one rank is an error on every
    /// rank and no rank is left waiting in a later collective (docs/design.md D7).
    pub fn allocate(comm: &SimpleCommunicator, bytes: usize) -> Result<Arc<Window>> {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let p = usize::try_from(mpi::traits::Communicator::size(comm)).unwrap_or(0);
        let me = usize::try_from(mpi::traits::Communicator::rank(comm)).unwrap_or(0);
        // A size MPI cannot take still joins the collective call (with 0 bytes) and fails in
        // the agreement, instead of returning before it.
        let size = ffi::MPI_Aint::try_from(bytes);
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = ffi::MPI_Win(std::ptr::null_mut());
        // SAFETY: `base` and `win` are written by the call; the info object is created and
        // freed here; the communicator handle comes from a live `mpi` object. With
        // "alloc_shared_noncontig" each segment starts on its own page.
        let (set, code) = unsafe {
            let mut info: ffi::MPI_Info = ffi::RSMPI_INFO_NULL;
            let created = ffi::MPI_Info_create(&mut info);
            let set = if created == 0 {
                ffi::MPI_Info_set(info, c"alloc_shared_noncontig".as_ptr(), c"true".as_ptr())
            } else {
                created
            };
            let code = ffi::MPI_Win_allocate_shared(
                *size.as_ref().unwrap_or(&0),
                1,
                info,
                comm.as_raw(),
                (&mut base as *mut *mut u8).cast(),
                &mut win,
            );
            if created == 0 {
                ffi::MPI_Info_free(&mut info);
            }
            (set, code)
        };
        let allocated = code == 0;
        let mut locked = false;
        let local = (|| -> Result<Vec<(usize, usize)>> {
            size.map_err(|_| DistError::Comm(format!("a window of {bytes} bytes")))?;
            check("MPI_Info_set", set)?;
            check("MPI_Win_allocate_shared", code)?;
            if take_window_failure() {
                return Err(DistError::Comm(
                    "MPI_Win_lock_all failed (test hook fail_next_window)".into(),
                ));
            }
            // One passive epoch for the window's life: `MPI_Win_sync` orders our loads and
            // stores with the peers' inside it (MPI's unified memory model).
            // SAFETY: `win` is the live window just allocated.
            check("MPI_Win_lock_all", unsafe {
                ffi::MPI_Win_lock_all(ffi::MPI_MODE_NOCHECK as i32, win)
            })?;
            locked = true;
            (0..p)
                .map(|r| {
                    let (mut len, mut unit, mut at): (ffi::MPI_Aint, i32, *mut u8) =
                        (0, 0, std::ptr::null_mut());
                    // SAFETY: the out-parameters are written by the call; `win` is live.
                    check("MPI_Win_shared_query", unsafe {
                        ffi::MPI_Win_shared_query(
                            win,
                            r as i32,
                            &mut len,
                            &mut unit,
                            (&mut at as *mut *mut u8).cast(),
                        )
                    })?;
                    let len = usize::try_from(len).unwrap_or(0);
                    Ok((if len == 0 { 0 } else { at as usize }, len))
                })
                .collect()
        })();
        // Bit 1: some rank has no window; bit 0: some rank failed after allocating it.
        let flags = if !allocated {
            2u8
        } else {
            u8::from(local.is_err())
        };
        let mut any = 0u8;
        comm.all_reduce_into(&flags, &mut any, SystemOperation::max());
        if any != 0 {
            if any & 2 == 0 {
                // Every rank has the window, so every rank frees it (a collective call).
                // SAFETY: `win` is live and no tensor uses it yet; it is unlocked only
                // where it was locked, and freed once.
                unsafe {
                    if locked {
                        ffi::MPI_Win_unlock_all(win);
                    }
                    ffi::MPI_Win_free(&mut win);
                }
            }
            local?;
            return Err(DistError::Comm(
                "MPI_Win_allocate_shared: another rank failed".into(),
            ));
        }
        let segments = local?;
        // Offsets are counted from the segment's start; the first one that gives a
        // 64-byte-aligned address is the same in every process (mappings start on pages).
        let (start, len) = segments[me];
        let skip = if len == 0 {
            0
        } else {
            start.next_multiple_of(STORAGE_ALIGN) - start
        };
        let window = Arc::new(Window {
            win: Mutex::new(win),
            comm: Mutex::new(Some(comm.duplicate())),
            segments,
            me,
            free: Mutex::new((len > skip).then_some(skip..len).into_iter().collect()),
            users: Mutex::new(Vec::new()),
        });
        lock(&WINDOWS).push(window.clone());
        Ok(window)
    }

    /// Leases `bytes` bytes (rounded up to 64) of this rank's segment, if a free range holds
    /// them: the first fit.
    pub fn lease(self: &Arc<Window>, bytes: usize) -> Option<Lease> {
        let bytes = bytes.max(1).next_multiple_of(STORAGE_ALIGN);
        let mut free = lock(&self.free);
        let i = free.iter().position(|r| r.len() >= bytes)?;
        let at = free[i].start;
        free[i].start += bytes;
        if free[i].is_empty() {
            free.remove(i);
        }
        Some(Lease {
            window: self.clone(),
            range: at..at + bytes,
        })
    }

    fn release(&self, range: Range<usize>) {
        let mut free = lock(&self.free);
        let i = free.partition_point(|r| r.start < range.start);
        free.insert(i, range);
        // Merge with the neighbours.
        if i + 1 < free.len() && free[i].end == free[i + 1].start {
            free[i].end = free.remove(i + 1).end;
        }
        if i > 0 && free[i - 1].end == free[i].start {
            free[i - 1].end = free.remove(i).end;
        }
    }

    /// The address of `offset` in `rank`'s segment, if `bytes` bytes from there lie inside it.
    fn address(&self, rank: usize, offset: usize, bytes: usize) -> Result<NonNull<u8>> {
        let &(start, len) = self
            .segments
            .get(rank)
            .ok_or_else(|| DistError::Comm(format!("no segment of rank {rank}")))?;
        let inside = offset.checked_add(bytes).is_some_and(|end| end <= len);
        match NonNull::new((start + offset) as *mut u8) {
            Some(at) if inside && start != 0 => Ok(at),
            _ => Err(DistError::Comm(format!(
                "{bytes} bytes at offset {offset} of rank {rank}'s {len}-byte segment"
            ))),
        }
    }

    /// A tensor of `shape` over `rank`'s segment from `offset` (another rank's output, to
    /// write into during a collective).
    pub fn peer_tensor(
        self: &Arc<Window>,
        rank: usize,
        offset: usize,
        shape: &[usize],
        dtype: DType,
    ) -> Result<Tensor> {
        let len: usize = shape.iter().product();
        let at = self.address(rank, offset, len * dtype.itemsize())?;
        // SAFETY: `address` checked that the elements lie inside `rank`'s segment, mapped
        // while the window lives (`self`, kept by the owner); offsets are 64-byte aligned
        // (`lease`), and `from_external` checks it again. Any bit pattern is a valid element
        // except for bool, whose outputs are zeroed by their owner before the collective opens
        // (`Lease::zero`), and every write stores valid values of the dtype. This
        // process touches that segment only through this storage, during one collective.
        let storage = unsafe { Storage::from_external(dtype, len, at, Box::new(self.clone())) }?;
        Ok(Tensor::from_storage(Arc::new(storage), shape)?)
    }

    /// Orders this process's loads and stores on the window with its peers' (`MPI_Win_sync`).
    pub fn sync(&self) -> Result<()> {
        // SAFETY: the window is live and in the passive epoch opened at allocation.
        check("MPI_Win_sync", unsafe {
            ffi::MPI_Win_sync(*lock(&self.win))
        })
    }
}

/// A byte range of this rank's segment of a window, returned to it when dropped.
pub(crate) struct Lease {
    window: Arc<Window>,
    range: Range<usize>,
}

impl Lease {
    /// Offset of the range in this rank's segment.
    pub fn offset(&self) -> usize {
        self.range.start
    }

    /// Zeroes the lease (before peers may write into it: bool outputs must hold valid
    /// bools before the collective opens).
    pub fn zero(&self) {
        let w = &self.window;
        if let Ok(at) = w.address(w.me, self.range.start, self.range.len()) {
            // SAFETY: the range lies inside this rank's segment (`address`) and is leased
            // to the caller alone; no peer writes it before the collective opens.
            unsafe { std::ptr::write_bytes(at.as_ptr(), 0, self.range.len()) };
        }
    }

    /// A tensor of `shape` over the lease (with its old contents: see [`Lease::zero`]),
    /// which keeps the lease until its storage drops.
    pub fn into_tensor(self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let len: usize = shape.iter().product();
        let w = self.window.clone();
        let at = w.address(w.me, self.range.start, len * dtype.itemsize())?;
        if len * dtype.itemsize() > self.range.len() {
            return Err(DistError::Comm("a lease too small for its tensor".into()));
        }
        // SAFETY: as in `Window::peer_tensor`, for this rank's own leased range; the lease
        // moves into the storage, so the range stays reserved while the storage lives.
        let storage = Arc::new(unsafe { Storage::from_external(dtype, len, at, Box::new(self)) }?);
        let mut users = lock(&w.users);
        users.retain(|u| u.strong_count() > 0);
        users.push(Arc::downgrade(&storage));
        drop(users);
        Ok(Tensor::from_storage(storage, shape)?)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.window.release(self.range.clone());
    }
}

/// Bytes of all windows' segments of this rank.
pub(crate) fn total_bytes() -> usize {
    lock(&WINDOWS).iter().map(|w| w.segments[w.me].1).sum()
}

/// Frees every window, in creation order (collective over each window's communicator, so
/// every rank calls this at the same point: before `MPI_Finalize`). Tensors still using a
/// window first move their elements into private memory; the ranks then agree (one all-reduce
/// per window) that every rank detached them all, and only then free the window. A window
/// some rank could not detach (an allocation failure) stays on every rank, and MPI unmaps it
/// at exit, instead of one rank leaving its peers waiting in `MPI_Win_free`.
pub(crate) fn free_all() {
    use mpi::collective::SystemOperation;
    use mpi::traits::CommunicatorCollectives;
    let windows = std::mem::take(&mut *lock(&WINDOWS));
    for w in windows {
        let detached = free_ok(&w);
        let Some(comm) = lock(&w.comm).take() else {
            continue;
        };
        let mut all = 0u8;
        comm.all_reduce_into(&u8::from(detached), &mut all, SystemOperation::min());
        if all == 1 {
            let mut win = lock(&w.win);
            // SAFETY: every rank detached every storage over this window (agreed just
            // above), so nothing reads or writes it any more; the window is live, and freed
            // once (it left `WINDOWS`).
            unsafe {
                ffi::MPI_Win_unlock_all(*win);
                ffi::MPI_Win_free(&mut *win);
            }
        }
        drop(comm);
    }
}

/// Whether every storage over `w` moved into private memory (test hook:
/// `TESSERA_DIST_TEST_DETACH_FAIL=<rank>` makes that rank fail, as an allocation failure would).
fn free_ok(w: &Window) -> bool {
    let fail = std::env::var("TESSERA_DIST_TEST_DETACH_FAIL").ok();
    if fail.is_some_and(|r| r.parse() == Ok(w.me)) {
        return false;
    }
    let users: Vec<_> = lock(&w.users).drain(..).collect();
    users
        .iter()
        .filter_map(Weak::upgrade)
        .all(|s| s.detach_external().is_ok())
}
