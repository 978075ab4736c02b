//! `hint_body`: see `ferrvault_fuzz::hint_body` for what it checks.
#![no_main]

use ferrvault_fuzz::hint_body;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hint_body::check(data));
