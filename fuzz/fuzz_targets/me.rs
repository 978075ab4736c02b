//! `me`: see `ferrvault_fuzz::me` for what it checks.
#![no_main]

use ferrvault_fuzz::me;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| me::check(data));
