//! `error_body`: see `ferrvault_fuzz::error_body` for what it checks.
#![no_main]

use ferrvault_fuzz::error_body;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| error_body::check(data));
