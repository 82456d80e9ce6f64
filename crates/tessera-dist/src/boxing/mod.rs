//! Boxing (docs/design.md D6): converting a global tensor from one nd-SBP to another, planned
//! without communication ([`plan()`]) and executed through a [`crate::Communicator`]
//! ([`exec`]).

pub mod exec;
pub mod plan;

pub use plan::{cost, plan, step_bytes, Plan, Step, StepKind};
