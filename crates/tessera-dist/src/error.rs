//! The one error type of `tessera-dist`.

use tessera::TesseraError;

/// Everything that can go wrong with global tensors and communication. No public function
/// of this crate panics on bad input; a failed collective returns an error on every rank.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// An error of the local (single-device) computation.
    #[error(transparent)]
    Tensor(#[from] TesseraError),
    /// An SBP, mesh or shape that does not fit (bad split axis, wrong local shape, ...).
    #[error("invalid placement: {0}")]
    Placement(String),
    /// Ranks called different collectives, or the same one with inconsistent arguments.
    #[error("SPMD mismatch: {0}")]
    Mismatch(String),
    /// The group was aborted (a rank panicked or left while others waited).
    #[error("communicator aborted: {0}")]
    Aborted(String),
    /// A collective waited longer than the group's timeout.
    #[error("collective timed out: {0}")]
    Timeout(String),
    /// An error reported by the communication backend (MPI).
    #[error("communication error: {0}")]
    Comm(String),
    /// No SBP signature is known for this op and these inputs.
    #[error("no SBP signature: {0}")]
    NoSignature(String),
    /// A rank's closure panicked (thread backend, [`crate::run_ranks`]).
    #[error("rank {rank} panicked: {message}")]
    RankPanicked {
        /// The rank that panicked.
        rank: usize,
        /// The panic message.
        message: String,
    },
}

/// `Result` with [`DistError`].
pub type Result<T, E = DistError> = std::result::Result<T, E>;
