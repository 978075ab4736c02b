//! `transforms`: see `ferrvault_fuzz::transforms` for what it checks.
#![no_main]

use ferrvault_fuzz::transforms;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| transforms::check(data));
