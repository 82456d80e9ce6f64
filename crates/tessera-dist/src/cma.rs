//! Single-copy exchange of large strided blocks between MPI ranks on one Linux host (DESIGN
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
//! Below [`CMA_MIN_BYTES`] per block the fragments win (pinning pages costs more than copying
//! through cache-hot shared memory), so the backend sends those with MPI.
//!
//! The protocol, between each sender and receiver of a block (no collective): the receiver
//! sends the sender where the block goes (address and strides) and posts a receive for a
//! done flag; the sender writes the block and sends the flag (1 on failure). The receiver
//! keeps its output write-locked and untouched until every flag has arrived. Whether the
//! ranks may use CMA is probed once per communicator ([`CmaPeers`]); the environment
//! variable `TESSERA_DIST_CMA=0` turns it off.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives, Destination, Source};
use tessera::{Element, Storage, Tensor};

use crate::error::{DistError, Result};
use crate::mpi_views::runs;

/// Outer dims a block descriptor carries; recv blocks with more are staged through a copy.
const MAX_DIMS: usize = 6;
/// Recv blocks whose contiguous pieces are shorter than this many bytes (with more than one
/// piece) are received into a contiguous stand-in and copied after: the kernel pins the
/// remote pages once per remote piece, which costs about as much as copying 4 KiB.
const MIN_REMOTE_PIECE: usize = 4096;
/// Send blocks whose pieces are shorter than this are packed first.
const MIN_LOCAL_PIECE: usize = 256;
/// Blocks of at least this many bytes move by CMA, smaller ones through MPI (the default of
/// [`CmaPeers::min_bytes`]; the environment variable `TESSERA_DIST_CMA_MIN_BYTES` sets it).
pub(crate) const CMA_MIN_BYTES: usize = 1 << 20;
/// Message tags of the protocol (on the backend's own duplicate of the communicator).
const TAG_DESC: i32 = 0x7e5a;
const TAG_DONE: i32 = 0x7e5b;
/// iovecs per `process_vm_readv` call (Linux's `IOV_MAX`).
const IOV_MAX: usize = 1024;
/// u64 words of one descriptor: bytes, address, inner piece length, dims, then
/// (count, byte stride) per outer dim.
const DESC: usize = 4 + 2 * MAX_DIMS;

/// A random word every process holds at a known address, read by peers to check that they
/// reach the right process.
static PROBE: AtomicU64 = AtomicU64::new(0);

/// A view's bytes as contiguous pieces: `inner` bytes at `addr`, repeated over the `outer`
/// dims, each (count, byte stride), innermost first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pieces {
    pub addr: usize,
    pub inner: usize,
    pub outer: Vec<(usize, isize)>,
}

impl Pieces {
    /// The pieces of `t`, whose storage starts at address `base`.
    pub fn of(base: usize, t: &Tensor, itemsize: usize) -> Pieces {
        let runs = runs(t.shape(), t.strides());
        let (inner, outer) = match runs.first() {
            Some(&(n, 1)) => (n * itemsize, &runs[1..]),
            _ => (itemsize, &runs[..]),
        };
        Pieces {
            addr: base + t.layout().offset() * itemsize,
            inner,
            outer: outer
                .iter()
                .map(|&(n, s)| (n, s * itemsize as isize))
                .collect(),
        }
    }

    /// Number of pieces.
    pub fn count(&self) -> usize {
        self.outer.iter().map(|d| d.0).product()
    }

    /// Total bytes.
    pub fn bytes(&self) -> usize {
        self.inner * self.count()
    }

    /// Whether a recv block can be written piece by piece (otherwise it is staged).
    pub fn remote_ok(&self) -> bool {
        self.outer.len() <= MAX_DIMS && (self.inner >= MIN_REMOTE_PIECE || self.count() <= 1)
    }

    /// Whether a send block can be read piece by piece (otherwise it is packed).
    pub fn local_ok(&self) -> bool {
        self.inner >= MIN_LOCAL_PIECE || self.count() <= 1
    }

