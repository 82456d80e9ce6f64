//! The MPI environment of a process: initialisation at the thread level the backend needs,
//! the kernels' share of the host's cores, and the collective free of the shared windows
//! before `MPI_Finalize`.

use std::sync::Arc;

use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator as _;

use super::{serial, shm, MpiComm};
use crate::comm::Comm;
use crate::error::{DistError, Result};

/// The MPI environment of this process: keep it alive until MPI is no longer used
/// (dropping it finalises MPI).
pub struct MpiUniverse {
    // Fields drop in order: the world communicator is freed before `MPI_Finalize`.
    world: Arc<MpiComm>,
    _universe: Universe,
}

impl MpiUniverse {
    /// Initialises MPI (once per process; a second call is an error).
    ///
    /// Asks for `MPI_THREAD_MULTIPLE` and checks the level MPI provides: below it, the
    /// backend serialises its MPI calls (module `serial`; D9).
    pub fn init() -> Result<MpiUniverse> {
        let (universe, provided) = mpi::initialize_with_threading(serial::requested_level())
            .ok_or_else(|| DistError::Comm("MPI is already initialised".into()))?;
        serial::SERIAL.set(serial::Policy::for_level(provided));
        share_cores(&universe.world());
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

    /// Whether large collectives on the world communicator take the single-host path
    /// (every rank on this host, not turned off with `TESSERA_DIST_SHM=0`). Collective on
    /// first use: every rank must call it.
    pub fn shared_memory(&self) -> bool {
        let _g = serial::enter();
        self.world.shm().is_some()
    }

    /// Whether MPI provides `MPI_THREAD_MULTIPLE` (otherwise the backend serialises its MPI
    /// calls, and under `FUNNELED` refuses calls from other threads than the initialising one).
    pub fn thread_multiple(&self) -> bool {
        serial::SERIAL.policy() == serial::Policy::Free
    }
}

impl Drop for MpiUniverse {
    fn drop(&mut self) {
        // Before `MPI_Finalize` (the fields drop after this): Open MPI unmaps the shared
        // windows left at finalize, so they are freed here, collectively, after the tensors
        // still using them moved to private memory.
        let _g = serial::enter();
        shm::free_all();
    }
}

/// Sizes the kernels' thread pool (rayon's global pool) to this process's share of the
/// host's cores, `cores / ranks on this host` (at least 1), unless `RAYON_NUM_THREADS` or
/// `TESSERA_NUM_THREADS` is set or the pool already runs. With a pool of every core in every rank, p ranks on one host run
/// p × cores threads that compete with the ranks' own threads, which wait in MPI calls by
/// spinning (PyTorch's launcher sets one OpenMP thread per process for the same reason).
/// Collective over `world` (every rank calls it from [`MpiUniverse::init`]).
fn share_cores(world: &SimpleCommunicator) {
    let here = usize::try_from(world.split_shared(0).size())
        .unwrap_or(1)
        .max(1);
    if std::env::var_os("RAYON_NUM_THREADS").is_some()
        || std::env::var_os("TESSERA_NUM_THREADS").is_some()
    {
        tessera::kernels::parallel::enabled();
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // An error means the pool already runs (the program used it before MPI): keep it.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads((cores / here).max(1))
        .build_global();
    // Registers the core's fork handler now that the pool exists, so a child forked before
    // any kernel ran still runs its kernels sequentially (docs/design.md, "Fork").
    tessera::kernels::parallel::enabled();
}

/// Test hook, not part of the API: `true` makes the next shared window this process allocates
/// fail after `MPI_Win_allocate_shared` (as a failed `MPI_Win_lock_all` would), so tests can
/// check that every rank then gets an error (docs/design.md D7); `false` disarms it. Returns
/// whether the hook was armed (still unused).
#[doc(hidden)]
pub fn fail_next_window(arm: bool) -> bool {
    shm::fail_next_window(arm)
}
