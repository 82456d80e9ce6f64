//! The MPI backend (docs/design.md D7, D9; cargo feature `mpi`): [`MpiComm`] implements
//! [`Communicator`] over the `mpi` crate (0.8.2) and the system's Open MPI.
//!
//! D9: `mpi` 0.8.2 has varcount all-gather and all-to-all, all-reduce and communicator
//! split; the varcount reduce-scatter is the raw `MPI_Reduce_scatter` through its `ffi`
//! module. It has no f16/bf16 or bool datatypes: those are staged through f32 and u8
//! (module `wire`; `all_to_all_views` moves bytes, so any dtype as is). It has no
//! `MPI_Alltoallw` either: module `datatypes` calls it through `ffi` with derived datatypes
//! describing strided views. Counts above `i32::MAX` elements are an error (not chunked yet).
//! MPI cannot detect an SPMD mismatch in general: a mismatched program may hang or abort
//! under `mpirun` (which then stops every rank).
//!
//! When every rank runs on one host, large collectives take the single-host path (module
//! `shm`): outputs in MPI-3 shared-memory windows that peers write into directly.
//!
//! Modules, lowest first: `wire` (counts, dtypes on the wire, return codes), `datatypes`
//! (views as derived datatypes), `shm` (the single-host path), and this one, which picks the
//! path for each collective.

mod datatypes;
mod shm;
mod wire;

use std::sync::Arc;

use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator as _, CommunicatorCollectives, Root};
use mpi::Threading;
use tessera::{Element, Tensor};

use crate::comm::{
    all_gather_axis_packed, all_to_all_axis_views, all_to_all_shape, check_views,
    reduce_scatter_axis_packed, Comm, Communicator,
};
use crate::error::{DistError, Result};
use crate::sbp::PartialOp;
use shm::Shm;
use wire::{check, count, counts_displs, op, wire, with_mpi_dtype};

/// The MPI environment of this process: keep it alive until MPI is no longer used
/// (dropping it finalises MPI).
pub struct MpiUniverse {
    // Fields drop in order: the world communicator is freed before `MPI_Finalize`.
    world: Arc<MpiComm>,
    _universe: Universe,
}

impl MpiUniverse {
    /// Initialises MPI (once per process; a second call is an error).
    pub fn init() -> Result<MpiUniverse> {
        let (universe, _) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| DistError::Comm("MPI is already initialised".into()))?;
        share_cores(&universe.world());
        let world = Arc::new(MpiComm::new(universe.world()));
        Ok(MpiUniverse {
            _universe: universe,
            world,
        })
    }

    /// The communicator of every process (`MPI_COMM_WORLD`).
    pub fn world(&self) -> Comm {
        self.world.clone()
    }

    /// Whether large collectives on the world communicator take the single-host path
    /// (every rank on this host, not turned off with `TESSERA_DIST_SHM=0`). Collective on
    /// first use: every rank must call it.
    pub fn shared_memory(&self) -> bool {
        self.world.shm().is_some()
    }
}

impl Drop for MpiUniverse {
    fn drop(&mut self) {
        // Before `MPI_Finalize` (the fields drop after this): Open MPI unmaps the shared
        // windows left at finalize, so they are freed here, collectively, after the tensors
        // still using them moved to private memory.
        shm::free_all();
    }
}

/// Sizes the kernels' thread pool (rayon's global pool) to this process's share of the
/// host's cores, `cores / ranks on this host` (at least 1), unless `RAYON_NUM_THREADS` is set
/// or the pool already runs. With a pool of every core in every rank, p ranks on one host run
/// p × cores threads that compete with the ranks' own threads, which wait in MPI calls by
/// spinning (PyTorch's launcher sets one OpenMP thread per process for the same reason).
/// Collective over `world` (every rank calls it from [`MpiUniverse::init`]).
fn share_cores(world: &SimpleCommunicator) {
    let here = usize::try_from(world.split_shared(0).size())
        .unwrap_or(1)
        .max(1);
    if std::env::var_os("RAYON_NUM_THREADS").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // An error means the pool already runs (the program used it before MPI): keep it.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads((cores / here).max(1))
        .build_global();
}

/// A [`Communicator`] over an MPI communicator.
pub struct MpiComm {
    /// Freed on drop unless MPI is finalised already (freeing then would abort the job).
    comm: std::mem::ManuallyDrop<SimpleCommunicator>,
    /// The single-host path, probed by the first collective that may use it.
    shm: std::sync::OnceLock<Option<Shm>>,
}

