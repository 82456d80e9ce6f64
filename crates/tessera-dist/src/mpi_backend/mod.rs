//! The MPI backend (docs/design.md D7, D9; cargo feature `mpi`): [`MpiComm`] implements
//! [`Communicator`] over the `mpi` crate (0.8.2) and the system's Open MPI.
//!
//! D9: `mpi` 0.8.2 has varcount all-gather and all-to-all, all-reduce and communicator
//! split; the varcount reduce-scatter is the raw `MPI_Reduce_scatter` through its `ffi`
//! module. It has no f16/bf16 or bool datatypes: those are staged through f32 and u8
//! (module `wire`; `all_to_all_views` moves bytes, so any dtype as is). It has no
//! `MPI_Alltoallw` either: module `datatypes` calls it through `ffi` with derived datatypes
//! describing strided views. Counts above `i32::MAX` elements are an error (not chunked yet).
//! MPI cannot detect an SPMD mismatch in general; the opening agreement (below) catches the
//! mismatches of one collective's arguments, not collectives called in different orders.
//!
//! When every rank runs on one host, large collectives take the single-host path (module
//! `shm`): outputs in MPI-3 shared-memory windows that peers write into directly.
//!
//! Every collective opens with one small all-gather (module `agree`) in which the ranks
//! learn each other's local failures, dtypes, argument digests, per-pair sizes and path
//! choices before any data moves, so a rank whose arguments are refused locally, or that
//! passes other arguments or dtypes than its peers, gets an error on every rank (D7).
//!
//! Modules, lowest first: `wire` (counts, dtypes on the wire, return codes), `serial` (the
//! thread level MPI provides), `agree` (the opening agreement), `datatypes` (views as derived
//! datatypes), `shm` (the single-host path), `universe` (initialisation and finalisation), and
//! this one, which picks the path for each collective.

mod agree;
mod datatypes;
mod serial;
mod shm;
mod stage;
mod universe;
mod wire;

use std::sync::Arc;

use mpi::datatype::{Equivalence, Partition, PartitionMut};
use mpi::raw::AsRaw;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator as _, CommunicatorCollectives, Root};
use tessera::{DType, Tensor};

use crate::comm::{
    all_gather_axis_packed, all_to_all_axis_blocks, all_to_all_shape, check_axis_counts,
    check_views, reduce_scatter_axis_packed, Comm, Communicator,
};
use crate::error::{DistError, Result};
use crate::sbp::PartialOp;
use agree::{agree, digest, pair_sum, Kind, Terms};
use datatypes::Exchange;
use shm::Shm;
use stage::{common_dims, nbytes, others, slice_of, status, terms, Staged};
use wire::{check, count, counts_displs, op, with_mpi_dtype};

pub use universe::{fail_next_window, MpiUniverse};

/// A [`Communicator`] over an MPI communicator.
pub struct MpiComm {
    /// Freed on drop unless MPI is finalised already (freeing then would abort the job).
    comm: std::mem::ManuallyDrop<SimpleCommunicator>,
    /// The single-host path, probed by the first collective that may use it.
    shm: std::sync::OnceLock<Option<Shm>>,
    /// This rank and the group's size (asked once, so `rank()` / `size()` call no MPI).
    rank: usize,
    size: usize,
}

impl MpiComm {
    /// Wraps a duplicate of `comm` (collective), so the point-to-point messages of
    /// `all_to_all_views` never meet the program's own traffic.
    pub(super) fn new(comm: SimpleCommunicator) -> MpiComm {
        let comm = comm.duplicate();
        MpiComm {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: std::mem::ManuallyDrop::new(comm),
            shm: std::sync::OnceLock::new(),
        }
    }
}

impl MpiComm {
    /// The single-host path, probed on first use (collective then).
    pub(super) fn shm(&self) -> Option<&Shm> {
        self.shm.get_or_init(|| Shm::probe(&self.comm)).as_ref()
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        // A handle that outlives the `MpiUniverse` (an `Arc` clone kept past it) is leaked:
        // `MPI_Comm_free` after `MPI_Finalize` aborts the job, and the process is ending.
        // A thread MPI does not allow (level `FUNNELED`) leaks it too.
        let Ok(_g) = serial::enter() else { return };
        if !mpi::environment::is_finalized() {
            // SAFETY: `comm` is dropped exactly once, here, and never used after.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.comm) };
        }
    }
}

