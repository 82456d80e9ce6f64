//! The MPI backend (docs/design.md D7, D9; cargo feature `mpi`): [`MpiComm`] implements
//! [`Communicator`] over the `mpi` crate (0.8.2) and the system's Open MPI.
//!
//! D9: `mpi` 0.8.2 has varcount all-gather and all-to-all, all-reduce and communicator
//! split; the varcount reduce-scatter is the raw `MPI_Reduce_scatter` through its `ffi`
//! module. It has no f16/bf16 or bool datatypes: those are staged through f32 and u8
//! (`all_to_all_views` moves bytes, so any dtype as is). It has no `MPI_Alltoallw` either:
//! `mpi_views` calls it through `ffi` with derived datatypes describing strided views, and
//! `cma` moves large blocks between processes of one host with `process_vm_writev`. Counts
//! above `i32::MAX` elements are an error (not chunked yet). MPI cannot detect an SPMD
//! mismatch in general: a mismatched program may hang or abort under `mpirun` (which then
//! stops every rank).

use std::sync::Arc;

use mpi::collective::SystemOperation;
use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator as _, CommunicatorCollectives, Root};
use mpi::Threading;
use tessera::{DType, Element, Tensor};

use crate::comm::{check_views, Comm, Communicator};
use crate::error::{DistError, Result};
use crate::mpi_views;
use crate::sbp::PartialOp;

/// Dispatch over the dtypes MPI has datatypes for (the others are staged first).
macro_rules! with_mpi_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            d => Err(DistError::Comm(format!(
                "dtype {d} must be staged before MPI"
            ))),
        }
    };
}

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

    /// Whether `all_to_all_views` on the world communicator moves large blocks by
    /// cross-memory attach (every rank on this Linux host, peers' memory writable, not turned
    /// off with `TESSERA_DIST_CMA=0`). Collective on first use: every rank must call it.
    pub fn cross_memory_attach(&self) -> bool {
        self.world.cma_peers().is_some()
    }
}

/// A [`Communicator`] over an MPI communicator.
pub struct MpiComm {
    /// Freed on drop unless MPI is finalised already (freeing then would abort the job).
    comm: std::mem::ManuallyDrop<SimpleCommunicator>,
    /// Whether the ranks exchange blocks by cross-memory attach ([`crate::cma`]), probed by
    /// the first `all_to_all_views`.
    #[cfg(target_os = "linux")]
    cma: std::sync::OnceLock<Option<crate::cma::CmaPeers>>,
}

impl MpiComm {
    /// Wraps a duplicate of `comm` (collective), so the point-to-point messages of
    /// `all_to_all_views` never meet the program's own traffic.
    fn new(comm: SimpleCommunicator) -> MpiComm {
        MpiComm {
            comm: std::mem::ManuallyDrop::new(comm.duplicate()),
            #[cfg(target_os = "linux")]
            cma: std::sync::OnceLock::new(),
        }
    }
}

impl MpiComm {
    /// The peers for cross-memory attach, probed on first use (collective then).
    #[cfg(target_os = "linux")]
    fn cma_peers(&self) -> Option<&crate::cma::CmaPeers> {
        self.cma
            .get_or_init(|| crate::cma::CmaPeers::probe(&self.comm))
            .as_ref()
    }

    #[cfg(not(target_os = "linux"))]
    fn cma_peers(&self) -> Option<&()> {
        None
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

pub(crate) fn count(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        DistError::Comm(format!(
            "{n} elements exceed MPI's i32 counts (not chunked yet)"
        ))
    })
}

fn counts_displs(counts: &[usize]) -> Result<(Vec<i32>, Vec<i32>)> {
    let c = counts
        .iter()
        .map(|&n| count(n))
        .collect::<Result<Vec<_>>>()?;
    let mut d = Vec::with_capacity(c.len());
    let mut at = 0usize;
    for &n in counts {
        d.push(count(at)?);
        at += n;
    }
    count(at)?;
    Ok((c, d))
}

