//! The in-process backend (docs/design.md D8): `p` ranks are `p` threads sharing one [`Group`].
//!
//! Each collective: every rank deposits a slot (op tag, dtype, counts, send buffer) and
//! waits for all (phase 1); every rank then checks all slots identically (so an SPMD mismatch
//! is an error on every rank), reads its peers' buffers and writes only its own output,
//! reducing in rank order 0..p-1 so every rank gets bit-identical results; a second
//! rendezvous (phase 2) keeps slots alive until everyone has read them. A rank that panics or
//! leaves marks the group aborted and wakes everyone (a drop guard); waits time out.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tessera::{DType, Tensor};

use crate::comm::{check_views, combine, offsets, Comm, Communicator};
use crate::error::{DistError, Result};
use crate::sbp::PartialOp;
use slot::Slot;

mod slot;

/// How long a collective waits for the other ranks by default (override with the
/// environment variable `TESSERA_DIST_TIMEOUT_SECS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Default)]
struct State {
    slots: Vec<Option<Slot>>,
    arrived: usize,
    generation: u64,
    aborted: Option<DistError>,
    left: Vec<bool>,
    /// Subgroups being created by `split`, keyed by (split sequence number, color).
    splits: BTreeMap<(u64, usize), (Arc<Group>, usize)>,
}

/// The shared state of one group of in-process ranks.
pub struct Group {
    size: usize,
    timeout: Duration,
    state: Mutex<State>,
    cv: Condvar,
}

impl Group {
    /// A group of `size` ranks whose waits time out after `timeout`.
    pub fn new(size: usize, timeout: Duration) -> Arc<Group> {
        Arc::new(Group {
            size,
            timeout,
            state: Mutex::new(State {
                slots: vec![None; size],
                left: vec![false; size],
                ..State::default()
            }),
            cv: Condvar::new(),
        })
    }

