//! `oidc_exchange`: see `ferrvault_fuzz::exchange` for what it checks.
#![no_main]

use ferrvault_fuzz::exchange;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| exchange::check(data));
