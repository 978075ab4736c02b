//! Starting the real `ferrvault-operator` binary in tests: where it is, and the shared harness
//! pieces ([`ferrvault_sim::testkit`]) every process test uses with it.
#![allow(dead_code, unused_imports)] // Each test crate that includes this module uses a different part of it.

use std::path::PathBuf;

pub use ferrvault_sim::testkit::{
    http::{call, client as http, free_port, get, wait_for_200},
    process::{Addresses, Spawned},
    tools::promtool_check_metrics,
};

/// The binary under test.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ferrvault-operator"))
}