impl MpiComm {
    /// Wraps a duplicate of `comm` (collective), so the point-to-point messages of
    /// `all_to_all_views` never meet the program's own traffic.
    fn new(comm: SimpleCommunicator) -> MpiComm {
        MpiComm {
            comm: std::mem::ManuallyDrop::new(comm.duplicate()),
            shm: std::sync::OnceLock::new(),
        }
    }
}

impl MpiComm {
    /// The single-host path, probed on first use (collective then).
    fn shm(&self) -> Option<&Shm> {
        self.shm.get_or_init(|| Shm::probe(&self.comm)).as_ref()
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        // A handle that outlives the `MpiUniverse` (an `Arc` clone kept past it) is leaked:
        // `MPI_Comm_free` after `MPI_Finalize` aborts the job, and the process is ending.
        if !mpi::environment::is_finalized() {
            // SAFETY: `comm` is dropped exactly once, here, and never used after.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.comm) };
        }
    }
}

// SAFETY: the communicator handle is an immutable identifier; MPI is initialised with
// `MPI_THREAD_MULTIPLE`, so calls from any thread are allowed. SPMD use (every rank calling
// the same collectives in the same order) is the caller's contract, as with MPI itself.
unsafe impl Send for MpiComm {}
// SAFETY: as above; `&MpiComm` only issues MPI calls, which are thread-safe under
// `MPI_THREAD_MULTIPLE`.
unsafe impl Sync for MpiComm {}

/// Runs `f` on the contiguous elements of `send` (staged to its wire dtype) and a new output
/// of `out_len` elements, and returns the output in `send`'s dtype.
fn with_buffers(
    send: &Tensor,
    out_len: usize,
    f: &dyn Fn(&Tensor, &Tensor) -> Result<()>,
) -> Result<Tensor> {
    let orig = send.dtype();
    let w = wire(orig);
    let send = if w == orig {
        send.contiguous()?
    } else {
        send.astype(w)?
    };
    let out = Tensor::empty(&[out_len], w)?;
    f(&send, &out)?;
    Ok(if w == orig { out } else { out.astype(orig)? })
}

/// The elements of a contiguous 1-D tensor.
fn slice_of<T: Element>(
    t: &Tensor,
) -> Result<(
    impl std::ops::Deref<Target = [T]> + '_,
    std::ops::Range<usize>,
)> {
    let off = t.layout().offset();
    Ok((t.storage()?.read::<T>()?, off..off + t.numel()))
}

impl MpiComm {
    fn check_len(&self, what: &str, t: &Tensor, want: usize) -> Result<()> {
        if t.numel() != want || t.rank() != 1 {
            return Err(DistError::Mismatch(format!(
                "{what}: buffer of shape {:?}, counts say {want} elements",
                t.shape()
            )));
        }
        Ok(())
    }

    fn check_counts(&self, counts: &[usize]) -> Result<()> {
        if counts.len() != self.size() {
            return Err(DistError::Mismatch(format!(
                "{} counts for a group of {} ranks",
                counts.len(),
                self.size()
            )));
        }
        Ok(())
    }
}

impl Communicator for MpiComm {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    fn size(&self) -> usize {
        self.comm.size() as usize
    }

    fn barrier(&self) -> Result<()> {
        self.comm.barrier();
        Ok(())
    }

    fn broadcast(&self, buf: &Tensor, root: usize) -> Result<Tensor> {
        if root >= self.size() {
            return Err(DistError::Placement(format!(
                "broadcast root {root} of {}",
                self.size()
            )));
        }
        with_buffers(buf, buf.numel(), &|s, o| {
            with_mpi_dtype!(s.dtype(), T => {
                o.assign(s)?;
                let mut out = o.storage()?.write::<T>()?;
                self.comm.process_at_rank(root as i32).broadcast_into(&mut out[..]);
                Ok(())
            })
        })
    }

