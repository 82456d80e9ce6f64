//! Kernels: the iteration planner and the loops built on it. Kernels are generic over
//! [`Element`](crate::Element) and reached through [`with_dtype!`](crate::with_dtype).

pub(crate) mod copy;
// `plan.rs` predates clippy's current `needless_range_loop`/`type_complexity` findings (its
// per-operand `for k in 0..K` loops index several arrays at once); it is not edited here.
#[allow(clippy::needless_range_loop, clippy::type_complexity)]
pub mod plan;
pub(crate) mod transpose;
