//! The floor of `bench scale` (issue 39) sends exactly the operator's Kubernetes writes: the
//! same verbs on the same resources, as many per object, counted by the Kubernetes simulator's
//! audit of each driver's identity. A floor that wrote less would flatter the headline ratio
//! (operator / floor); one that wrote more would hide the operator's overhead.

use std::{process::Command, time::Duration};

use ferrvault_sim::testkit::process::Spawned;

/// Objects of the run: small, so the test is quick; the writes per object do not depend on it.
const OBJECTS: usize = 20;

#[test]
fn the_floor_should_send_the_operators_writes_per_object_and_nothing_else() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferrvault-dev"));
    command.args([
        "bench",
        "scale",
        &format!("--sizes={OBJECTS}"),
        "--runs=1",
        "--drivers=operator,floor",
        "--huge-size=0",
        "--probes=2",
        "--timeout-seconds=60",
    ]);
    let mut bench = Spawned::start(command);
    let status = bench.wait_exit(Duration::from_secs(240));
    let output = bench.output();
    assert_eq!(status.code(), Some(0), "{output}");
    let writes = |driver: &str| {
        let table = output
            .split("Kubernetes writes by resource until all Ready")
            .nth(1)
            .unwrap_or_else(|| panic!("no writes table:\n{output}"));
        let line = table
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{OBJECTS}  {driver} ")))
            .unwrap_or_else(|| panic!("no writes of {driver}:\n{output}"));
        line.split_once(driver).expect("the label").1.trim().to_owned()
    };
    let operator = writes("ferrvault-operator");
    assert!(
        operator.contains(&format!("create secrets {}", OBJECTS + 1))
            && operator.contains(&format!("patch ferrvaultsecrets/status {OBJECTS}")),
        "the operator's writes were counted: {operator}"
    );
    assert_eq!(writes("floor"), operator, "{output}");
    assert!(!output.contains("unfinished"), "{output}");
}
