//! The scenario harness of issue 7: both simulators in the test process, 1..N real
//! `ferrvault-operator run` processes against them, bounded polling, and one leak scan over every
//! byte a scenario produced.
//!
//! - [`cluster::Cluster`]: the Kubernetes and FerrVault simulators, CRDs installed, a kubeconfig
//!   per identity, object builders and status reads.
//! - [`operator::OperatorProcess`]: one operator process (JSON logs, servers on ephemeral ports,
//!   small lease timings), its probes, scrapes, SIGTERM and SIGKILL; its log is written to
//!   `$CARGO_TARGET_TMPDIR/scenarios/<scenario>/<process>.log`.
//! - [`leaks`]: the one scanner every scenario ends with.
//!
//! Reuses [`ferrvault_testkit`]: [`process`] (spawning the binary), [`fixtures`] (object builders,
//! the distinctive secret values and tokens) and [`strict_json`].
#![allow(dead_code, missing_docs)] // each scenario file uses a different subset

pub mod audit;
pub mod cluster;
pub mod operator;

pub use ferrvault_testkit::{fixtures, leaks, process, strict_json};

pub use ferrvault_sim::testkit::poll_until;

/// The last step of every scenario (scenario 9 of issue 7): scrape each operator still
/// running (metrics and `/debug/*`), scan the cluster's Events and statuses and every
/// operator's log and scrapes for the shared secret values and tokens plus `extra`, and print
/// how long the scenario ran (nextest shows it with `--no-capture`).
pub async fn finish(
    scenario: &str,
    started: std::time::Instant,
    cluster: &cluster::Cluster,
    operators: Vec<operator::OperatorProcess>,
    extra: &[&str],
) {
    let mut evidence = cluster.evidence().await;
    for mut operator in operators {
        if operator.running() {
            operator.scrape().await;
        }
        evidence.extend(operator.evidence());
    }
    let mut needles = fixtures::sensitive_strings();
    needles.extend(extra);
    evidence.assert_no_leaks(&needles);
    eprintln!(
        "scenario {scenario}: wall time {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