// SAFETY: the communicator handle is an immutable identifier. Every MPI call through an
// `MpiComm` (and its drop) runs under `serial::enter`, which lets calls from any thread run
// concurrently only when MPI provided `MPI_THREAD_MULTIPLE`, serialises them under
// `MPI_THREAD_SERIALIZED`, and refuses calls from other threads than the initialising one
// under `FUNNELED` / `SINGLE`. SPMD use (every rank calling the same collectives in the same
// order) is the caller's contract, as with MPI itself.
unsafe impl Send for MpiComm {}
// SAFETY: as above; `&MpiComm` only issues MPI calls, each under `serial::enter`.
unsafe impl Sync for MpiComm {}

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

impl MpiComm {
    /// The MPI path of [`Communicator::all_reduce`]: stage, agree, `MPI_Allreduce`.
    fn all_reduce_mpi(&self, send: &Tensor, o: PartialOp) -> Result<Tensor> {
        let staged = Staged::new(send, send.numel());
        let t = terms(
            Kind::AllReduce,
            send.dtype(),
            digest([send.numel(), o as usize]),
            0,
        );
        agree(&self.comm, "all_reduce", &t, status(&staged))?;
        staged?.run(&|s, out| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut dst = out.storage()?.write::<T>()?;
                self.comm.all_reduce_into(&src[r], &mut dst[..], op(o));
                Ok(())
            })
        })
    }

    /// Opens an axis collective: the single-host path if it is on and every rank would take
    /// it (`wants`: this rank's choice), after agreeing on `local`, the dtype and `args`.
    /// `Ok(None)`: the MPI path.
    fn open_axis(
        &self,
        what: &str,
        kind: Kind,
        dtype: DType,
        args: u64,
        local: Result<()>,
        wants: &dyn Fn(&Shm) -> bool,
    ) -> Result<Option<&Shm>> {
        let shm = self.shm();
        let t = Terms {
            kind,
            dtype: Some(dtype),
            digest: args,
            pairs: 0,
            wants_shm: local.is_ok() && self.size > 1 && shm.is_some_and(wants),
        };
        Ok(agree(&self.comm, what, &t, local)?.then_some(shm).flatten())
    }

    /// [`Communicator::all_to_all_views`] with `pre` (a failure of the caller's preparation,
    /// turned into this rank's failure flag): agree on the local checks, the dtype and the
    /// per-pair shapes, then one `MPI_Alltoallw` (module `datatypes`); the own block is
    /// copied locally.
    fn exchange_views(&self, send: &[Tensor], recv: &[Tensor], pre: Result<()>) -> Result<()> {
        let (p, me) = (self.size, self.rank);
        let prepared = pre.and_then(|()| {
            check_views(send, recv, p)?;
            if send[me].shape() != recv[me].shape() {
                return Err(DistError::Mismatch(format!(
                    "all_to_all_views: rank {me} sends shape {:?} to itself, expects {:?}",
                    send[me].shape(),
                    recv[me].shape()
                )));
            }
            Exchange::prepare(me, send, recv)
        });
        let shapes = |v: &[Tensor]| -> Vec<u64> {
            v.iter()
                .map(|t| digest(t.shape().iter().copied()))
                .collect()
        };
        let t = Terms {
            kind: Kind::AllToAllViews,
            dtype: send.first().or(recv.first()).map(Tensor::dtype),
            digest: 0,
            pairs: pair_sum(me, &shapes(send), &shapes(recv)),
            wants_shm: false,
        };
        agree(&self.comm, "all_to_all_views", &t, status(&prepared))?;
        if let Some(x) = prepared? {
            x.run(&self.comm, me, recv)?;
            recv[me].assign(&send[me])?;
        }
        Ok(())
    }
}

