//! MPI's thread level (docs/design.md D9; issue 15, item 6). [`super::MpiComm`] is `Send +
//! Sync`, so its collectives may be called from any thread; that is sound as is only under
//! `MPI_THREAD_MULTIPLE`. `MpiUniverse::init` asks for it and records the level MPI provides
//! ([`Policy::for_level`]): below it, every MPI call of the backend runs under one
//! process-wide lock (`MPI_THREAD_SERIALIZED`), and under `MPI_THREAD_FUNNELED` or
//! `MPI_THREAD_SINGLE` a call from another thread than the one that initialised MPI is an
//! error instead of undefined behaviour.
//!
//! The lock is reentrant per thread (a collective that calls another, an axis collective
//! falling back to a flat one, takes it once). Two threads of one process that run blocking
//! collectives on different communicators at once can deadlock under the lock (each rank's
//! lock holder waits for a peer whose lock is held by the other collective): under a lower
//! level, call collectives from one thread at a time.

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;

use mpi::Threading;

use crate::error::{DistError, Result};

/// How the backend's MPI calls are guarded for a thread level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// `MPI_THREAD_MULTIPLE`: any thread, concurrently.
    Free,
    /// `MPI_THREAD_SERIALIZED`: any thread, one at a time (the lock).
    Serialize,
    /// `MPI_THREAD_FUNNELED` / `MPI_THREAD_SINGLE`: only the thread that initialised MPI
    /// (and under the lock).
    InitThreadOnly,
}

impl Policy {
    /// The policy under which calls from any `Send + Sync` handle stay sound when MPI
    /// provides `provided`.
    pub fn for_level(provided: Threading) -> Policy {
        match provided {
            Threading::Multiple => Policy::Free,
            Threading::Serialized => Policy::Serialize,
            Threading::Funneled | Threading::Single => Policy::InitThreadOnly,
        }
    }
}

/// The guard of a process's MPI calls: the policy, the thread that initialised MPI, the lock.
pub(crate) struct Serial {
    policy: OnceLock<(Policy, ThreadId)>,
    lock: Mutex<()>,
}

thread_local! {
    /// How many guards this thread holds (the lock is taken by the outermost one only).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// A held right to call MPI (the lock, when the policy needs it); released on drop.
pub(crate) struct Guard<'a> {
    _lock: Option<MutexGuard<'a, ()>>,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

impl Serial {
    /// A guard with no policy yet (calls are free until [`Serial::set`]).
    pub const fn new() -> Serial {
        Serial {
            policy: OnceLock::new(),
            lock: Mutex::new(()),
        }
    }

    /// Records the policy for the level MPI provided, and the calling (initialising) thread.
    pub fn set(&self, policy: Policy) {
        let _ = self.policy.set((policy, std::thread::current().id()));
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy.get().map_or(Policy::Free, |p| p.0)
    }

    /// Enters an MPI call: takes the lock unless the level is `MULTIPLE` or this thread holds
    /// it already; an error from a thread MPI does not allow.
    pub fn enter(&self) -> Result<Guard<'_>> {
        let (policy, init) = match self.policy.get() {
            None | Some((Policy::Free, _)) => (Policy::Free, None),
            Some(&(p, t)) => (p, Some(t)),
        };
        if policy == Policy::InitThreadOnly && init != Some(std::thread::current().id()) {
            return Err(DistError::Comm(
                "MPI provides only MPI_THREAD_FUNNELED here: call collectives from the thread \
                 that ran MpiUniverse::init"
                    .into(),
            ));
        }
        let outer = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get() == 1
        });
        let lock = (policy != Policy::Free && outer)
            .then(|| self.lock.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Guard { _lock: lock })
    }
}

/// The guard of this process's MPI calls.
pub(crate) static SERIAL: Serial = Serial::new();

/// [`Serial::enter`] on the process's guard.
pub(crate) fn enter() -> Result<Guard<'static>> {
    SERIAL.enter()
}

/// The level to ask MPI for: `MPI_THREAD_MULTIPLE`, unless `TESSERA_DIST_MPI_THREADING` names
/// a lower one (`serialized`, `funneled`, `single`: to test the lock).
pub(crate) fn requested_level() -> Threading {
    match std::env::var("TESSERA_DIST_MPI_THREADING").as_deref() {
        Ok("serialized") => Threading::Serialized,
        Ok("funneled") => Threading::Funneled,
        Ok("single") => Threading::Single,
        _ => Threading::Multiple,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn policy_follows_the_provided_level() {
        assert_eq!(Policy::for_level(Threading::Multiple), Policy::Free);
        assert_eq!(Policy::for_level(Threading::Serialized), Policy::Serialize);
        assert_eq!(
            Policy::for_level(Threading::Funneled),
            Policy::InitThreadOnly
        );
        assert_eq!(Policy::for_level(Threading::Single), Policy::InitThreadOnly);
    }

    #[test]
    fn serialized_calls_exclude_each_other_and_nest() {
        let s = Serial::new();
        s.set(Policy::Serialize);
        let inside = AtomicUsize::new(0);
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    for _ in 0..200 {
                        let _g = s.enter().unwrap();
                        // Reentrant: a nested call on the same thread does not deadlock.
                        let _inner = s.enter().unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
    }

    #[test]
    fn funneled_refuses_other_threads() {
        let s = Serial::new();
        s.set(Policy::InitThreadOnly);
        assert!(s.enter().is_ok());
        std::thread::scope(|sc| {
            sc.spawn(|| assert!(matches!(s.enter(), Err(DistError::Comm(_)))));
        });
        let free = Serial::new();
        free.set(Policy::Free);
        std::thread::scope(|sc| {
            sc.spawn(|| assert!(free.enter().is_ok()));
        });
    }
}
