//! Single-copy exchange of large strided blocks between MPI ranks on one Linux host (docs/design.md
//! D9; feature `mpi`): in the MPI backend's [`crate::Communicator::all_to_all_views`], each
//! sender writes a block straight from its tensor into the receiver's output with
//! `process_vm_writev` (cross-memory attach, CMA): one local iovec per contiguous piece of
//! the strided block, few remote ones (the kernel pins remote pages once per remote iovec, so
//! the contiguous side is the remote one).
//!
//! Why not MPI alone: Open MPI moves a large contiguous buffer between processes of one host
//! in a single copy (CMA), but a non-contiguous derived datatype goes through 32 KiB
//! shared-memory fragments (pack, copy, unpack), measured 2-6x slower than a contiguous
//! all-to-all here for blocks of 4-16 MiB; packing first costs an extra pass over the data.
//! Below [`CMA_MIN_BYTES`] per block the backend sends blocks with MPI. The threshold was
//! 1 MiB while every block went by `process_vm_writev` (for smaller blocks, pinning pages
//! cost more than MPI's fragments when those ran well); with boxing outputs in shared memory
//! (below) a 256 KiB block moves in well under the raw contiguous all-to-all's time (S(0) ->
//! S(1) of 1 MiB on 2 ranks: 0.63-0.75 of it, against 0.93-2.6 through the fragments, which
//! slow down whenever the host's vCPUs are placed far apart), so it is 128 KiB now.
//!
//! A recv block whose storage is a shared memory file (boxing allocates large all-to-all
//! outputs that way, see [`crate::Communicator::prefers_shared_outputs`]) is written through a
//! mapping of that file instead (module `peer_maps`): the descriptor carries the file's
//! descriptor number, inode and offset, and the writer falls back to `process_vm_writev` when
//! it cannot map the file.
//!
//! The own block is copied locally, in one sweep with the blocks written through mappings
//! (module `moves`): the core's run copier ([`tessera::kernels::stream::StreamCopy`]) streams
//! them when together they are larger than the cache, and the sweep goes piece by piece in
//! order of source address, so column blocks of one source (S(0)->S(1)) are read along its
//! rows once. On 2 ranks at 64 MiB (16 MiB per block in 8 KiB runs every 16 KiB), one
//! thread streams one block in 0.45-0.49 ms alone; with both ranks copying at once, the whole
//! exchange took 0.91-1.06 of the raw contiguous all-to-all's time in alternated runs.
//!
//! The protocol, between each sender and receiver of a block (no collective): the receiver
//! sends the sender where the block goes (address and strides, and its shared file if any)
//! and posts a receive for a done flag; the sender, once it knows where all its blocks go,
//! writes them and sends each receiver its flag (1 on failure). The receiver keeps its output
//! write-locked and untouched until every flag has arrived. Whether the ranks may use CMA is
//! probed once per communicator ([`CmaPeers`]); the environment variable
//! `TESSERA_DIST_CMA=0` turns it off.

mod moves;
mod peer_maps;
mod pieces;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives};
use tessera::{Storage, Tensor};

use crate::error::{DistError, Result};
use moves::move_blocks;
use pieces::{transfer, Pieces, DESC};

/// Blocks of at least this many bytes move by CMA, smaller ones through MPI (the default of
/// [`CmaPeers::min_bytes`]; the environment variable `TESSERA_DIST_CMA_MIN_BYTES` sets it).
pub(crate) const CMA_MIN_BYTES: usize = 128 << 10;
/// u64 words of a block's descriptor message: the pieces ([`DESC`]), then when the recv
/// block lives in a shared memory file: its inode (0 otherwise), descriptor number and the
/// file offset of the pieces' address.
const MSG: usize = DESC + 3;
/// Message tags of the protocol (on the backend's own duplicate of the communicator).
const TAG_DESC: i32 = 0x7e5a;
const TAG_DONE: i32 = 0x7e5b;
/// A random word every process holds at a known address, read by peers to check that they
/// reach the right process.
static PROBE: AtomicU64 = AtomicU64::new(0);

/// The peers' process ids, when every rank of a communicator runs on this host and may read
/// every peer's memory.
pub(crate) struct CmaPeers {
    pids: Vec<libc::pid_t>,
    /// Blocks of at least this many bytes move by CMA (the same on every rank).
    pub min_bytes: usize,
    /// Whether boxing allocates its all-to-all outputs in shared memory files, so peers write
    /// into them with ordinary stores (module `peer_maps`); `TESSERA_DIST_SHM=0` on any rank
    /// turns it off for all.
    pub shared_outputs: bool,
}

