//! libFuzzer entry for `fuzz/checks/row_sparse_parts.rs` (the property is documented there).
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::row_sparse_parts::check(data));