    fn all_gather_v(&self, send: &Tensor, counts: &[usize]) -> Result<Tensor> {
        self.check_counts(counts)?;
        self.check_len("all_gather_v", send, counts[self.rank()])?;
        let (c, d) = counts_displs(counts)?;
        with_buffers(send, counts.iter().sum(), &|s, o| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut out = o.storage()?.write::<T>()?;
                let mut part = PartitionMut::new(&mut out[..], &c[..], &d[..]);
                self.comm.all_gather_varcount_into(&src[r], &mut part);
                Ok(())
            })
        })
    }

    fn all_reduce(&self, send: &Tensor, o: PartialOp) -> Result<Tensor> {
        if let Some(shm) = self.shm() {
            if let Some(out) = shm.all_reduce(&self.comm, send, o)? {
                return Ok(out);
            }
        }
        count(send.numel())?;
        with_buffers(send, send.numel(), &|s, out| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut dst = out.storage()?.write::<T>()?;
                self.comm.all_reduce_into(&src[r], &mut dst[..], op(o));
                Ok(())
            })
        })
    }

    fn reduce_scatter_v(&self, send: &Tensor, counts: &[usize], o: PartialOp) -> Result<Tensor> {
        self.check_counts(counts)?;
        self.check_len("reduce_scatter_v", send, counts.iter().sum())?;
        let (c, _) = counts_displs(counts)?;
        with_buffers(send, counts[self.rank()], &|s, out| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut dst = out.storage()?.write::<T>()?;
                let src = &src[r];
                // SAFETY: `src` holds sum(counts) elements of T and `dst` counts[rank]
                // elements, both live for the call; `c` has one i32 count per rank; the
                // datatype, op and communicator handles come from live `mpi` objects.
                let code = unsafe {
                    mpi::ffi::MPI_Reduce_scatter(
                        src.as_ptr().cast(),
                        dst.as_mut_ptr().cast(),
                        c.as_ptr(),
                        T::equivalent_datatype().as_raw(),
                        op(o).as_raw(),
                        self.comm.as_raw(),
                    )
                };
                check("MPI_Reduce_scatter", code)
            })
        })
    }

    fn all_to_all_v(
        &self,
        send: &Tensor,
        send_counts: &[usize],
        recv_counts: &[usize],
    ) -> Result<Tensor> {
        self.check_counts(send_counts)?;
        self.check_counts(recv_counts)?;
        self.check_len("all_to_all_v", send, send_counts.iter().sum())?;
        let (sc, sd) = counts_displs(send_counts)?;
        let (rc, rd) = counts_displs(recv_counts)?;
        with_buffers(send, recv_counts.iter().sum(), &|s, out| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut dst = out.storage()?.write::<T>()?;
                let sp = Partition::new(&src[r], &sc[..], &sd[..]);
                let mut rp = PartitionMut::new(&mut dst[..], &rc[..], &rd[..]);
                self.comm.all_to_all_varcount_into(&sp, &mut rp);
                Ok(())
            })
        })
    }

    fn all_gather_axis(&self, send: &Tensor, axis: usize, counts: &[usize]) -> Result<Tensor> {
        if let Some(shm) = self.shm() {
            if let Some(out) = shm.all_gather_axis(&self.comm, send, axis, counts)? {
                return Ok(out);
            }
        }
        all_gather_axis_packed(self, send, axis, counts)
    }

    fn reduce_scatter_axis(
        &self,
        send: &Tensor,
        axis: usize,
        counts: &[usize],
        o: PartialOp,
    ) -> Result<Tensor> {
        if let Some(shm) = self.shm() {
            if let Some(out) = shm.reduce_scatter_axis(&self.comm, send, axis, counts, o)? {
                return Ok(out);
            }
        }
        reduce_scatter_axis_packed(self, send, axis, counts, o)
    }

    fn all_to_all_axis(
        &self,
        send: &Tensor,
        split_axis: usize,
        split_counts: &[usize],
        concat_axis: usize,
        concat_counts: &[usize],
    ) -> Result<Tensor> {
        let (split, concat) = ((split_axis, split_counts), (concat_axis, concat_counts));
        let shape = all_to_all_shape(self, send, split, concat)?;
        if let Some(shm) = self.shm() {
            if let Some(out) = shm.all_to_all_axis(&self.comm, send, split, concat, &shape)? {
                return Ok(out);
            }
        }
        all_to_all_axis_views(self, send, split, concat, &shape)
    }

    /// One `MPI_Alltoallw` with a derived datatype per block (module `datatypes`), so MPI
    /// reads and writes the strided blocks in place; the own block is copied locally.
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        let me = self.rank();
        if check_views(send, recv, self.size())?.is_none() {
            return Ok(());
        }
        datatypes::alltoallw(&self.comm, send, recv)?;
        // The own block is checked and copied after the collective, so a failure here is
        // this rank's error, never a peer left waiting.
        if send[me].shape() != recv[me].shape() {
            return Err(DistError::Mismatch(format!(
                "all_to_all_views: rank {me} sends shape {:?} to itself, expects {:?}",
                send[me].shape(),
                recv[me].shape()
            )));
        }
        Ok(recv[me].assign(&send[me])?)
    }

    fn split(&self, color: usize, key: usize) -> Result<Comm> {
        let color = Color::with_value(count(color)?);
        let comm = self
            .comm
            .split_by_color_with_key(color, count(key)?)
            .ok_or_else(|| DistError::Comm("MPI_Comm_split gave no communicator".into()))?;
        Ok(Arc::new(MpiComm::new(comm)))
    }
}
