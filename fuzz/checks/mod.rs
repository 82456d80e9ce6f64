//! The properties the fuzz targets check, one module per target, each a `check(&[u8])` that
//! panics when its property fails. Two drivers include this directory by path: the libFuzzer
//! targets in `fuzz/fuzz_targets/` (`./scripts/fuzz`, nightly, AddressSanitizer) and the
//! corpus replay in `crates/tessera-dist/tests/fuzz_corpus.rs` (stable, part of `cargo test`),
//! so the two cannot drift apart (docs/contributing.md, "Fuzzing").
#![allow(dead_code)] // each libFuzzer target uses one check

pub mod agreement;
pub mod common;
pub mod csr_parts;
pub mod index_specs;
pub mod row_sparse_parts;
pub mod view_spec;

/// A target's property on one input: returns, or panics when the property fails.
pub type Check = fn(&[u8]);

/// Every target by its name (the name of its corpus folder, `fuzz/corpus/<name>`).
pub const TARGETS: [(&str, Check); 5] = [
    ("view_spec", view_spec::check),
    ("index_specs", index_specs::check),
    ("csr_parts", csr_parts::check),
    ("row_sparse_parts", row_sparse_parts::check),
    ("agreement", agreement::check),
];