    /// The pieces as (address, length), in order.
    fn list(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::with_capacity(self.count());
        self.for_each(|a, n| v.push((a, n)));
        v
    }

    /// Calls `f(address, length)` for every piece, in row-major order of the view.
    pub fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        if self.bytes() == 0 {
            return;
        }
        let mut idx = vec![0usize; self.outer.len()];
        let mut addr = self.addr as isize;
        loop {
            f(addr as usize, self.inner);
            let mut d = 0;
            loop {
                let Some(&(n, stride)) = self.outer.get(d) else {
                    return;
                };
                idx[d] += 1;
                addr += stride;
                if idx[d] < n {
                    break;
                }
                addr -= stride * n as isize;
                idx[d] = 0;
                d += 1;
            }
        }
    }

    /// The descriptor words (a direct block has at most [`MAX_DIMS`] outer dims).
    fn encode(&self) -> [u64; DESC] {
        let mut w = [0u64; DESC];
        w[..4].copy_from_slice(&[
            self.bytes() as u64,
            self.addr as u64,
            self.inner as u64,
            self.outer.len() as u64,
        ]);
        for (i, &(n, s)) in self.outer.iter().enumerate() {
            w[4 + 2 * i] = n as u64;
            w[5 + 2 * i] = s as i64 as u64;
        }
        w
    }

    /// The pieces a descriptor describes, and its byte count.
    fn decode(w: &[u64]) -> Result<(usize, Pieces)> {
        let k = w[3] as usize;
        if k > MAX_DIMS {
            return Err(DistError::Comm(format!("CMA descriptor with {k} dims")));
        }
        let p = Pieces {
            addr: w[1] as usize,
            inner: w[2] as usize,
            outer: (0..k)
                .map(|i| (w[4 + 2 * i] as usize, w[5 + 2 * i] as i64 as isize))
                .collect(),
        };
        Ok((w[0] as usize, p))
    }
}

/// The peers' process ids, when every rank of a communicator runs on this host and may read
/// every peer's memory.
pub(crate) struct CmaPeers {
    pids: Vec<libc::pid_t>,
    /// Blocks of at least this many bytes move by CMA (the same on every rank).
    pub min_bytes: usize,
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
        (ok == 1).then_some(CmaPeers {
            pids,
            min_bytes: usize::try_from(min_bytes).unwrap_or(usize::MAX),
        })
    }
}

/// One `process_vm_writev` (`write`) of the `local` pieces (address, length) of this process
/// into the `remote` pieces of process `pid`, or one `process_vm_readv` the other way. Both
/// lists hold at most [`IOV_MAX`] pieces of equal total length.
fn transfer(
    pid: libc::pid_t,
    local: &[(usize, usize)],
    remote: &[(usize, usize)],
    write: bool,
) -> Result<()> {
    let iov = |v: &[(usize, usize)]| -> Vec<libc::iovec> {
        v.iter()
            .map(|&(a, n)| libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: n,
            })
            .collect()
    };
    let (l, r) = (iov(local), iov(remote));
    let want: usize = local.iter().map(|p| p.1).sum();
    let (nl, nr) = (l.len() as libc::c_ulong, r.len() as libc::c_ulong);
    // SAFETY: `l` and `r` are arrays of `nl` and `nr` valid iovec structs. Reading
    // (`process_vm_readv`), the kernel writes only into the `local` pieces, which the caller
    // guarantees are memory of this process that nothing else accesses during the call.
    // Writing, it reads the `local` pieces (the caller holds them read-locked) and writes the
    // `remote` pieces of process `pid`, which that process published for this purpose and
    // keeps write-locked and untouched until our done flag arrives (as with a pending
    // `MPI_Irecv`, whose buffer MPI writes while the program holds it borrowed). The kernel
    // checks the remote addresses and reports a bad one as an error.
    let got = unsafe {
        if write {
            libc::process_vm_writev(pid, l.as_ptr(), nl, r.as_ptr(), nr, 0)
        } else {
            libc::process_vm_readv(pid, l.as_ptr(), nl, r.as_ptr(), nr, 0)
        }
    };
    let what = if write {
        "process_vm_writev to"
    } else {
        "process_vm_readv from"
    };
    if got < 0 {
        let e = std::io::Error::last_os_error();
        return Err(DistError::Comm(format!("{what} pid {pid}: {e}")));
    }
    if got as usize != want {
        return Err(DistError::Comm(format!(
            "{what} pid {pid} moved {got} of {want} bytes"
        )));
    }
    Ok(())
}

