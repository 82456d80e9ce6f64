//! The opening all-gather of every collective of the MPI backend: each rank's record
//! ([`crate::agreement`], pure and fuzzed) to every rank, then the verdict.

use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator as _, CommunicatorCollectives};

pub(crate) use crate::agreement::{digest, pair_sum, Kind, Terms};
use crate::agreement::{record, verdict, RECORD};
use crate::error::Result;

/// One all-gather of every rank's record over `comm`, then [`verdict`]: `Ok(true)` when every
/// rank takes the single-host path, `Ok(false)` for the MPI path, the same error on every
/// rank otherwise. Collective: every rank calls it, whatever its `local` result.
pub(crate) fn agree(
    comm: &SimpleCommunicator,
    what: &str,
    terms: &Terms,
    local: Result<()>,
) -> Result<bool> {
    let p = comm.size() as usize;
    let record = record(terms, local.is_err());
    let mut all = vec![0u64; RECORD * p];
    comm.all_gather_into(&record[..], &mut all[..]);
    verdict(comm.rank() as usize, what, &all, local)
}
