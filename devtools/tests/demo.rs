//! `ferrvault-dev demo`, the real binary: the README's first command reaches all-Ready
//! and prints what it promises, and never a secret value or token.

use std::{process::Command, time::Duration};

use ferrvault_sim::testkit::process::Spawned;
use ferrvault_testkit::sample_world::{self, VAULT_SECRETS};

#[test]
fn demo_with_exit_when_ready_should_reach_all_ready_print_the_endpoints_and_exit_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("demo.kubeconfig");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferrvault-dev"));
    command.args([
        "demo",
        "--exit-when-ready",
        "--ready-timeout=90s",
        "--kubeconfig-out",
    ]);
    command.arg(&kubeconfig);
    let mut demo = Spawned::start(command);
    let status = demo.wait_exit(Duration::from_secs(120));
    let output = demo.output();
    assert_eq!(status.code(), Some(0), "{output}");
    for resource in [
        "demo/ferrvault ",
        "demo/ferrlabs-cloud ",
        "demo/app-config ",
        "demo/api-key ",
        "demo/app-dsn ",
        "demo/registry-pull ",
        // The cluster connection's sample: one connection, fanned out to three namespaces.
        "team-a/app-db ",
        "team-b/app-db ",
        "team-c/app-db ",
        // The cluster secret's sample: one read, copied into the same three namespaces.
        "/shared-config ",
    ] {
        assert!(
            output
                .lines()
                .any(|line| line.contains(resource) && line.contains("Ready=True")),
            "no Ready=True line for {resource}:\n{output}"
        );
    }
    for promised in [
        "All resources are Ready",
        "/metrics",
        "/healthz",
        "/debug/actors?format=text",
        &format!("kubectl --kubeconfig {} get fvs -A", kubeconfig.display()),
    ] {
        assert!(
            output.contains(promised),
            "the demo should print {promised:?}:\n{output}"
        );
    }
    assert!(kubeconfig.exists(), "the kubeconfig is written");
    let manifests = sample_world::manifests().expect("samples parse");
    let mut secrets: Vec<String> = sample_world::sample_tokens(&manifests);
    secrets.extend(VAULT_SECRETS.iter().map(|(_, value)| (*value).to_owned()));
    for secret in secrets {
        assert!(!output.contains(&secret), "the demo printed a secret:\n{output}");
    }
}
