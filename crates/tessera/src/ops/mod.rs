//! The operator registry (docs/design.md O1, O2): every op callable by name, with typed parameters,
//! inference separate from compute, and storage-type-aware dispatch. The top layer of the
//! crate: it may use every other module, none uses it.
//!
//! Inside: `stype` and `params` (leaves), `def` (what an op is), `fallback` (the fallback log),
//! `dispatch` (how a call runs: the one dispatch on storage type), `defs` (every op's
//! definition), `registry` (ops by name, `invoke`), `methods` (the storage-aware `Tensor`
//! methods, which run their op's definition).

mod def;
mod defs;
mod dispatch;
pub mod fallback;
mod grad_util;
mod methods;
pub mod params;
pub mod registry;
pub mod stype;

pub use def::{Gradient, Op, OpDef, OpInfo};
pub use fallback::{fallback_count, set_fallback_hook, FallbackEvent};
pub use methods::MatrixNorm;
pub use registry::{invoke, invoke_into, registry, Registry};
pub use stype::{DispatchMode, StorageType, StypeDecision, TensorMeta};
