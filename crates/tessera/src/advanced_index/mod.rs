//! Advanced indexing (docs/design.md X1-X5): keys mixing index specs with integer arrays and
//! boolean masks, planned as NumPy combines them ([`IndexItem`]), the gather kernels and their
//! inverses, and boolean-mask compaction. It sits above [`crate::index`] (basic specs and
//! views) and [`crate::tensor`]: the results are copies.

pub(crate) mod gather;
mod key;
pub(crate) mod mask;

pub use key::IndexItem;
pub(crate) use key::{plan, wrapped, Gather, Plan};
