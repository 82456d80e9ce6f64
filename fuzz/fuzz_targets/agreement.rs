//! libFuzzer entry for `fuzz/checks/agreement.rs` (the property is documented there).
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::agreement::check(data));
