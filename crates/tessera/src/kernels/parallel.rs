//! The one decision "may this kernel use rayon's pool?" ([`enabled`]), and the fork rule.
//!
//! After `fork()` only the forking thread exists in the child: rayon's global pool still
//! believes it has its worker threads, so the first parallel job would wait forever (a Python
//! `multiprocessing` worker started with the fork method would hang on its first large op).
//! As PyTorch does, the first call of [`enabled`] registers a `pthread_atfork` child handler
//! that marks the process as a forked child; from then on [`enabled`] is false in that child
//! (and in its own children), and every kernel runs on the calling thread. The parent keeps its
//! pool. Code that builds or uses rayon's global pool before any kernel ran (and may then
//! fork) calls [`enabled`] once first so the handler is in place.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// Set in the child of a `fork()` (by the at-fork handler): the pool has no threads there.
static FORKED_CHILD: AtomicBool = AtomicBool::new(false);
static REGISTER: Once = Once::new();

/// The `pthread_atfork` child handler: runs in the child, on the only thread, right after
/// `fork()`; it only stores to atomics, which is async-signal-safe (faer's global parallelism
/// is one atomic: the factorizations, `linalg/`, then run on the calling thread too).
extern "C" fn mark_forked_child() {
    FORKED_CHILD.store(true, Ordering::Relaxed);
    faer::set_global_parallelism(faer::Par::Seq);
}

/// Whether kernels may split work across rayon's pool: the pool has more than one thread
/// and this process is not the child of a `fork()` taken after the handler was registered
/// (see the module doc). Registers that handler on its first call.
pub fn enabled() -> bool {
    REGISTER.call_once(|| {
        #[cfg(unix)]
        // SAFETY: registers a handler with the C runtime; `mark_forked_child` is an
        // `extern "C"` function that lives for the whole program and only stores to an
        // atomic (no allocation, no locks), so it is sound to run in a just-forked child.
        // A failure (ENOMEM) leaves fork handling off, which only matters if the process
        // later forks.
        unsafe {
            libc::pthread_atfork(None, None, Some(mark_forked_child));
        }
    });
    !FORKED_CHILD.load(Ordering::Relaxed) && rayon::current_num_threads() > 1
}

/// Whether this process is a forked child in which kernels run sequentially.
pub fn in_forked_child() -> bool {
    FORKED_CHILD.load(Ordering::Relaxed)
}