    /// One communicator handle per rank.
    pub fn comms(self: &Arc<Group>) -> Vec<ThreadComm> {
        (0..self.size)
            .map(|rank| ThreadComm {
                group: self.clone(),
                rank,
                splits: Mutex::new(0),
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn abort(&self, why: DistError) {
        let mut st = self.lock();
        if st.aborted.is_none() {
            st.aborted = Some(why);
        }
        drop(st);
        self.cv.notify_all();
    }

    /// Waits until all ranks have arrived (one generation of the barrier).
    fn rendezvous(&self, rank: usize, what: &str) -> Result<()> {
        let mut st = self.lock();
        if let Some(e) = &st.aborted {
            return Err(e.clone());
        }
        let gen = st.generation;
        st.arrived += 1;
        if st.arrived == self.size {
            st.arrived = 0;
            st.generation += 1;
            drop(st);
            self.cv.notify_all();
            return Ok(());
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            if st.generation != gen {
                return Ok(());
            }
            if let Some(e) = &st.aborted {
                return Err(e.clone());
            }
            if let Some(gone) = st.left.iter().position(|&l| l) {
                let e = DistError::Aborted(format!(
                    "rank {gone} left the group while rank {rank} waited in {what}"
                ));
                st.aborted = Some(e.clone());
                drop(st);
                self.cv.notify_all();
                return Err(e);
            }
            let now = Instant::now();
            if now >= deadline {
                let e = DistError::Timeout(format!(
                    "rank {rank} waited {:?} in {what} for {} of {} ranks",
                    self.timeout,
                    self.size - st.arrived,
                    self.size
                ));
                st.aborted = Some(e.clone());
                drop(st);
                self.cv.notify_all();
                return Err(e);
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// One rank's handle to a [`Group`]. Dropping it (normally or by a panic) tells waiting peers
/// that this rank is gone.
pub struct ThreadComm {
    group: Arc<Group>,
    rank: usize,
    splits: Mutex<u64>,
}

impl Drop for ThreadComm {
    fn drop(&mut self) {
        let panicking = std::thread::panicking();
        let mut st = self.group.lock();
        st.left[self.rank] = true;
        if panicking && st.aborted.is_none() {
            st.aborted = Some(DistError::Aborted(format!("rank {} panicked", self.rank)));
        }
        drop(st);
        self.group.cv.notify_all();
    }
}

fn mismatch(what: &str, slots: &[Slot], f: impl Fn(&Slot) -> String) -> DistError {
    let seen: Vec<String> = slots
        .iter()
        .enumerate()
        .map(|(r, s)| format!("rank {r}: {}", f(s)))
        .collect();
    DistError::Mismatch(format!("{what}: {}", seen.join("; ")))
}

/// Every rank's arguments of one kind of collective, taken by `f` (which `check_common` has
/// made sure every slot is).
fn each<'a, T>(slots: &'a [Slot], f: impl Fn(&'a Slot) -> Option<T>) -> Result<Vec<T>> {
    slots
        .iter()
        .map(|s| {
            f(s).ok_or_else(|| {
                mismatch("ranks called different collectives", slots, |s| {
                    s.tag().into()
                })
            })
        })
        .collect()
}

/// Concatenates 1-D pieces into one new contiguous tensor.
fn concat(pieces: &[Tensor], dtype: DType) -> Result<Tensor> {
    let total = pieces.iter().map(|p| p.numel()).sum();
    let out = Tensor::empty(&[total], dtype)?;
    let mut at = 0;
    for p in pieces {
        out.narrow(0, at, p.numel())?.assign(p)?;
        at += p.numel();
    }
    Ok(out)
}

impl ThreadComm {
    /// Runs one collective: deposit, rendezvous, check, compute, rendezvous.
    fn collective<T>(&self, slot: Slot, compute: impl FnOnce(&[Slot]) -> Result<T>) -> Result<T> {
        let tag = slot.tag();
        // Every check runs on every rank over every rank's slot, after the exchange, so a
        // rank's bad argument is an error on every rank (D7), not a rank that never arrives.
        let slots = self.exchange(slot)?;
        let result = check_common(&slots)
            .and_then(|()| check_buffers(&slots))
            .and_then(|()| compute(&slots));
        self.group.rendezvous(self.rank, tag)?;
        result
    }

    /// Deposits `slot`, waits for every rank, and returns every rank's slot in rank order.
    fn exchange(&self, slot: Slot) -> Result<Vec<Slot>> {
        let tag = slot.tag();
        self.group.lock().slots[self.rank] = Some(slot);
        self.group.rendezvous(self.rank, tag)?;
        Ok(self.group.lock().slots.iter().flatten().cloned().collect())
    }
}

/// Checks that every rank called the same collective with the same dtype and arguments.
fn check_common(slots: &[Slot]) -> Result<()> {
    let s0 = &slots[0];
    if slots.iter().any(|s| s.tag() != s0.tag()) {
        return Err(mismatch("ranks called different collectives", slots, |s| {
            s.tag().to_string()
        }));
    }
    if slots.iter().any(|s| s.dtype() != s0.dtype()) {
        return Err(mismatch(
            &format!("{}: dtypes differ", s0.tag()),
            slots,
            |s| format!("{:?}", s.dtype()),
        ));
    }
    if slots.iter().any(|s| s.agreed() != s0.agreed()) {
        return Err(mismatch(
            &format!("{}: arguments differ", s0.tag()),
            slots,
            |s| format!("{:?}", s.agreed()),
        ));
    }
    Ok(())
}

/// Checks that every rank's buffer is 1-D.
fn check_buffers(slots: &[Slot]) -> Result<()> {
    for (r, s) in slots.iter().enumerate() {
        if let Some(d) = s.buffer().filter(|d| d.rank() != 1) {
            return Err(DistError::Placement(format!(
                "{}: buffers must be 1-D, rank {r} passed shape {:?}",
                s.tag(),
                d.shape()
            )));
        }
    }
    Ok(())
}

fn check_len(tag: &str, t: &Tensor, want: usize) -> Result<()> {
    if t.numel() != want || t.rank() != 1 {
        return Err(DistError::Mismatch(format!(
            "{tag}: buffer of shape {:?}, counts say {want} elements",
            t.shape()
        )));
    }
    Ok(())
}

impl Communicator for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.group.size
    }

    fn barrier(&self) -> Result<()> {
        self.collective(Slot::Barrier, |_| Ok(()))
    }

    fn broadcast(&self, buf: &Tensor, root: usize) -> Result<Tensor> {
        let slot = Slot::Broadcast {
            buf: buf.clone(),
            root,
        };
        self.collective(slot, |slots| {
            let src = slots.get(root).and_then(Slot::buffer).ok_or_else(|| {
                DistError::Placement(format!("broadcast root {root} of {}", slots.len()))
            })?;
            Ok(src.copy()?)
        })
    }

    fn all_gather_v(&self, send: &Tensor, counts: &[usize]) -> Result<Tensor> {
        let slot = Slot::AllGather {
            send: send.clone(),
            counts: counts.to_vec(),
        };
        self.collective(slot, |slots| {
            check_counts_len(counts, slots.len())?;
            let pieces = each(slots, |s| match s {
                Slot::AllGather { send, .. } => Some(send.clone()),
                _ => None,
            })?;
            for (r, p) in pieces.iter().enumerate() {
                check_len("all_gather_v", p, counts[r])?;
            }
            concat(&pieces, send.dtype())
        })
    }

    fn all_reduce(&self, send: &Tensor, op: PartialOp) -> Result<Tensor> {
        let slot = Slot::AllReduce {
            send: send.clone(),
            op,
        };
        self.collective(slot, |slots| {
            let pieces = each(slots, |s| s.buffer().cloned())?;
            combine(&pieces, op)
        })
    }

    fn reduce_scatter_v(&self, send: &Tensor, counts: &[usize], op: PartialOp) -> Result<Tensor> {
        let slot = Slot::ReduceScatter {
            send: send.clone(),
            counts: counts.to_vec(),
            op,
        };
        let me = self.rank;
        self.collective(slot, |slots| {
            check_counts_len(counts, slots.len())?;
            let total: usize = counts.iter().sum();
            let at = offsets(counts)[me];
            let mut pieces = Vec::with_capacity(slots.len());
            for d in each(slots, Slot::buffer)? {
                check_len("reduce_scatter_v", d, total)?;
                pieces.push(d.narrow(0, at, counts[me])?);
            }
            combine(&pieces, op)
        })
    }

    fn all_to_all_v(
        &self,
        send: &Tensor,
        send_counts: &[usize],
        recv_counts: &[usize],
    ) -> Result<Tensor> {
        let slot = Slot::AllToAll {
            send: send.clone(),
            send_counts: send_counts.to_vec(),
            recv_counts: recv_counts.to_vec(),
        };
        let me = self.rank;
        self.collective(slot, |slots| {
            let p = slots.len();
            let all = each(slots, |s| match s {
                Slot::AllToAll {
                    send,
                    send_counts,
                    recv_counts,
                } => Some((send, send_counts, recv_counts)),
                _ => None,
            })?;
            for (_, sc, rc) in &all {
                check_counts_len(sc, p)?;
                check_counts_len(rc, p)?;
            }
            for (r, (data, sc, _)) in all.iter().enumerate() {
                check_len("all_to_all_v", data, sc.iter().sum())?;
                for (s, (_, _, rc)) in all.iter().enumerate() {
                    if sc[s] != rc[r] {
                        return Err(DistError::Mismatch(format!(
                            "all_to_all_v: rank {r} sends {} elements to rank {s}, which \
                             expects {}",
                            sc[s], rc[r]
                        )));
                    }
                }
            }
            let pieces = all
                .iter()
                .map(|(data, sc, _)| data.narrow(0, offsets(sc)[me], sc[me]))
                .collect::<tessera::Result<Vec<_>>>()?;
            concat(&pieces, send.dtype())
        })
    }

    /// Each rank copies its peers' send views straight into its own recv views (one strided
    /// copy per block, no staging buffers).
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        let slot = Slot::AllToAllViews {
            send: send.to_vec(),
            recv: recv.to_vec(),
        };
        let me = self.rank;
        self.collective(slot, |slots| {
            let views = each(slots, |s| match s {
                Slot::AllToAllViews { send, recv } => Some((&send[..], &recv[..])),
                _ => None,
            })?;
            check_view_slots(&views)?;
            for (r, (sent, _)) in views.iter().enumerate() {
                recv[r].assign(&sent[me])?;
            }
            Ok(())
        })
    }

    fn split(&self, color: usize, key: usize) -> Result<Comm> {
        let seq = {
            let mut n = self.splits.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            *n
        };
        let (group, rank) = {
            let slots = self.exchange(Slot::Split { color, key })?;
            let checked = check_common(&slots);
            let keys = each(&slots, |s| match s {
                Slot::Split { color, key } => Some((*color, *key)),
                _ => None,
            });
            // Every rank passes the second rendezvous below, whatever it found here.
            let mut members: Vec<(usize, usize)> = keys
                .as_deref()
                .unwrap_or_default()
                .iter()
                .enumerate()
                .filter(|(_, &(c, _))| c == color)
                .map(|(r, &(_, k))| (k, r))
                .collect();
            members.sort_unstable();
            let my = members.iter().position(|&(_, r)| r == self.rank);
            let n = members.len().max(1);
            let group = {
                let mut st = self.group.lock();
                let timeout = self.group.timeout;
                let entry = st
                    .splits
                    .entry((seq, color))
                    .or_insert_with(|| (Group::new(n, timeout), 0));
                entry.1 += 1;
                let g = entry.0.clone();
                if entry.1 == n {
                    st.splits.remove(&(seq, color));
                }
                g
            };
            self.group.rendezvous(self.rank, "split")?;
            checked?;
            keys?;
            let my =
                my.ok_or_else(|| DistError::Comm("split: this rank is not a member".into()))?;
            (group, my)
        };
        Ok(Arc::new(ThreadComm {
            group,
            rank,
            splits: Mutex::new(0),
        }))
    }
}

/// Checks every rank's `all_to_all_views` arguments (send views, recv views; identically on
/// every rank): local rules, matching shapes between each sender and receiver, and no recv
/// view of any rank sharing storage with any rank's send view (which could deadlock the
/// storage locks).
fn check_view_slots(views: &[(&[Tensor], &[Tensor])]) -> Result<()> {
    let p = views.len();
    if views.iter().any(|(s, r)| s.len() != p || r.len() != p) {
        let counts: Vec<String> = views
            .iter()
            .enumerate()
            .map(|(r, (s, v))| format!("rank {r}: {} send, {} recv views", s.len(), v.len()))
            .collect();
        return Err(DistError::Mismatch(format!(
            "all_to_all_views: view counts differ from the group size: {}",
            counts.join("; ")
        )));
    }
    for (r, (send, recv)) in views.iter().enumerate() {
        check_views(send, recv, p).map_err(|e| DistError::Mismatch(format!("rank {r}: {e}")))?;
    }
    for (r, (sent, _)) in views.iter().enumerate() {
        for (s, (_, expected)) in views.iter().enumerate() {
            let (out, inn) = (&sent[s], &expected[r]);
            if out.shape() != inn.shape() {
                return Err(DistError::Mismatch(format!(
                    "all_to_all_views: rank {r} sends shape {:?} to rank {s}, which expects {:?}",
                    out.shape(),
                    inn.shape()
                )));
            }
        }
    }
    let sends = views.iter().flat_map(|(s, _)| s.iter());
    let recvs = || views.iter().flat_map(|(_, r)| r.iter());
    for out in sends.filter(|v| v.numel() > 0) {
        if recvs().any(|v| v.numel() > 0 && v.shares_storage(out)) {
            return Err(DistError::Placement(
                "all_to_all_views: a rank receives into storage that a rank sends from".into(),
            ));
        }
    }
    Ok(())
}

fn check_counts_len(counts: &[usize], p: usize) -> Result<()> {
    if counts.len() != p {
        return Err(DistError::Mismatch(format!(
            "{} counts for a group of {p} ranks",
            counts.len()
        )));
    }
    Ok(())
}

/// Runs `f` on `p` in-process ranks (one thread each) and returns each rank's result in rank
/// order; a rank whose closure panicked gives [`DistError::RankPanicked`] (and every other
/// rank's pending collective fails instead of hanging).
///
/// ```
/// use tessera_dist::{run_ranks, PartialOp};
/// use tessera::Tensor;
/// let out = run_ranks(3, |comm| {
///     let x = Tensor::from_slice(&[comm.rank() as f64], &[1]).unwrap();
///     comm.all_reduce(&x, PartialOp::Sum).unwrap().to_vec::<f64>().unwrap()
/// });
/// assert!(out.iter().all(|r| r.as_ref().unwrap() == &vec![3.0]));
/// ```
pub fn run_ranks<R: Send>(p: usize, f: impl Fn(Comm) -> R + Sync) -> Vec<Result<R>> {
    let timeout = std::env::var("TESSERA_DIST_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
    run_ranks_with_timeout(p, timeout, f)
}

/// [`run_ranks`] with an explicit collective timeout.
pub fn run_ranks_with_timeout<R: Send>(
    p: usize,
    timeout: Duration,
    f: impl Fn(Comm) -> R + Sync,
) -> Vec<Result<R>> {
    let group = Group::new(p, timeout);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = group
            .comms()
            .into_iter()
            .map(|c| s.spawn(move || f(Arc::new(c))))
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(rank, h)| {
                h.join().map_err(|e| {
                    let message = e
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| e.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    group.abort(DistError::Aborted(format!("rank {rank} panicked")));
                    DistError::RankPanicked { rank, message }
                })
            })
            .collect()
    })
}
