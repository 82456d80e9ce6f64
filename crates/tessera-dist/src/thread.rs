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

/// How long a collective waits for the other ranks by default (override with the
/// environment variable `TESSERA_DIST_TIMEOUT_SECS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What one rank deposits for a collective.
#[derive(Clone)]
struct Slot {
    tag: &'static str,
    dtype: Option<DType>,
    counts: Vec<usize>,
    counts2: Vec<usize>,
    arg: usize,
    data: Option<Tensor>,
    /// `all_to_all_views`: the send views, then the recv views.
    views: Vec<Tensor>,
}

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
    fn collective(
        &self,
        slot: Slot,
        compute: impl FnOnce(&[Slot]) -> Result<Tensor>,
    ) -> Result<Tensor> {
        if let Some(d) = &slot.data {
            if d.rank() != 1 {
                return Err(DistError::Placement(format!(
                    "{}: buffers must be 1-D, got shape {:?}",
                    slot.tag,
                    d.shape()
                )));
            }
        }
        let tag = slot.tag;
        self.group.lock().slots[self.rank] = Some(slot);
        self.group.rendezvous(self.rank, tag)?;
        let slots: Vec<Slot> = self.group.lock().slots.iter().flatten().cloned().collect();
        let result = check_common(&slots).and_then(|()| compute(&slots));
        self.group.rendezvous(self.rank, tag)?;
        result
    }

    fn slot(&self, tag: &'static str, data: Option<&Tensor>) -> Slot {
        Slot {
            tag,
            dtype: data.map(|d| d.dtype()),
            counts: Vec::new(),
            counts2: Vec::new(),
            arg: 0,
            data: data.cloned(),
            views: Vec::new(),
        }
    }
}

/// Checks that every rank called the same collective with the same dtype and arguments.
fn check_common(slots: &[Slot]) -> Result<()> {
    let s0 = &slots[0];
    if slots.iter().any(|s| s.tag != s0.tag) {
        return Err(mismatch("ranks called different collectives", slots, |s| {
            s.tag.to_string()
        }));
    }
    if slots.iter().any(|s| s.dtype != s0.dtype) {
        return Err(mismatch(
            &format!("{}: dtypes differ", s0.tag),
            slots,
            |s| format!("{:?}", s.dtype),
        ));
    }
    if slots.iter().any(|s| s.arg != s0.arg) && s0.tag != "split" {
        return Err(mismatch(
            &format!("{}: arguments differ", s0.tag),
            slots,
            |s| s.arg.to_string(),
        ));
    }
    Ok(())
}

fn same_counts(slots: &[Slot]) -> Result<()> {
    if slots.iter().any(|s| s.counts != slots[0].counts) {
        return Err(mismatch(
            &format!("{}: counts differ", slots[0].tag),
            slots,
            |s| format!("{:?}", s.counts),
        ));
    }
    Ok(())
}

fn check_len(tag: &str, t: &Tensor, want: usize) -> Result<()> {
    if t.numel() != want {
        return Err(DistError::Mismatch(format!(
            "{tag}: buffer has {} elements, counts say {want}",
            t.numel()
        )));
    }
    Ok(())
}

fn op_code(op: PartialOp) -> usize {
    op as usize
}

