//! `ferrvault-dev bench fanout` (issue 37) reports what the simulators counted: at a tiny size,
//! one ClusterFerrVaultSecret's forced refresh is exactly one FerrVault request for every
//! namespace, the namespaced shape's is at least one and at most one per namespace (the
//! operator's single flight may join them), and every copy cost at least its own write. Times
//! are not checked: they depend on the machine.

use std::{process::Command, time::Duration};

use ferrvault_sim::testkit::process::Spawned;

/// Namespaces of the run: small, so the test is quick; the counts per refresh do not depend on it.
const NAMESPACES: usize = 5;

/// The figures after `label` on the row of `label` in the fan-out table: all copies (s),
/// FerrVault requests per refresh, writes per copy, peak RSS.
fn figures(output: &str, label: &str) -> Vec<f64> {
    let line = output
        .lines()
        .find(|l| l.starts_with(&format!("N = {NAMESPACES} ")) && l.contains(label))
        .unwrap_or_else(|| panic!("no row of {label}:\n{output}"));
    line.split_once(label)
        .expect("the label")
        .1
        .split_whitespace()
        .map(|f| f.parse().unwrap_or_else(|_| panic!("{f} in {line}")))
        .collect()
}

#[test]
fn bench_fanout_should_count_one_ferrvault_request_per_refresh_for_a_cluster_secret() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferrvault-dev"));
    command.args([
        "bench",
        "fanout",
        &format!("--namespaces={NAMESPACES}"),
        "--runs=1",
        "--timeout-seconds=60",
    ]);
    let mut bench = Spawned::start(command);
    let status = bench.wait_exit(Duration::from_secs(240));
    let output = bench.output();
    assert_eq!(status.code(), Some(0), "{output}");
    let cluster = figures(&output, "one ClusterFerrVaultSecret");
    let namespaced = figures(&output, "a FerrVaultSecret per namespace");
    assert_eq!(cluster[1], 1.0, "one request per refresh:\n{output}");
    assert!(
        (1.0..=NAMESPACES as f64).contains(&namespaced[1]),
        "the namespaced shape's requests counted:\n{output}"
    );
    for row in [&cluster, &namespaced] {
        assert!(row[2] >= 1.0, "each copy is at least its own write:\n{output}");
    }
    let target = output
        .lines()
        .find(|l| l.starts_with("fan-out: 1 FerrVault request per refresh"))
        .unwrap_or_else(|| panic!("no target:\n{output}"));
    assert!(target.ends_with(" met"), "{target}");
    assert!(!output.contains("unfinished"), "{output}");
}
