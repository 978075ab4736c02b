//! `template`: see `ferrvault_fuzz::template` for what it checks.
#![no_main]

use ferrvault_fuzz::template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| template::check(data));
