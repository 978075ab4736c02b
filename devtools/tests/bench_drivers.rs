//! The benchmark's baselines really sync: `ferrvault-dev bench scale` with both
//! `kube_runtime::Controller` set-ups (the same `SecretReconciler` without the operator's watches,
//! every read a GET) brings a few objects to Ready. A baseline that silently does nothing would
//! make every ratio of the README meaningless.

use std::{process::Command, time::Duration};

use ferrvault_sim::testkit::process::Spawned;

#[test]
fn both_controller_baselines_should_bring_every_object_to_ready() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferrvault-dev"));
    command.args([
        "bench",
        "scale",
        "--sizes=20",
        "--runs=1",
        "--drivers=competent-controller,naive-controller",
        "--huge-size=0",
        "--probes=2",
        "--timeout-seconds=30",
    ]);
    let mut bench = Spawned::start(command);
    let status = bench.wait_exit(Duration::from_secs(120));
    let output = bench.output();
    assert_eq!(status.code(), Some(0), "{output}");
    for driver in ["competent Controller", "naive Controller"] {
        let line = output
            .lines()
            .find(|l| l.contains("run 1") && l.contains(driver))
            .unwrap_or_else(|| panic!("no run of the {driver}:\n{output}"));
        assert!(line.contains("Ready ") && line.ends_with('s'), "{line}");
    }
    assert!(!output.contains("unfinished"), "{output}");
}