/// Every method takes the process's MPI guard (`serial`) and, before any data moves, agrees
/// with the peers (`agree`): local checks and preparations that fail on one rank are an error
/// on every rank.
impl Communicator for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn barrier(&self) -> Result<()> {
        let _g = serial::enter()?;
        self.comm.barrier();
        Ok(())
    }

    fn broadcast(&self, buf: &Tensor, root: usize) -> Result<Tensor> {
        let _g = serial::enter()?;
        let staged = if root >= self.size {
            Err(DistError::Placement(format!(
                "broadcast root {root} of {}",
                self.size
            )))
        } else {
            Staged::new(buf, buf.numel())
        };
        let t = terms(Kind::Broadcast, buf.dtype(), digest([root, buf.numel()]), 0);
        agree(&self.comm, "broadcast", &t, status(&staged))?;
        staged?.run(&|s, o| {
            with_mpi_dtype!(s.dtype(), T => {
                o.assign(s)?;
                let mut out = o.storage()?.write::<T>()?;
                self.comm.process_at_rank(root as i32).broadcast_into(&mut out[..]);
                Ok(())
            })
        })
    }

    fn all_gather_v(&self, send: &Tensor, counts: &[usize]) -> Result<Tensor> {
        let _g = serial::enter()?;
        let prepared = (|| -> Result<_> {
            self.check_counts(counts)?;
            let cd = counts_displs(counts)?;
            self.check_len("all_gather_v", send, counts[self.rank])?;
            Ok((cd, Staged::new(send, counts.iter().sum())?))
        })();
        let t = terms(
            Kind::AllGatherV,
            send.dtype(),
            digest(counts.iter().copied()),
            0,
        );
        agree(&self.comm, "all_gather_v", &t, status(&prepared))?;
        let ((c, d), staged) = prepared?;
        staged.run(&|s, o| {
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
        let _g = serial::enter()?;
        if self.shm().is_some() {
            let args = digest([send.numel(), o as usize]);
            let wants =
                |shm: &Shm| send.rank() == 1 && nbytes(send.numel(), send.dtype()) >= shm.min_bytes;
            let local = count(send.numel()).map(drop);
            if let Some(shm) = self.open_axis(
                "all_reduce",
                Kind::AllReduce,
                send.dtype(),
                args,
                local,
                &wants,
            )? {
                if let Some(out) = shm.all_reduce(&self.comm, send, o)? {
                    return Ok(out);
                }
            }
        }
        self.all_reduce_mpi(send, o)
    }

    fn reduce_scatter_v(&self, send: &Tensor, counts: &[usize], o: PartialOp) -> Result<Tensor> {
        let _g = serial::enter()?;
        let prepared = (|| -> Result<_> {
            self.check_counts(counts)?;
            let (c, _) = counts_displs(counts)?;
            self.check_len("reduce_scatter_v", send, counts.iter().sum())?;
            Ok((c, Staged::new(send, counts[self.rank])?))
        })();
        let args = digest(counts.iter().copied().chain([o as usize]));
        let t = terms(Kind::ReduceScatterV, send.dtype(), args, 0);
        agree(&self.comm, "reduce_scatter_v", &t, status(&prepared))?;
        let (c, staged) = prepared?;
        staged.run(&|s, out| {
            with_mpi_dtype!(s.dtype(), T => {
                let (src, r) = slice_of::<T>(s)?;
                let mut dst = out.storage()?.write::<T>()?;
                let src = &src[r];
                // SAFETY: `src` holds sum(counts) elements of T and `dst` counts[rank]
                // elements, both live for the call; `c` has one i32 count per rank; the
                // datatype, op and communicator handles come from live `mpi` objects; every
                // rank agreed on the counts, the op and the dtype.
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
        let _g = serial::enter()?;
        let prepared = (|| -> Result<_> {
            self.check_counts(send_counts)?;
            self.check_counts(recv_counts)?;
            let s = counts_displs(send_counts)?;
            let r = counts_displs(recv_counts)?;
            self.check_len("all_to_all_v", send, send_counts.iter().sum())?;
            Ok((s, r, Staged::new(send, recv_counts.iter().sum())?))
        })();
        let as_u64 = |c: &[usize]| -> Vec<u64> { c.iter().map(|&n| n as u64).collect() };
        let pairs = pair_sum(self.rank, &as_u64(send_counts), &as_u64(recv_counts));
        let t = terms(Kind::AllToAllV, send.dtype(), 0, pairs);
        agree(&self.comm, "all_to_all_v", &t, status(&prepared))?;
        let ((sc, sd), (rc, rd), staged) = prepared?;
        staged.run(&|s, out| {
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
        let _g = serial::enter()?;
        let what = "all_gather_axis";
        let (p, me) = (self.size, self.rank);
        let local = check_axis_counts(what, send, axis, counts, p).and_then(|()| {
            if send.shape()[axis] == counts[me] {
                return Ok(());
            }
            Err(DistError::Mismatch(format!(
                "{what}: rank {me} sends {} along axis {axis}, counts say {}",
                send.shape()[axis],
                counts[me]
            )))
        });
        let shape = common_dims(send.shape(), &[axis]);
        let args = digest([&[axis, shape.len()], counts, &shape[..]].concat());
        let whole = counts.iter().fold(0usize, |a, &c| a.saturating_add(c));
        let out_elems = others(send.shape(), axis).saturating_mul(whole);
        let wants = |shm: &Shm| nbytes(out_elems, send.dtype()) >= shm.min_bytes;
        let path = self.open_axis(what, Kind::AllGatherAxis, send.dtype(), args, local, &wants)?;
        if let Some(shm) = path {
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
        let _g = serial::enter()?;
        let what = "reduce_scatter_axis";
        let shape = send.shape();
        let local = check_axis_counts(what, send, axis, counts, self.size).and_then(|()| {
            if shape[axis] == counts.iter().sum::<usize>() {
                return Ok(());
            }
            Err(DistError::Mismatch(format!(
                "{what}: shape {shape:?} along axis {axis}, counts {counts:?}"
            )))
        });
        let args = digest([&[axis, o as usize, shape.len()], counts, shape].concat());
        // The largest staging slot (p parts of the largest slice) decides, as in `shm`.
        let largest = counts.iter().max().copied().unwrap_or(0);
        let slot = others(shape, axis).saturating_mul(largest);
        let wants =
            |shm: &Shm| nbytes(slot.saturating_mul(self.size), send.dtype()) >= shm.min_bytes;
        let path = self.open_axis(
            what,
            Kind::ReduceScatterAxis,
            send.dtype(),
            args,
            local,
            &wants,
        )?;
        if let Some(shm) = path {
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
        let _g = serial::enter()?;
        let (split, concat) = ((split_axis, split_counts), (concat_axis, concat_counts));
        let shape = all_to_all_shape(self, send, split, concat);
        let common = common_dims(send.shape(), &[split_axis, concat_axis]);
        let (sa, ca) = (split_axis, concat_axis);
        let words = [
            &[sa, ca, common.len()],
            split_counts,
            concat_counts,
            &common[..],
        ];
        let args = digest(words.concat());
        // The largest output of any rank (its split count at the split axis) decides.
        let largest = split_counts.iter().max().copied().unwrap_or(0);
        let out_elems = shape
            .as_ref()
            .map_or(0, |s| others(s, sa).saturating_mul(largest));
        let wants = |shm: &Shm| nbytes(out_elems, send.dtype()) >= shm.min_bytes;
        let local = status(&shape);
        let path = self.open_axis(
            "all_to_all_axis",
            Kind::AllToAllAxis,
            send.dtype(),
            args,
            local,
            &wants,
        )?;
        let shape = shape?;
        if let Some(shm) = path {
            if let Some(out) = shm.all_to_all_axis(&self.comm, send, split, concat, &shape)? {
                return Ok(out);
            }
        }
        // `all_to_all_axis_views` with its preparation's failures folded into the agreement.
        match all_to_all_axis_blocks(send, split, concat, &shape) {
            Ok((out, sendv, recvv)) => {
                self.exchange_views(&sendv, &recvv, Ok(()))?;
                Ok(out)
            }
            Err(e) => self.exchange_views(&[], &[], Err(e.clone())).and(Err(e)),
        }
    }

    /// One `MPI_Alltoallw` with a derived datatype per block (module `datatypes`), so MPI
    /// reads and writes the strided blocks in place; the own block is copied locally.
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        let _g = serial::enter()?;
        self.exchange_views(send, recv, Ok(()))
    }

    fn split(&self, color: usize, key: usize) -> Result<Comm> {
        let _g = serial::enter()?;
        let args = count(color).and_then(|c| Ok((c, count(key)?)));
        let t = Terms {
            kind: Kind::Split,
            dtype: None,
            digest: 0,
            pairs: 0,
            wants_shm: false,
        };
        agree(&self.comm, "split", &t, status(&args))?;
        let (color, key) = args?;
        let comm = self
            .comm
            .split_by_color_with_key(Color::with_value(color), key)
            .ok_or_else(|| DistError::Comm("MPI_Comm_split gave no communicator".into()))?;
        Ok(Arc::new(MpiComm::new(comm)))
    }
}
