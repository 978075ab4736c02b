//! `lenient_secret`: see `ferrvault_fuzz::lenient` for what it checks.
#![no_main]

use ferrvault_fuzz::lenient;
use ferrvault_operator::api::FerrVaultSecret;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lenient::check::<FerrVaultSecret>(data));