/// A position in a list of pieces.
struct Cursor {
    pieces: Vec<(usize, usize)>,
    at: usize,
    off: usize,
}

impl Cursor {
    fn new(p: &Pieces) -> Cursor {
        Cursor {
            pieces: p.list(),
            at: 0,
            off: 0,
        }
    }

    fn done(&self) -> bool {
        self.at == self.pieces.len()
    }

    /// Bytes in the next `k` pieces (the current one from the current offset).
    fn ahead(&self, k: usize) -> usize {
        let n: usize = self.pieces[self.at..].iter().take(k).map(|p| p.1).sum();
        n - self.off
    }

    /// Moves `n` bytes ahead, appending the pieces passed over to `out`.
    fn take(&mut self, mut n: usize, out: &mut Vec<(usize, usize)>) {
        while n > 0 {
            let (a, len) = self.pieces[self.at];
            let m = (len - self.off).min(n);
            out.push((a + self.off, m));
            n -= m;
            self.off += m;
            if self.off == len {
                (self.at, self.off) = (self.at + 1, 0);
            }
        }
    }
}

/// Moves the bytes of the `local` pieces into the `remote` pieces of process `pid` (or the
/// other way when reading; equal byte counts), as few system calls as [`IOV_MAX`] allows.
fn transfer_block(pid: libc::pid_t, local: &Pieces, remote: &Pieces, write: bool) -> Result<()> {
    let (mut l, mut r) = (Cursor::new(local), Cursor::new(remote));
    let (mut li, mut ri) = (Vec::new(), Vec::new());
    while !l.done() && !r.done() {
        let n = l.ahead(IOV_MAX).min(r.ahead(IOV_MAX));
        li.clear();
        ri.clear();
        l.take(n, &mut li);
        r.take(n, &mut ri);
        transfer(pid, &li, &ri, write)?;
    }
    Ok(())
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

/// The base address of `views[i]`'s storage among `storages` with base addresses `bases`.
fn base_of(v: &Tensor, storages: &[Arc<Storage>], bases: &[usize]) -> Result<usize> {
    let s = v.storage()?;
    let i = storages
        .iter()
        .position(|o| Arc::ptr_eq(o, s))
        .ok_or_else(|| DistError::Comm("view storage not locked".into()))?;
    Ok(bases[i])
}

/// Moves the non-empty blocks between different ranks by CMA: `send[s]` into rank s's
/// `recv[me]`, and every non-empty `recv[r]` from rank r (`send[me]` / `recv[me]` are left
/// alone). Both sides of a block must agree it is non-empty (the caller empties the blocks
/// that go through MPI). A failure is an error on both ranks of the block.
pub(crate) fn exchange(
    comm: &SimpleCommunicator,
    peers: &CmaPeers,
    send: &[Tensor],
    recv: &[Tensor],
) -> Result<()> {
    let me = comm.rank() as usize;
    let live = |views: &[Tensor]| -> Vec<usize> {
        (0..views.len())
            .filter(|&r| r != me && views[r].numel() > 0)
            .collect()
    };
    let (targets, writers) = (live(send), live(recv));
    let Some(first) = targets
        .first()
        .map(|&s| &send[s])
        .or(writers.first().map(|&r| &recv[r]))
    else {
        return Ok(());
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
        storages(&idx.iter().map(|&i| views[i].clone()).collect::<Vec<_>>())
    };
    let blocks = Blocks {
        me,
        item,
        send_st: pick(&send_from, &targets)?,
        recv_st: pick(&recv_into, &writers)?,
        targets,
        writers,
        send_from,
        recv_into,
    };
    let (failed, flags) = tessera::with_dtype!(dtype, T => move_blocks::<T>(comm, peers, &blocks))?;
    let writers = &blocks.writers;
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(k) = flags.iter().position(|&f| f != 0) {
        return Err(DistError::Comm(format!(
            "all_to_all_views: rank {} failed to write its block into rank {me}",
            writers[k]
        )));
    }
    for &r in writers {
        if !recv[r].shares_storage(&blocks.recv_into[r]) {
            recv[r].assign(&blocks.recv_into[r])?;
        }
    }
    Ok(())
}

/// The blocks one rank moves by CMA.
struct Blocks {
    me: usize,
    item: usize,
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

/// The protocol on locked storages: returns this rank's first failure and the done flags
/// received from the writers (non-zero: that writer failed).
fn move_blocks<T: Element>(
    comm: &SimpleCommunicator,
    peers: &CmaPeers,
    b: &Blocks,
) -> Result<(Option<DistError>, Vec<u8>)> {
    let (me, item) = (b.me, b.item);
    let sg = b
        .send_st
        .iter()
        .map(|s| s.read::<T>())
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut rg = b
        .recv_st
        .iter()
        .map(|s| s.write::<T>())
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let sb: Vec<usize> = sg.iter().map(|g| g.as_ptr() as usize).collect();
    let rb: Vec<usize> = rg.iter_mut().map(|g| g.as_mut_ptr() as usize).collect();
    let pieces = |v: &Tensor, st: &[Arc<Storage>], bases: &[usize]| -> Result<Pieces> {
        Ok(Pieces::of(base_of(v, st, bases)?, v, item))
    };
    let descs = b
        .writers
        .iter()
        .map(|&r| Ok(pieces(&b.recv_into[r], &b.recv_st, &rb)?.encode()))
        .collect::<Result<Vec<_>>>()?;
    let locals = b
        .targets
        .iter()
        .map(|&s| pieces(&b.send_from[s], &b.send_st, &sb))
        .collect::<Result<Vec<_>>>()?;
    let mut failed: Option<DistError> = None;
    let mut flags = vec![0u8; b.writers.len()];
    mpi::request::scope(|scope| {
        // Post everything this rank waits for before blocking, so no send can wait on a
        // receive that is not posted yet.
        let mut pending = Vec::with_capacity(b.writers.len());
        for (&r, d) in b.writers.iter().zip(&descs) {
            let to = comm.process_at_rank(r as i32);
            pending.push(to.immediate_send_with_tag(scope, &d[..], TAG_DESC));
        }
        let mut done = Vec::with_capacity(b.writers.len());
        for (&r, f) in b.writers.iter().zip(flags.iter_mut()) {
            let from = comm.process_at_rank(r as i32);
            done.push(from.immediate_receive_into_with_tag(scope, f, TAG_DONE));
        }
        let mut dest = [0u64; DESC];
        for (&s, local) in b.targets.iter().zip(&locals) {
            let peer = comm.process_at_rank(s as i32);
            peer.receive_into_with_tag(&mut dest[..], TAG_DESC);
            let moved = Pieces::decode(&dest).and_then(|(bytes, remote)| {
                if bytes != local.bytes() || remote.bytes() != bytes {
                    return Err(DistError::Mismatch(format!(
                        "all_to_all_views: rank {me} sends {} bytes to rank {s}, which \
                         expects {bytes}",
                        local.bytes()
                    )));
                }
                transfer_block(peers.pids[s], local, &remote, true)
            });
            peer.send_with_tag(&u8::from(moved.is_err()), TAG_DONE);
            failed = failed.take().or(moved.err());
        }
        for r in pending {
            r.wait();
        }
        for r in done {
            r.wait();
        }
    });
    // The output stays write-locked until every writer is done.
    drop(sg);
    drop(rg);
    Ok((failed, flags))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::index::IndexSpec;
    use tessera::DType;

    fn collect(p: &Pieces) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        p.for_each(|a, n| v.push((a, n)));
        v
    }

    #[test]
    fn pieces_of_a_column_block_are_its_row_segments() {
        let t = Tensor::zeros(&[3, 8], DType::F32).unwrap();
        let block = t
            .index(&[IndexSpec::All, IndexSpec::interval(2, 6)])
            .unwrap();
        let p = Pieces::of(1000, &block, 4);
        assert_eq!(p.inner, 16);
        assert_eq!(collect(&p), vec![(1008, 16), (1040, 16), (1072, 16)]);
        assert_eq!(p.bytes(), 48);
        assert!(!p.remote_ok() && !p.local_ok(), "16-byte pieces are staged");
        let rows = t.index(&[IndexSpec::interval(1, 3)]).unwrap();
        let q = Pieces::of(0, &rows, 4);
        assert_eq!(collect(&q), vec![(32, 64)]);
        assert!(q.remote_ok() && q.local_ok());
        let (bytes, back) = Pieces::decode(&p.encode()).unwrap();
        assert_eq!((bytes, back), (48, p));
    }

    #[test]
    fn pieces_follow_negative_and_element_strides() {
        let t = Tensor::zeros(&[2, 3], DType::F64).unwrap();
        let flipped = t.flip(Some(&[0])).unwrap();
        assert_eq!(
            collect(&Pieces::of(0, &flipped, 8)),
            vec![(24, 24), (0, 24)]
        );
        let col = t.index(&[IndexSpec::All, IndexSpec::Point(1)]).unwrap();
        assert_eq!(collect(&Pieces::of(0, &col, 8)), vec![(8, 8), (32, 8)]);
        let empty = t.index(&[IndexSpec::interval(0, 0)]).unwrap();
        assert_eq!(Pieces::of(0, &empty, 8).bytes(), 0);
        assert!(collect(&Pieces::of(0, &empty, 8)).is_empty());
    }

    #[test]
    fn transfers_pair_pieces_of_different_shapes() {
        // Within this very process: 3 pieces of 4 bytes into 2 of 6, both ways.
        let src: Vec<u8> = (0..12).collect();
        let mut dst = [0u8; 12];
        let from = Pieces {
            addr: src.as_ptr() as usize,
            inner: 4,
            outer: vec![(3, 4)],
        };
        let to = Pieces {
            addr: dst.as_mut_ptr() as usize,
            inner: 6,
            outer: vec![(2, 6)],
        };
        let me = std::process::id() as libc::pid_t;
        match transfer_block(me, &to, &from, false) {
            Err(e) if e.to_string().contains("not permitted") => {
                eprintln!("cross-memory attach is not permitted here: {e}");
                return;
            }
            r => r.unwrap(),
        }
        assert_eq!(dst.to_vec(), src);
        let mut back = [0u8; 12];
        let into = Pieces {
            addr: back.as_mut_ptr() as usize,
            inner: 2,
            outer: vec![(2, 6), (3, 2)],
        };
        // `into` lists bytes 0,1, 6,7, 2,3, 8,9, 4,5, 10,11: a column-major walk.
        transfer_block(me, &from, &into, true).unwrap();
        assert_eq!(back.to_vec(), vec![0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11]);
        let bad = Pieces {
            addr: 8,
            inner: 12,
            outer: vec![],
        };
        assert!(transfer_block(me, &to, &bad, false).is_err());
    }

    #[test]
    fn cursors_batch_by_the_shorter_side() {
        let many = Pieces {
            addr: 0,
            inner: 10,
            outer: vec![(2500, 20)],
        };
        let mut c = Cursor::new(&many);
        assert_eq!(c.ahead(IOV_MAX), 10 * IOV_MAX);
        let mut out = Vec::new();
        c.take(15, &mut out);
        assert_eq!(out, vec![(0, 10), (20, 5)]);
        assert_eq!(c.ahead(2), 15);
        assert!(!c.done());
    }
}
