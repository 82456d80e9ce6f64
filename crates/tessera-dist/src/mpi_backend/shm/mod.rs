//! The MPI backend's single-host path: when every rank of a communicator runs on this host,
//! the outputs of large collectives live in MPI-3 shared-memory windows (module `window`), and
//! each rank writes its data straight into its peers' outputs with the core's copy engine: one
//! copy per element, where MPI's collectives copy through 32 KiB fragments (why this pays:
//! docs/performance.md, "MPI boxing").
//!
//! Every collective here follows one protocol, so that a failure on one rank is an error on
//! every rank (docs/design.md D7):
//! 1. each rank leases its output (or staging space) in a window of the communicator;
//! 2. one all-gather of a small record per rank (flags: failed, no room, may not grow;
//!    where the lease is; a digest of the arguments) tells everyone where every output
//!    lives; when some rank has no room, every rank allocates a new window (collectively)
//!    and the round repeats;
//! 3. each rank copies into the peers' outputs, then one all-reduce of failure flags, between
//!    `MPI_Win_sync` calls, closes the collective: after it every output is complete.
//!
//! Which path a collective takes is agreed before it opens (module `agree`: every rank must
//! want it), and the caller has checked the arguments on every rank by then. `TESSERA_DIST_SHM=0` on any rank turns the
//! path off; `TESSERA_DIST_SHM_MIN_BYTES` sets the threshold and `TESSERA_DIST_SHM_MAX_BYTES`
//! the cap on each rank's window memory.

mod window;

use std::sync::{Arc, Mutex};

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives};
use tessera::index::IndexSpec;
use tessera::storage::STORAGE_ALIGN as ALIGN;
use tessera::{DType, Tensor};

use crate::comm::{check_axis_counts, combine, combine_op, narrow, offsets, with_dim, AxisCounts};
use crate::error::{DistError, Result};
use crate::sbp::{balanced_counts, PartialOp};
use window::{Lease, Window};

pub(crate) use window::{fail_next_window, free_all};

/// Collectives whose largest output has at least this many bytes take the shared path.
pub(crate) const SHM_MIN_BYTES: usize = 256 << 10;
/// Default cap on the bytes of window segments one rank holds.
pub(crate) const SHM_MAX_BYTES: usize = 1 << 30;
/// Smallest segment a rank asks for when it needs a new window (rounded up to 2 MiB).
const MIN_SEGMENT: usize = 32 << 20;

/// Flags of the opening record: this rank failed; it has no room; it may not grow.
const FAILED: u64 = 1;
const LACK: u64 = 2;
const NO_GROW: u64 = 4;
/// Words of the opening record: flags, window index, offset, argument digest.
const RECORD: usize = 4;

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The single-host path of one communicator: its windows and limits.
pub(crate) struct Shm {
    /// Collectives whose largest output has at least this many bytes use the path.
    pub min_bytes: usize,
    max_bytes: usize,
    /// This communicator's windows, in creation order (the same on every rank).
    windows: Mutex<Vec<Arc<Window>>>,
}

/// Where every rank's output of one collective lives.
struct Placed {
    /// Per rank: its window and offset (`None`: it needs no bytes).
    at: Vec<Option<(Arc<Window>, usize)>>,
    /// This rank's lease.
    mine: Option<Lease>,
}

impl Placed {
    /// A tensor of `shape` over `rank`'s output (this rank's own: [`Placed::own`]).
    fn peer(&self, rank: usize, shape: &[usize], dtype: DType) -> Result<Tensor> {
        match &self.at[rank] {
            Some((w, offset)) => w.peer_tensor(rank, *offset, shape, dtype),
            None => Err(DistError::Comm(format!("rank {rank} has no output"))),
        }
    }

    /// This rank's output as a tensor of `shape` (keeping the lease while it lives).
    fn own(&mut self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        match self.mine.take() {
            Some(lease) => lease.into_tensor(shape, dtype),
            None => Ok(Tensor::empty(shape, dtype)?),
        }
    }
}