impl Communicator for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.group.size
    }

    fn barrier(&self) -> Result<()> {
        self.collective(self.slot("barrier", None), |_| {
            Ok(Tensor::zeros(&[0], DType::U8)?)
        })
        .map(drop)
    }

    fn broadcast(&self, buf: &Tensor, root: usize) -> Result<Tensor> {
        let mut slot = self.slot("broadcast", Some(buf));
        slot.arg = root;
        slot.counts = vec![buf.numel()];
        self.collective(slot, |slots| {
            same_counts(slots)?;
            let src = slots.get(root).ok_or_else(|| {
                DistError::Placement(format!("broadcast root {root} of {}", slots.len()))
            })?;
            Ok(src.data.as_ref().expect("broadcast deposits data").copy()?)
        })
    }

    fn all_gather_v(&self, send: &Tensor, counts: &[usize]) -> Result<Tensor> {
        let mut slot = self.slot("all_gather_v", Some(send));
        slot.counts = counts.to_vec();
        self.collective(slot, |slots| {
            same_counts(slots)?;
            check_counts_len(counts, slots.len())?;
            let pieces: Vec<Tensor> = slots
                .iter()
                .map(|s| s.data.clone().expect("data"))
                .collect();
            for (r, p) in pieces.iter().enumerate() {
                check_len("all_gather_v", p, counts[r])?;
            }
            concat(&pieces, send.dtype())
        })
    }

    fn all_reduce(&self, send: &Tensor, op: PartialOp) -> Result<Tensor> {
        let mut slot = self.slot("all_reduce", Some(send));
        slot.arg = op_code(op);
        slot.counts = vec![send.numel()];
        self.collective(slot, |slots| {
            same_counts(slots)?;
            let pieces: Vec<Tensor> = slots
                .iter()
                .map(|s| s.data.clone().expect("data"))
                .collect();
            combine(&pieces, op)
        })
    }

    fn reduce_scatter_v(&self, send: &Tensor, counts: &[usize], op: PartialOp) -> Result<Tensor> {
        let mut slot = self.slot("reduce_scatter_v", Some(send));
        slot.arg = op_code(op);
        slot.counts = counts.to_vec();
        let me = self.rank;
        self.collective(slot, |slots| {
            same_counts(slots)?;
            check_counts_len(counts, slots.len())?;
            let total: usize = counts.iter().sum();
            let at = offsets(counts)[me];
            let mut pieces = Vec::with_capacity(slots.len());
            for s in slots {
                let d = s.data.as_ref().expect("data");
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
        let mut slot = self.slot("all_to_all_v", Some(send));
        slot.counts = send_counts.to_vec();
        slot.counts2 = recv_counts.to_vec();
        let me = self.rank;
        self.collective(slot, |slots| {
            let p = slots.len();
            for s in slots {
                check_counts_len(&s.counts, p)?;
                check_counts_len(&s.counts2, p)?;
            }
            for (r, sr) in slots.iter().enumerate() {
                check_len("all_to_all_v", sr.data.as_ref().expect("data"), sr.counts.iter().sum())?;
                for (s, ss) in slots.iter().enumerate() {
                    if sr.counts[s] != ss.counts2[r] {
                        return Err(DistError::Mismatch(format!(
                            "all_to_all_v: rank {r} sends {} elements to rank {s}, which expects {}",
                            sr.counts[s], ss.counts2[r]
                        )));
                    }
                }
            }
            let pieces = slots
                .iter()
                .map(|s| s.data.as_ref().expect("data").narrow(0, offsets(&s.counts)[me], s.counts[me]))
                .collect::<tessera::Result<Vec<_>>>()?;
            concat(&pieces, send.dtype())
        })
    }

    /// Each rank copies its peers' send views straight into its own recv views (one strided
    /// copy per block, no staging buffers).
    fn all_to_all_views(&self, send: &[Tensor], recv: &[Tensor]) -> Result<()> {
        let mut slot = self.slot("all_to_all_views", None);
        slot.dtype = send.first().map(Tensor::dtype);
        slot.views = send.iter().chain(recv).cloned().collect();
        slot.arg = send.len();
        let me = self.rank;
        self.collective(slot, |slots| {
            check_view_slots(slots)?;
            for (r, s) in slots.iter().enumerate() {
                recv[r].assign(&s.views[me])?;
            }
            Ok(Tensor::zeros(&[0], DType::U8)?)
        })
        .map(drop)
    }

    fn split(&self, color: usize, key: usize) -> Result<Comm> {
        let seq = {
            let mut n = self.splits.lock().unwrap_or_else(|p| p.into_inner());
            *n += 1;
            *n
        };
        let mut slot = self.slot("split", None);
        slot.arg = color;
        slot.counts = vec![key];
        let (group, rank) = {
            let slots = {
                self.group.lock().slots[self.rank] = Some(slot);
                self.group.rendezvous(self.rank, "split")?;
                let st = self.group.lock();
                st.slots.iter().flatten().cloned().collect::<Vec<_>>()
            };
            let checked = check_common(&slots);
            let mut members: Vec<(usize, usize)> = slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.arg == color)
                .map(|(r, s)| (s.counts[0], r))
                .collect();
            members.sort_unstable();
            let my = members
                .iter()
                .position(|&(_, r)| r == self.rank)
                .expect("member");
            let n = members.len();
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
            (group, my)
        };
        Ok(Arc::new(ThreadComm {
            group,
            rank,
            splits: Mutex::new(0),
        }))
    }
}

/// Checks every rank's `all_to_all_views` arguments (identically on every rank): local rules,
/// matching shapes between each sender and receiver, and no recv view of any rank sharing
/// storage with any rank's send view (which could deadlock the storage locks).
fn check_view_slots(slots: &[Slot]) -> Result<()> {
    let p = slots.len();
    for (r, s) in slots.iter().enumerate() {
        if s.arg != p || s.views.len() != 2 * p {
            return Err(mismatch(
                "all_to_all_views: view counts differ from the group size",
                slots,
                |s| format!("{} send, {} recv views", s.arg, s.views.len() - s.arg),
            ));
        }
        check_views(&s.views[..p], &s.views[p..], p)
            .map_err(|e| DistError::Mismatch(format!("rank {r}: {e}")))?;
    }
    for (r, sr) in slots.iter().enumerate() {
        for (s, ss) in slots.iter().enumerate() {
            let (out, inn) = (&sr.views[s], &ss.views[p + r]);
            if out.shape() != inn.shape() {
                return Err(DistError::Mismatch(format!(
                    "all_to_all_views: rank {r} sends shape {:?} to rank {s}, which expects {:?}",
                    out.shape(),
                    inn.shape()
                )));
            }
        }
    }
    let live = |range: std::ops::Range<usize>| {
        slots
            .iter()
            .flat_map(move |s| s.views[range.clone()].iter())
            .filter(|v| v.numel() > 0)
    };
    for out in live(0..p) {
        if live(p..2 * p).any(|v| v.shares_storage(out)) {
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