/// The dtype MPI moves `d` as.
fn wire(d: DType) -> DType {
    match d {
        DType::Bool => DType::U8,
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

fn op(o: PartialOp) -> SystemOperation {
    match o {
        PartialOp::Sum => SystemOperation::sum(),
        PartialOp::Max => SystemOperation::max(),
        PartialOp::Min => SystemOperation::min(),
    }
}

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
                if code != 0 {
                    return Err(DistError::Comm(format!("MPI_Reduce_scatter returned {code}")));
                }
                Ok(())
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

    fn prefers_shared_outputs(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.cma_peers().is_some_and(|p| p.shared_outputs);
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Blocks of at least 128 KiB between ranks on one Linux host are written straight into
    /// the receiver's output, through a mapping of its shared memory file or with
    /// `process_vm_writev` (module `cma`; the own block is copied in the same sweep); the others go
    /// through one `MPI_Alltoallw` with a derived datatype per block (module `mpi_views`), so
    /// MPI reads and writes the strided blocks in place. Both sides of a block know its size,
    /// so they agree on the path without talking.
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        let (p, me) = (self.size(), self.rank());
        let checked = check_views(send, recv, p);
        // Under CMA every rank opens the exchange with one all-reduce; a rank whose own
        // arguments are wrong still takes part, so its peers get an error instead of waiting.
        #[cfg(target_os = "linux")]
        if let (Err(_), Some(_)) = (&checked, self.cma_peers()) {
            crate::cma::refuse(&self.comm);
        }
        let Some(dtype) = checked? else {
            return Ok(());
        };
        // The own block is checked and copied after the collectives (which skip it), so a
        // failure here is this rank's error, never a peer left waiting in a collective.
        let own_block = || -> Result<()> {
            if send[me].shape() != recv[me].shape() {
                return Err(DistError::Mismatch(format!(
                    "all_to_all_views: rank {me} sends shape {:?} to itself, expects {:?}",
                    send[me].shape(),
                    recv[me].shape()
                )));
            }
            Ok(recv[me].assign(&send[me])?)
        };
        #[cfg(target_os = "linux")]
        if let Some(peers) = self.cma_peers() {
            // Split the blocks by size: `small` views for MPI, `big` ones for CMA, the
            // other kind emptied on each side.
            let empty = Tensor::empty(&[0], dtype)?;
            let big = |t: &Tensor| t.numel() * dtype.itemsize() >= peers.min_bytes;
            // With CMA blocks, the exchange copies the own block in its sweep (a local choice).
            let any_big = (0..p).any(|r| r != me && (big(&send[r]) || big(&recv[r])));
            let own = any_big
                && send[me].shape() == recv[me].shape()
                && crate::cma::copies_own(&send[me], &recv[me]);
            // (The own block, `me`, stays in both: MPI_Alltoallw skips it, CMA may copy it.)
            let part = |views: &[Tensor], want_big: bool| -> Vec<Tensor> {
                let keep = |r: usize, t: &Tensor| r == me || big(t) == want_big;
                let pick = |(r, t): (usize, &Tensor)| {
                    if keep(r, t) {
                        t.clone()
                    } else {
                        empty.clone()
                    }
                };
                views.iter().enumerate().map(pick).collect()
            };
            let (small_send, small_recv) = (part(send, false), part(recv, false));
            let live = |views: &[Tensor]| (0..p).any(|r| r != me && views[r].numel() > 0);
            let small_here = live(&small_send) || live(&small_recv);
            crate::cma::exchange(
                &self.comm,
                peers,
                &part(send, true),
                &part(recv, true),
                own,
                small_here,
                || mpi_views::alltoallw(&self.comm, &small_send, &small_recv),
            )?;
            return if own { Ok(()) } else { own_block() };
        }
        mpi_views::alltoallw(&self.comm, send, recv)?;
        own_block()
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
