//! Starting the real `ferrvault-operator` binary in tests: where it is, the command line every
//! launcher starts from ([`run_command`]), and the pieces of [`ferrvault_sim::testkit`] every
//! process test uses with it.

use std::{ffi::OsStr, path::PathBuf, process::Command};

pub use ferrvault_sim::testkit::{
    http::{call, client as http, free_port, get, wait_for_200},
    process::{Addresses, Spawned},
    tools::promtool_check_metrics,
};

/// The binary's name, as cargo builds it for the operator's integration tests.
const BINARY: &str = "ferrvault-operator";

/// The `ferrvault-operator` binary the running integration test was built with.
///
/// `CARGO_BIN_EXE_ferrvault-operator` (cargo) or `NEXTEST_BIN_EXE_ferrvault-operator` (nextest)
/// when the runner sets it; otherwise the binary next to the test's `deps/` folder, where cargo
/// puts the package's binaries before it runs the package's integration tests.
///
/// # Panics
/// When no such binary exists (a test outside the operator package's integration tests).
pub fn binary() -> PathBuf {
    let path = [
        format!("CARGO_BIN_EXE_{BINARY}"),
        format!("NEXTEST_BIN_EXE_{BINARY}"),
    ]
    .iter()
    .find_map(std::env::var_os)
    .map(PathBuf::from)
    .unwrap_or_else(|| {
        let test = std::env::current_exe().expect("the running test's path");
        test.parent()
            .and_then(|deps| deps.parent())
            .expect("a test binary in target/<profile>/deps")
            .join(BINARY)
    });
    assert!(
        path.exists(),
        "{} is missing: run the operator package's integration tests",
        path.display()
    );
    path
}

/// `ferrvault-operator run` against `kubeconfig`, with every server on an ephemeral loopback port
/// and JSON logs, plus `extra` flags (the last value of a flag wins): what every test that starts
/// the binary starts from.
///
/// # Panics
/// As [`binary`].
pub fn run_command(kubeconfig: impl AsRef<OsStr>, extra: &[&str]) -> Command {
    let mut command = Command::new(binary());
    command
        .args(["run", "--kubeconfig"])
        .arg(kubeconfig)
        .args([
            "--metrics-bind-address=127.0.0.1:0",
            "--health-probe-bind-address=127.0.0.1:0",
            "--admin-bind-address=127.0.0.1:0",
            "--log-format=json",
        ])
        .args(extra);
    command
}
