//! Kernels: the iteration planner and the loops built on it. Kernels are generic over
//! [`Element`](crate::Element) and reached through [`with_dtype!`](crate::with_dtype).

pub mod plan;