impl CmaPeers {
    /// Collective over `comm`: every rank learns the same answer. CMA is used when every rank
    /// runs on this host and reads every peer's random probe word through `process_vm_readv`
    /// (so the process ids name the right processes and access is allowed); a rank with
    /// `TESSERA_DIST_CMA=0` turns it off for all. The largest `TESSERA_DIST_CMA_MIN_BYTES`
    /// of the ranks (default [`CMA_MIN_BYTES`]) becomes [`CmaPeers::min_bytes`].
    pub fn probe(comm: &SimpleCommunicator) -> Option<CmaPeers> {
        use std::hash::{BuildHasher, Hasher};
        let p = comm.size() as usize;
        let same_host = comm.split_shared(0).size() as usize == p;
        let enabled = std::env::var("TESSERA_DIST_CMA").map_or(true, |v| v != "0");
        let nonce = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
            | 1;
        PROBE.store(nonce, Ordering::Relaxed);
        let mine = [
            u64::from(std::process::id()),
            PROBE.as_ptr() as usize as u64,
            nonce,
        ];
        let mut all = vec![0u64; 3 * p];
        comm.all_gather_into(&mine[..], &mut all[..]);
        let pids: Vec<libc::pid_t> = all.chunks(3).map(|w| w[0] as libc::pid_t).collect();
        let readable = same_host
            && enabled
            && all.chunks(3).all(|w| {
                let mut got = 0u64;
                let local = [(&mut got as *mut u64 as usize, 8)];
                let remote = [(w[1] as usize, 8)];
                transfer(w[0] as libc::pid_t, &local, &remote, false).is_ok() && got == w[2]
            });
        let mut ok = 0u8;
        comm.all_reduce_into(
            &u8::from(readable),
            &mut ok,
            mpi::collective::SystemOperation::min(),
        );
        let mine = std::env::var("TESSERA_DIST_CMA_MIN_BYTES")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(CMA_MIN_BYTES as u64);
        let mut min_bytes = 0u64;
        comm.all_reduce_into(
            &mine,
            &mut min_bytes,
            mpi::collective::SystemOperation::max(),
        );
        let shm = u8::from(std::env::var("TESSERA_DIST_SHM").map_or(true, |v| v != "0"));
        let mut shared = 0u8;
        comm.all_reduce_into(&shm, &mut shared, mpi::collective::SystemOperation::min());
        (ok == 1).then_some(CmaPeers {
            pids,
            min_bytes: usize::try_from(min_bytes).unwrap_or(usize::MAX),
            shared_outputs: shared == 1,
        })
    }
}

/// The distinct storages of the non-empty `views`.
fn storages(views: &[Tensor]) -> Result<Vec<Arc<Storage>>> {
    let mut out: Vec<Arc<Storage>> = Vec::new();
    for v in views.iter().filter(|v| v.numel() > 0) {
        let s = v.storage()?;
        if !out.iter().any(|o| Arc::ptr_eq(o, s)) {
            out.push(s.clone());
        }
    }
    Ok(out)
}

/// The index of `v`'s storage among the locked `storages`.
fn index_of(v: &Tensor, storages: &[Arc<Storage>]) -> Result<usize> {
    let s = v.storage()?;
    storages
        .iter()
        .position(|o| Arc::ptr_eq(o, s))
        .ok_or_else(|| DistError::Comm("view storage not locked".into()))
}

/// The base address of `v`'s storage among `storages` with base addresses `bases`.
fn base_of(v: &Tensor, storages: &[Arc<Storage>], bases: &[usize]) -> Result<usize> {
    Ok(bases[index_of(v, storages)?])
}

/// Whether [`exchange`] can copy the own block (`from` into `to`) itself, piece by piece
/// with the blocks it sends: both have pieces long enough for `memcpy`.
pub(crate) fn copies_own(from: &Tensor, to: &Tensor) -> bool {
    let item = from.dtype().itemsize();
    from.numel() > 0 && [from, to].iter().all(|v| Pieces::of(0, v, item).local_ok())
}

/// Moves the non-empty blocks between different ranks by CMA: `send[s]` into rank s's
/// `recv[me]`, and every non-empty `recv[r]` from rank r. With `own`, also copies
/// `send[me]` into `recv[me]` (see [`copies_own`]), in one sweep with the blocks this rank
/// writes through mappings; otherwise the own block is left alone. Both sides of a block must
/// agree it is non-empty (the caller empties the blocks that go through MPI). `small_here`
/// says whether this rank has blocks for MPI; when any rank has, `small` (the collective that
/// moves them) runs on every rank.
///
/// Collective over `comm`: a failure on any rank (staging a block, writing one) is an error
/// on every rank (D7). One all-reduce of flag bits opens the call (staging failed anywhere;
/// MPI blocks anywhere; CMA blocks anywhere), so no rank waits for a descriptor that will
/// never come and the parts nobody needs are skipped; when CMA blocks moved, a one-byte
/// all-reduce closes it. Both cost little beside blocks of [`CmaPeers::min_bytes`] or more.
pub(crate) fn exchange(
    comm: &SimpleCommunicator,
    peers: &CmaPeers,
    send: &[Tensor],
    recv: &[Tensor],
    own: bool,
    small_here: bool,
    small: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let staged = prepare(comm.rank() as usize, send, recv, own);
    let staging = match &staged {
        Err(_) => FAILED,
        Ok(blocks) => u8::from(blocks.is_some()) * BIG,
    };
    let all = open(comm, staging | (u8::from(small_here) * SMALL));
    let staged = staged?;
    if all & FAILED != 0 {
        return Err(another_rank_failed());
    }
    if all & SMALL != 0 {
        small()?;
    }
    if all & BIG == 0 {
        return Ok(());
    }
    let Some(blocks) = staged else {
        return agree(comm, Ok(()));
    };
    let moved = tessera::with_dtype!(blocks.dtype, T => move_blocks::<T>(comm, peers, &blocks))
        .and_then(|(failed, flags)| {
            if let Some(e) = failed {
                return Err(e);
            }
            match flags.iter().position(|&f| f != 0) {
                Some(k) => Err(DistError::Comm(format!(
                    "all_to_all_views: rank {} failed to write its block into rank {}",
                    blocks.writers[k], blocks.me
                ))),
                None => Ok(()),
            }
        });
    agree(comm, moved)?;
    for &r in &blocks.writers {
        if !recv[r].shares_storage(&blocks.recv_into[r]) {
            recv[r].assign(&blocks.recv_into[r])?;
        }
    }
    Ok(())
}

