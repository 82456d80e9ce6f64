//! Kernels: the iteration planner and the loops built on it. Kernels are generic over
//! [`Element`](crate::Element) and reached through [`with_dtype!`](crate::with_dtype).

pub mod elementwise;
// plan.rs trips clippy 1.95's needless_range_loop and type_complexity (reported upstream).
#[allow(clippy::needless_range_loop, clippy::type_complexity)]
pub mod plan;
pub mod reduce;
pub mod scalar_math;
