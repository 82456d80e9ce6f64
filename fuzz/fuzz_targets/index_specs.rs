//! libFuzzer entry for `fuzz/checks/index_specs.rs` (the property is documented there).
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::index_specs::check(data));
