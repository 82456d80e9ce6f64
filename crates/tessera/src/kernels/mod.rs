//! Kernels: the iteration planner and the loops built on it. Kernels are generic over
//! [`Element`](crate::Element) and reached through [`with_dtype!`](crate::with_dtype).

pub mod complex_math;
pub(crate) mod copy;
pub mod elementwise;
mod extreme;
pub(crate) mod flat;
pub mod parallel;
pub mod plan;
pub mod real_math;
pub mod reduce;
mod reducer;
pub mod scalar_math;
pub mod simd;
pub(crate) mod stream;
pub(crate) mod transpose;
mod truth;
pub mod vmath;
