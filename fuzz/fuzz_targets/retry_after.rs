//! `retry_after`: see `ferrvault_fuzz::retry_after` for what it checks.
#![no_main]

use ferrvault_fuzz::retry_after;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retry_after::check(data));
