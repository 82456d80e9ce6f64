//! Global tensors for Tessera (docs/design.md D1–D9): a logical tensor placed on a 1-D or 2-D mesh of
//! ranks with an nd-SBP (split, broadcast, partial), boxing between placements, and global
//! ops that run the ordinary local op of `tessera` on each rank.
//!
//! ```
//! use tessera::{DType, Tensor};
//! use tessera_dist::{ops, run_ranks, GlobalTensor, Mesh, PartialOp, Sbp};
//! let out = run_ranks(4, |comm| -> tessera_dist::Result<Vec<f32>> {
//!     let mesh = Mesh::line(comm);
//!     let full = Tensor::arange(0, 10, 1, DType::F32)?;
//!     let x = GlobalTensor::from_logical(&full, &[Sbp::Split(0)], &mesh)?;
//!     let s = ops::reduce(&x, "sum", None, false)?;
//!     assert_eq!(s.sbp(), &[Sbp::Partial(PartialOp::Sum)]);
//!     Ok(s.to_full()?.to_vec::<f32>()?)
//! });
//! assert!(out.into_iter().all(|r| r.unwrap().unwrap() == vec![45.0]));
//! ```

#[doc(hidden)]
pub mod agreement;
pub mod autograd;
pub mod boxing;
pub mod comm;
pub mod error;
pub mod global;
pub mod mesh;
#[cfg(feature = "mpi")]
pub mod mpi_backend;
pub mod ops;
pub mod sbp;
pub mod signatures;
pub mod thread;
mod tour;
pub mod train;

pub use comm::{identity, Comm, Communicator};
pub use error::{DistError, Result};
pub use global::GlobalTensor;
pub use mesh::Mesh;
pub use sbp::{balanced_counts, balanced_range, local_ranges, physical_shape, PartialOp, Sbp};
pub use thread::{run_ranks, run_ranks_with_timeout};
pub use tour::tour_section;
