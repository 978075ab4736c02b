//! `reveal_ferrvault`: see `ferrvault_fuzz::reveal` for what it checks.
#![no_main]

use ferrvault_fuzz::reveal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reveal::check(reveal::Wire::FerrVault, data));
