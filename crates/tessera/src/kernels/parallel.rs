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
//!
//! Thread count (docs/design.md P3): `TESSERA_NUM_THREADS=n` (a positive integer; anything
//! else is ignored) sizes rayon's global pool when Tessera is first used, unless the program
//! built the pool earlier; otherwise rayon's default applies (`RAYON_NUM_THREADS`, else one
//! thread per core). [`set_num_threads`] does the same at run time: before the pool exists
//! it sizes it exactly; afterwards `1` makes every kernel run on the calling thread, and
//! another count only changes how many pieces the elementwise and reduction kernels cut
//! their work into (the pool's threads still run them; a resizable pool is future work).
//! [`num_threads`] is the count kernels use.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

use crate::error::{ErrorKind, Result};

/// Cap set by [`set_num_threads`] after the pool was built (0: none).
static CAP: AtomicUsize = AtomicUsize::new(0);
static SIZE_POOL: Once = Once::new();

/// Builds rayon's global pool with `TESSERA_NUM_THREADS` threads when the variable holds a
/// positive integer and the pool does not run yet (once per process).
fn size_pool_from_env() {
    // The pool may start here: the fork handler must be in place first (module doc).
    register_fork_handler();
    SIZE_POOL.call_once(|| {
        let n = std::env::var("TESSERA_NUM_THREADS").ok();
        if let Some(n) = n
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
        {
            // An error means the pool already runs (built by the program): keep it.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build_global();
        }
    });
}

/// The number of threads kernels split work across: rayon's pool size (sized by
/// `TESSERA_NUM_THREADS` on first use), capped by [`set_num_threads`]; 1 in a forked child.
///
/// ```
/// assert!(tessera::kernels::parallel::num_threads() >= 1);
/// ```
pub fn num_threads() -> usize {
    size_pool_from_env();
    if FORKED_CHILD.load(Ordering::Relaxed) {
        return 1;
    }
    let pool = rayon::current_num_threads();
    match CAP.load(Ordering::Relaxed) {
        0 => pool,
        cap => cap.min(pool),
    }
}

/// Sets the number of threads kernels use (PyTorch's `torch.set_num_threads`): sizes rayon's
/// global pool when it does not run yet; afterwards `n = 1` runs every kernel on the calling
/// thread and a larger `n` only caps how many pieces kernels cut work into (see the module
/// doc). `n = 0` is an error.
pub fn set_num_threads(n: usize) -> Result<()> {
    if n == 0 {
        return Err(ErrorKind::InvalidArgument(
            "set_num_threads: the thread count must be at least 1".into(),
        )
        .into());
    }
    size_pool_from_env();
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .is_ok();
    CAP.store(if built { 0 } else { n }, Ordering::Relaxed);
    // The factorizations (`linalg/`) take their threads from faer's global setting.
    faer::set_global_parallelism(match num_threads() {
        1 => faer::Par::Seq,
        t => faer::Par::rayon(t),
    });
    Ok(())
}

/// The size from which kernels were forced to use threads ([`force_parallel_from`]);
/// `usize::MAX` when not forced.
static FORCED_FROM: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The element count from which a kernel whose cut-over is `min` (`PAR_MIN`,
/// `PAR_MIN_COSTLY`) splits work across threads: `min`, or less while a benchmark forces
/// threads from a smaller size.
#[inline]
pub(crate) fn cut_over(min: usize) -> usize {
    min.min(FORCED_FROM.load(Ordering::Relaxed))
}

/// Makes every kernel use threads from `n` elements on, whatever its cut-over (`usize::MAX`
/// restores the cut-overs): for `benches/par_cutover.rs`, which measures where threads pay
/// off (docs/design.md P3). Not meant for programs.
#[doc(hidden)]
pub fn force_parallel_from(n: usize) {
    FORCED_FROM.store(n, Ordering::Relaxed);
}

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
    num_threads() > 1
}

/// Registers the at-fork child handler (once per process). Anything that may start rayon's
/// pool calls it first (this module's functions, and the registry for faer).
pub(crate) fn register_fork_handler() {
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
}

/// Whether this process is a forked child in which kernels run sequentially.
pub fn in_forked_child() -> bool {
    FORKED_CHILD.load(Ordering::Relaxed)
}
