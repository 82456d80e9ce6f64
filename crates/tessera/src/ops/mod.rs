//! The operator registry (docs/design.md O1, O2): every op callable by name, with typed parameters,
//! inference separate from compute, and storage-type-aware dispatch.

mod defs;
pub mod fallback;
pub mod params;
pub mod registry;
pub mod stype;

pub use fallback::{fallback_count, set_fallback_hook, FallbackEvent};
pub use registry::{invoke, invoke_into, registry, Op, OpDef, OpInfo, Registry};
pub use stype::{DispatchMode, StorageType, StypeDecision, TensorMeta};
