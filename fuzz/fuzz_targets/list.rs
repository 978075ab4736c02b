//! `list`: see `ferrvault_fuzz::list` for what it checks.
#![no_main]

use ferrvault_fuzz::list;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| list::check(data));
