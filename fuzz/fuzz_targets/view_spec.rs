//! libFuzzer entry for `fuzz/checks/view_spec.rs` (the property is documented there).
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::view_spec::check(data));