/// A digest of the words that every rank must pass alike (FNV-1a).
fn digest(words: impl IntoIterator<Item = usize>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, w| {
        (h ^ w as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The bytes of a tensor of `shape` (saturating: a size past memory never fits a lease, and
/// the callers have checked that their outputs can exist).
fn bytes(shape: &[usize], dtype: DType) -> usize {
    shape
        .iter()
        .fold(dtype.itemsize(), |a, &d| a.saturating_mul(d))
}

fn another_rank_failed(what: &str) -> DistError {
    DistError::Comm(format!("{what}: another rank failed"))
}

impl Shm {
    /// Collective over `comm`: the path when every rank runs on this host, there are at least
    /// two, and no rank turned it off.
    pub fn probe(comm: &SimpleCommunicator) -> Option<Shm> {
        let p = comm.size();
        let same_host = comm.split_shared(0).size() == p;
        let enabled = std::env::var("TESSERA_DIST_SHM").map_or(true, |v| v != "0");
        let mut ok = 0u8;
        comm.all_reduce_into(
            &u8::from(same_host && enabled && p > 1),
            &mut ok,
            SystemOperation::min(),
        );
        let mine = env_usize("TESSERA_DIST_SHM_MIN_BYTES").unwrap_or(SHM_MIN_BYTES) as u64;
        let mut min_bytes = 0u64;
        comm.all_reduce_into(&mine, &mut min_bytes, SystemOperation::max());
        (ok == 1).then(|| Shm {
            min_bytes: usize::try_from(min_bytes).unwrap_or(usize::MAX),
            max_bytes: env_usize("TESSERA_DIST_SHM_MAX_BYTES").unwrap_or(SHM_MAX_BYTES),
            windows: Mutex::new(Vec::new()),
        })
    }

    fn windows(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Window>>> {
        self.windows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first window of this communicator with room for `need` bytes.
    fn lease(&self, need: usize) -> Option<(usize, Lease)> {
        let windows = self.windows();
        windows
            .iter()
            .enumerate()
            .find_map(|(i, w)| w.lease(need).map(|l| (i, l)))
    }

    /// Steps 1 and 2 of the protocol: leases `need` bytes on this rank and learns where every
    /// rank's lease is. `Ok(None)`: some rank may not grow its windows, so every rank takes
    /// the MPI path. An error on every rank when one rank's `local` check failed or the
    /// ranks' argument digests differ.
    fn open(
        &self,
        comm: &SimpleCommunicator,
        what: &str,
        need: usize,
        dtype: DType,
        args: u64,
        local: Result<()>,
    ) -> Result<Option<Placed>> {
        let p = comm.size() as usize;
        for _round in 0..2 {
            let mine = if need > 0 { self.lease(need) } else { None };
            if let (Some((_, l)), DType::Bool) = (&mine, dtype) {
                l.zero();
            }
            let mut flags = if local.is_err() { FAILED } else { 0 };
            // Room for the lease after the segment's first aligned address.
            let grow = (need.next_multiple_of(ALIGN) + ALIGN)
                .max(MIN_SEGMENT)
                .next_multiple_of(2 << 20);
            if need > 0 && mine.is_none() {
                flags |= LACK;
                if window::total_bytes() + grow > self.max_bytes {
                    flags |= NO_GROW;
                }
            }
            let (index, offset) = mine
                .as_ref()
                .map_or((u64::MAX, 0), |(i, l)| (*i as u64, l.offset() as u64));
            let record = [flags, index, offset, args];
            let mut all = vec![0u64; RECORD * p];
            comm.all_gather_into(&record[..], &mut all[..]);
            let all: Vec<&[u64]> = all.chunks(RECORD).collect();
            local.as_ref().map_err(Clone::clone)?;
            if all.iter().any(|r| r[0] & FAILED != 0) {
                return Err(another_rank_failed(what));
            }
            if let Some(r) = all.iter().position(|r| r[3] != args) {
                return Err(DistError::Mismatch(format!(
                    "{what}: rank {r} passed other arguments than rank {}",
                    comm.rank()
                )));
            }
            if all.iter().any(|r| r[0] & NO_GROW != 0) {
                return Ok(None);
            }
            if all.iter().any(|r| r[0] & LACK != 0) {
                // Every rank allocates the new window; the ranks without room get a segment.
                drop(mine);
                let size = if flags & LACK != 0 { grow } else { 0 };
                let w = Window::allocate(comm, size)?;
                self.windows().push(w);
                continue;
            }
            let windows = self.windows();
            let at = all
                .iter()
                .map(|r| {
                    let w = usize::try_from(r[1]).ok().and_then(|i| windows.get(i));
                    w.map(|w| (w.clone(), r[2] as usize))
                })
                .collect();
            return Ok(Some(Placed {
                at,
                mine: mine.map(|(_, l)| l),
            }));
        }
        Ok(None)
    }

    /// Step 3: every rank's copies are done (an error on every rank if one failed).
    fn close(&self, comm: &SimpleCommunicator, what: &str, copied: Result<()>) -> Result<()> {
        let windows = self.windows().clone();
        let synced = windows.iter().try_for_each(|w| w.sync());
        let mut any = 0u8;
        let failed = u8::from(copied.is_err() || synced.is_err());
        comm.all_reduce_into(&failed, &mut any, SystemOperation::max());
        windows.iter().try_for_each(|w| w.sync())?;
        copied?;
        synced?;
        if any != 0 {
            return Err(another_rank_failed(what));
        }
        Ok(())
    }

    /// [`crate::Communicator::all_gather_axis`]: each rank writes its shard into every
    /// rank's output. `None`: the MPI path.
    pub fn all_gather_axis(
        &self,
        comm: &SimpleCommunicator,
        send: &Tensor,
        axis: usize,
        counts: &[usize],
    ) -> Result<Option<Tensor>> {
        let (p, me) = (comm.size() as usize, comm.rank() as usize);
        check_axis_counts("all_gather_axis", send, axis, counts, p)?;
        let dtype = send.dtype();
        let out_shape = with_dim(send.shape(), axis, counts.iter().sum());
        if p < 2 || bytes(&out_shape, dtype) < self.min_bytes {
            return Ok(None);
        }
        let what = "all_gather_axis";
        let local = if send.shape()[axis] == counts[me] {
            Ok(())
        } else {
            Err(DistError::Mismatch(format!(
                "{what}: rank {me} sends {} along axis {axis}, counts say {}",
                send.shape()[axis],
                counts[me]
            )))
        };
        let args = digest([&[1, dtype as usize, axis], counts, &out_shape[..]].concat());
        let need = bytes(&out_shape, dtype);
        let Some(mut placed) = self.open(comm, what, need, dtype, args, local)? else {
            return Ok(None);
        };
        // From here on a local failure goes into the closing all-reduce, never an early
        // return that would leave the peers waiting in it.
        let out = placed.own(&out_shape, dtype);
        let at = offsets(counts);
        // An empty shard writes nothing (and its peers may have no output to write into).
        let targets = if send.numel() == 0 { 0 } else { p };
        let copied = out.as_ref().map_err(Clone::clone).and_then(|out| {
            (1..=targets).map(|k| (me + k) % p).try_for_each(|r| {
                let dst = if r == me {
                    out.clone()
                } else {
                    placed.peer(r, &out_shape, dtype)?
                };
                Ok(narrow(&dst, axis, at[me]..at[me + 1])?.assign(send)?)
            })
        });
        self.close(comm, what, copied)?;
        out.map(Some)
    }

    /// [`crate::Communicator::reduce_scatter_axis`]: each rank writes its part of every
    /// peer's slice into a staging slot of that peer, then combines its own slice with the
    /// staged parts in rank order. `None`: the MPI path (also when `op` changes the dtype).
    pub fn reduce_scatter_axis(
        &self,
        comm: &SimpleCommunicator,
        send: &Tensor,
        axis: usize,
        counts: &[usize],
        op: PartialOp,
    ) -> Result<Option<Tensor>> {
        let (p, me) = (comm.size() as usize, comm.rank() as usize);
        check_axis_counts("reduce_scatter_axis", send, axis, counts, p)?;
        let dtype = send.dtype();
        let keeps = combine_op(op).result_dtype(dtype, dtype).ok() == Some(dtype);
        let shape = send.shape();
        let staging = |r: usize| [&[p][..], &with_dim(shape, axis, counts[r])].concat();
        let largest = (0..p).map(|r| bytes(&staging(r), dtype)).max().unwrap_or(0);
        if p < 2 || !keeps || largest < self.min_bytes {
            return Ok(None);
        }
        let what = "reduce_scatter_axis";
        let local = if shape[axis] == counts.iter().sum::<usize>() {
            Ok(())
        } else {
            Err(DistError::Mismatch(format!(
                "{what}: shape {shape:?} along axis {axis}, counts {counts:?}"
            )))
        };
        let op_code = op as usize;
        let args = digest([&[2, dtype as usize, axis, op_code], counts, shape].concat());
        let need = bytes(&staging(me), dtype);
        let Some(mut placed) = self.open(comm, what, need, dtype, args, local)? else {
            return Ok(None);
        };
        let staged = placed.own(&staging(me), dtype);
        let at = offsets(counts);
        let slot = |t: &Tensor, r: usize| -> Result<Tensor> {
            Ok(t.index(&[IndexSpec::Point(r as isize)])?)
        };
        let copied = staged.as_ref().map_err(Clone::clone).and_then(|_| {
            (1..p).map(|k| (me + k) % p).try_for_each(|r| {
                let part = narrow(send, axis, at[r]..at[r + 1])?;
                if part.numel() == 0 {
                    return Ok(());
                }
                Ok(slot(&placed.peer(r, &staging(r), dtype)?, me)?.assign(&part)?)
            })
        });
        self.close(comm, what, copied)?;
        let staged = staged?;
        let parts = (0..p)
            .map(|r| {
                if r == me {
                    narrow(send, axis, at[me]..at[me + 1])
                } else {
                    slot(&staged, r)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(combine(&parts, op)?))
    }

    /// [`crate::Communicator::all_reduce`] of a 1-D `send`: a reduce-scatter, then an
    /// all-gather of the reduced slices. `None`: the MPI path.
    pub fn all_reduce(
        &self,
        comm: &SimpleCommunicator,
        send: &Tensor,
        op: PartialOp,
    ) -> Result<Option<Tensor>> {
        let p = comm.size() as usize;
        if send.rank() != 1 || bytes(send.shape(), send.dtype()) < self.min_bytes {
            return Ok(None);
        }
        let counts = balanced_counts(send.numel(), p);
        let Some(mine) = self.reduce_scatter_axis(comm, send, 0, &counts, op)? else {
            return Ok(None);
        };
        // The same size decides, so this goes the shared path too.
        self.all_gather_axis(comm, &mine, 0, &counts)?
            .map(Some)
            .ok_or_else(|| DistError::Comm("all_reduce: the shared all-gather was refused".into()))
    }

    /// [`crate::Communicator::all_to_all_axis`]: each rank writes block s of its `send` into
    /// rank s's output. `None`: the MPI path.
    pub fn all_to_all_axis(
        &self,
        comm: &SimpleCommunicator,
        send: &Tensor,
        split: AxisCounts,
        concat: AxisCounts,
        out_shape: &[usize],
    ) -> Result<Option<Tensor>> {
        let (p, me) = (comm.size() as usize, comm.rank() as usize);
        let ((sa, sc), (ca, cc)) = (split, concat);
        let dtype = send.dtype();
        let shape_of = |r: usize| with_dim(out_shape, sa, sc[r]);
        let largest = (0..p)
            .map(|r| bytes(&shape_of(r), dtype))
            .max()
            .unwrap_or(0);
        if p < 2 || largest < self.min_bytes {
            return Ok(None);
        }
        let what = "all_to_all_axis";
        let common = with_dim(&with_dim(out_shape, sa, 0), ca, 0);
        let args = digest([&[3, dtype as usize, sa, ca], sc, cc, &common[..]].concat());
        let need = bytes(out_shape, dtype);
        let Some(mut placed) = self.open(comm, what, need, dtype, args, Ok(()))? else {
            return Ok(None);
        };
        let out = placed.own(out_shape, dtype);
        let (so, co) = (offsets(sc), offsets(cc));
        let copied = out.as_ref().map_err(Clone::clone).and_then(|out| {
            (1..=p).map(|k| (me + k) % p).try_for_each(|r| {
                let src = narrow(send, sa, so[r]..so[r + 1])?;
                if src.numel() == 0 {
                    return Ok(());
                }
                let dst = if r == me {
                    out.clone()
                } else {
                    placed.peer(r, &shape_of(r), dtype)?
                };
                Ok(narrow(&dst, ca, co[me]..co[me + 1])?.assign(&src)?)
            })
        });
        self.close(comm, what, copied)?;
        out.map(Some)
    }
}