/// Flag bits of [`exchange`]'s opening all-reduce: staging failed (or the arguments were
/// refused) somewhere; some rank has blocks for MPI; some rank has blocks for CMA.
const FAILED: u8 = 1;
const SMALL: u8 = 2;
const BIG: u8 = 4;

/// This rank's side of an [`exchange`] it cannot take part in because its own arguments are
/// wrong: the opening all-reduce with the failure bit, so every peer returns an error instead
/// of waiting for this rank (D7). Collective over `comm`, in place of [`exchange`].
pub(crate) fn refuse(comm: &SimpleCommunicator) {
    open(comm, FAILED);
}

/// The opening all-reduce: every rank's flag bits or-ed together.
fn open(comm: &SimpleCommunicator, mine: u8) -> u8 {
    let mut all = 0u8;
    comm.all_reduce_into(
        &mine,
        &mut all,
        mpi::collective::SystemOperation::bitwise_or(),
    );
    all
}

fn another_rank_failed() -> DistError {
    DistError::Comm("all_to_all_views: another rank failed to move its blocks".into())
}

/// Collective: `mine`, or an error when another rank's result is one (this rank's own error
/// comes first).
fn agree<T>(comm: &SimpleCommunicator, mine: Result<T>) -> Result<T> {
    let mut any = 0u8;
    comm.all_reduce_into(
        &u8::from(mine.is_err()),
        &mut any,
        mpi::collective::SystemOperation::max(),
    );
    match mine {
        Ok(_) if any != 0 => Err(another_rank_failed()),
        r => r,
    }
}

/// This rank's CMA blocks with their staging copies made (`None`: nothing to move).
fn prepare(me: usize, send: &[Tensor], recv: &[Tensor], own: bool) -> Result<Option<Blocks>> {
    let live = |views: &[Tensor]| -> Vec<usize> {
        (0..views.len())
            .filter(|&r| r != me && views[r].numel() > 0)
            .collect()
    };
    let (targets, writers) = (live(send), live(recv));
    let own = own && send[me].numel() > 0;
    let Some(first) = targets
        .first()
        .map(|&s| &send[s])
        .or(writers.first().map(|&r| &recv[r]))
        .or(own.then(|| &send[me]))
    else {
        return Ok(None);
    };
    let (dtype, item) = (first.dtype(), first.dtype().itemsize());
    // Blocks with pieces too small to move one by one go through contiguous copies.
    let mut send_from = send.to_vec();
    for &s in &targets {
        if !Pieces::of(0, &send[s], item).local_ok() {
            send_from[s] = send[s].copy()?;
        }
    }
    let mut recv_into = recv.to_vec();
    for &r in &writers {
        if !Pieces::of(0, &recv[r], item).remote_ok() {
            recv_into[r] = Tensor::empty(recv[r].shape(), dtype)?;
        }
    }
    let pick = |views: &[Tensor], idx: &[usize]| -> Result<Vec<Arc<Storage>>> {
        let own = own.then_some(me);
        storages(
            &idx.iter()
                .chain(&own)
                .map(|&i| views[i].clone())
                .collect::<Vec<_>>(),
        )
    };
    Ok(Some(Blocks {
        me,
        item,
        dtype,
        own,
        send_st: pick(&send_from, &targets)?,
        recv_st: pick(&recv_into, &writers)?,
        targets,
        writers,
        send_from,
        recv_into,
    }))
}

/// The blocks one rank moves by CMA.
struct Blocks {
    me: usize,
    item: usize,
    dtype: tessera::DType,
    /// Whether to copy the own block too.
    own: bool,
    /// Ranks this rank writes to, and ranks that write to it.
    targets: Vec<usize>,
    writers: Vec<usize>,
    /// Per rank: the view to send (maybe a packed copy), the view to receive into (maybe a
    /// contiguous stand-in).
    send_from: Vec<Tensor>,
    recv_into: Vec<Tensor>,
    /// The distinct storages of the targets' send views and of the writers' recv views.
    send_st: Vec<Arc<Storage>>,
    recv_st: Vec<Arc<Storage>>,
}
