//! The Go operator's command line, as its Deployment or a platform team's overlay passes it,
//! starts this binary (issue 14: each of these exited 2 before): Go's single-dash syntax, boolean
//! values, controller-runtime's zap flags, metrics turned off with `0`, and `:PORT` reachable over
//! IPv6 as well as IPv4.

use std::{net::TcpListener, process::Command, time::Duration};

use crate::process_support::{Spawned, binary, free_port, get, wait_for_200};
use ferrvault_operator::api::crdgen;
use ferrvault_sim::kube::KubeSim;
use kube::{Api, api::PostParams};

#[tokio::test(flavor = "multi_thread")]
async fn go_flag_syntax_and_zap_flags_should_start_the_operator_with_metrics_off() {
    let sim = KubeSim::start().await.expect("the simulator starts");
    for crd in crdgen::crds() {
        Api::all(sim.client())
            .create(&PostParams::default(), &crd)
            .await
            .expect("CRD created");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
    let probes = free_port();
    let mut command = Command::new(binary());
    command.arg("run").args([
        "-metrics-bind-address=0".to_owned(),
        format!("-health-probe-bind-address=:{probes}"),
        "-leader-elect=false".into(),
        "--leader-elect-id".into(),
        "ferrvault-operator.ferrvault.com".into(),
        "-zap-log-level=2".into(),
        "-zap-encoder".into(),
        "console".into(),
        "--zap-devel=true".into(),
        "--zap-stacktrace-level=error".into(),
        "--zap-time-encoding=iso8601".into(),
        "-stall-threshold=15m".into(),
        "-reconcile-timeout".into(),
        "2m".into(),
        format!("-kubeconfig={}", kubeconfig.display()),
    ]);
    let mut operator = Spawned::start(command);
    let line = operator.wait_for_line("http servers listening", Duration::from_secs(30));
    assert!(
        line.contains("metrics=\"disabled\"") || line.contains("metrics=disabled"),
        "console lines (--zap-encoder=console), metrics off: {line}"
    );
    wait_for_200(
        &format!("http://127.0.0.1:{probes}/readyz"),
        Duration::from_secs(30),
    )
    .await;
    if TcpListener::bind("[::1]:0").is_ok() {
        let (status, body) = get(&format!("http://[::1]:{probes}/healthz")).await;
        assert_eq!(
            (status, body.as_str()),
            (200, "ok"),
            ":PORT answers over IPv6 too"
        );
    }
    assert!(
        operator.output().contains("DEBUG") || operator.output().contains("TRACE"),
        "--zap-log-level=2 logs below info:\n{}",
        operator.output()
    );
    operator.sigterm();
    let exit = operator.wait_exit(Duration::from_secs(15));
    assert_eq!(exit.code(), Some(0), "{}", operator.output());
}

#[test]
fn a_bad_zap_value_should_exit_2_naming_it_like_a_go_flag_error() {
    let output = Command::new(binary())
        .args(["run", "-zap-log-level=loud"])
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("loud"), "{stderr}");
}
