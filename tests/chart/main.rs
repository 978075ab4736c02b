//! The Helm chart, rendered by the real `helm` and checked the way a cluster would check it:
//! `helm lint --strict`, `kubernetes-validate --strict` for Kubernetes 1.33 and 1.35, the operator's
//! flags and environment, RBAC least privilege (evaluated like the RBAC authorizer), and the
//! PrometheusRule through `promtool`.
//!
//! Tools come from `.ci/install-tools`; a missing one fails the test ("run bash .ci/install-tools").
//!
//! The real binary: `operator_run` starts `ferrvault-operator run` with the rendered command line
//! (`launch::ContainerLaunch::from_deployment`, ports rebound to free loopback ports, `--kubeconfig`
//! for the Kubernetes simulator) and holds `RUN_FLAGS` to `run --help`; `operator_rbac` checks every
//! API call it makes under the rendered ServiceAccount against the rendered RBAC.

mod audited_run;
mod command_line;
mod crds;
mod docs;
mod hardening;
mod hints;
mod image;
mod launch;
mod migrating_md;
mod migration;
mod monitoring;
mod operator_rbac;
mod operator_run;
mod permissions;
mod pod;
mod promql;
mod rbac;
mod readme;

use ferrvault_testkit::{
    chart::{render, tools},
    process as process_support, strict_json,
};

use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Container, PodSpec},
};
use launch::{ContainerLaunch, Flag, PodIdentity, manager_container};
use rbac::{ApiRequest, Permissions};
use render::{KUBE_VERSIONS, NAMESPACE, Rendering, helm_lint_strict, helm_template, validate_strict};
use serde_json::Value;

/// Every flag of `ferrvault-operator run`: the chart must pass nothing else.
const RUN_FLAGS: &[&str] = &[
    "metrics-bind-address",
    "metrics-secure",
    "metrics-cert-path",
    "metrics-cert-name",
    "metrics-cert-key",
    "health-probe-bind-address",
    "admin-bind-address",
    "hint-bind-address",
    "hint-secret-name",
    "leader-elect",
    "leader-elect-id",
    "leader-elect-namespace",
    "leader-elect-lease-duration",
    "leader-elect-renew-deadline",
    "leader-elect-retry-period",
    "shards",
    "default-refresh-interval",
    "watch-namespace",
    "stall-threshold",
    "reconcile-timeout",
    "max-concurrent-reconciles",
    "ferrvault-rate",
    "ferrvault-burst",
    "allow-insecure-http",
    "ferrvault-allowed-cidrs",
    "ferrvault-denied-cidrs",
    "require-credential-opt-in",
    "oidc-cluster-id",
    "oidc-token-path",
    "oidc-trusted-urls",
    "connection-probe-interval",
    "min-refresh-interval",
    "namespace-write-qps",
    "namespace-write-burst",
    "shutdown-grace-period",
    "log-level",
    "log-format",
    "zap-devel",
    "zap-encoder",
    "zap-log-level",
    "zap-stacktrace-level",
    "zap-time-encoding",
    "http-read-header-timeout",
    "http-idle-timeout",
    "http-max-connections",
    "kubeconfig",
];

const DEFAULTS: &[&str] = &[];
const LEADER_ELECTION_OFF: &[&str] = &["leaderElection.enabled=false"];
const THREE_REPLICAS: &[&str] = &["replicaCount=3"];
const WATCH_NAMESPACE: &[&str] = &["watchNamespace=apps"];
const MONITORING_ON: &[&str] = &[
    "metrics.serviceMonitor.enabled=true",
    "metrics.prometheusRule.enabled=true",
    "metrics.grafanaDashboard.enabled=true",
];
const ADMIN_ON: &[&str] = &["admin.enabled=true"];
const OIDC_ON: &[&str] = &[
    "oidc.enabled=true",
    "oidc.audience=https://ferrvault.example",
    "oidc.clusterID=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
    "oidc.trustedURLs={https://api.ferrvault.example}",
];
const CRDS_OFF: &[&str] = &["crds.install=false"];
const SECURE_METRICS_ON: &[&str] = &[
    "metrics.secure.enabled=true",
    "metrics.serviceMonitor.enabled=true",
    "metrics.secure.readerSubjects[0].kind=ServiceAccount",
    "metrics.secure.readerSubjects[0].name=prometheus",
    "metrics.secure.readerSubjects[0].namespace=monitoring",
];
const NETWORK_POLICY_ON: &[&str] = &[
    "networkPolicy.enabled=true",
    "networkPolicy.egress.apiServer.to[0].ipBlock.cidr=10.96.0.1/32",
    "networkPolicy.egress.ferrvault.to[0].ipBlock.cidr=203.0.113.10/32",
];
const WATCH_NAMESPACES: &[&str] = &["watchNamespaces={apps,team-a}"];

// === helpers shared by the test modules ===

fn deployment(rendering: &Rendering) -> Deployment {
    rendering.single("Deployment")
}

fn manager(deployment: &Deployment) -> Container {
    manager_container(deployment)
        .expect("the Deployment has a manager container")
        .clone()
}

fn pod_spec(deployment: &Deployment) -> PodSpec {
    deployment
        .spec
        .clone()
        .and_then(|spec| spec.template.spec)
        .expect("the Deployment has a pod spec")
}

fn launch(sets: &[&str]) -> ContainerLaunch {
    let pod = PodIdentity {
        name: "fv-ferrvault-operator-abc12".into(),
        namespace: NAMESPACE.into(),
    };
    ContainerLaunch::from_deployment(&deployment(&Rendering::new(sets)), &pod)
        .unwrap_or_else(|error| panic!("cannot derive the launch: {error}"))
}

fn flag(name: &str, value: &str) -> Flag {
    Flag {
        name: name.into(),
        value: Some(value.into()),
    }
}

// === lint and schema validation, per scenario ===

/// `helm lint --strict`, then the rendering for each supported Kubernetes version through
/// `kubernetes-validate --strict` (custom resources without a schema are skipped with a warning).
fn assert_lints_and_validates(sets: &[&str]) {
    if let Err(output) = helm_lint_strict(sets) {
        panic!("helm lint --strict failed for {sets:?}:\n{output}");
    }
    for kube_version in KUBE_VERSIONS {
        let rendering = Rendering::for_kube(sets, kube_version);
        assert!(
            rendering.of_kind("Deployment").len() == 1,
            "no Deployment rendered for {sets:?}"
        );
        if let Err(output) = validate_strict(&rendering.yaml, kube_version) {
            panic!("kubernetes-validate --strict -k {kube_version} failed for {sets:?}:\n{output}");
        }
    }
}

#[test]
fn defaults_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(DEFAULTS);
}

#[test]
fn leader_election_off_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(LEADER_ELECTION_OFF);
}

#[test]
fn three_replicas_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(THREE_REPLICAS);
}

#[test]
fn watch_namespace_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(WATCH_NAMESPACE);
}

#[test]
fn monitoring_on_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(MONITORING_ON);
}

#[test]
fn admin_on_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(ADMIN_ON);
}

#[test]
fn oidc_on_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(OIDC_ON);
}

#[test]
fn crds_off_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(CRDS_OFF);
}

#[test]
fn secure_metrics_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(&[SECURE_METRICS_ON, &["metrics.secure.certSecret=metrics-tls"]].concat());
}

#[test]
fn network_policy_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(NETWORK_POLICY_ON);
}

#[test]
fn watch_namespaces_should_lint_and_validate_on_kubernetes_1_33_and_1_35() {
    assert_lints_and_validates(WATCH_NAMESPACES);
}

#[test]
fn strict_validation_should_reject_a_field_kubernetes_does_not_know() {
    // Proves the validator is really strict, so the passes above mean something.
    let rendering = Rendering::new(&["podSecurityContext.runAsUsr=65532"]);
    let error = validate_strict(&rendering.yaml, "1.35.0").expect_err("an unknown field must not validate");
    assert!(
        error.contains("runAsUsr"),
        "the failure should name the field:\n{error}"
    );
}

#[test]
fn values_the_operator_would_refuse_should_fail_rendering_with_a_reason() {
    for (sets, fragment) in [
        (vec!["reconcileTimeout=20s"], "below 31s"),
        (vec!["reconcileTimeout=2min"], "does not match pattern"),
        (vec!["stallThreshold=soon"], "does not match pattern"),
        (
            vec!["replicaCount=2", "leaderElection.enabled=false"],
            "needs leaderElection.enabled",
        ),
        (
            vec!["leaderElection.renewDeadline=20s"],
            "leaseDuration > renewDeadline > retryPeriod",
        ),
        (
            vec!["leaderElection.renewDeadline=14s"],
            "renewDeadline + retryPeriod <= leaseDuration",
        ),
        (vec!["oidc.enabled=true"], "needs oidc.audience"),
        (
            vec!["oidc.enabled=true", "oidc.audience=a"],
            "needs oidc.clusterID",
        ),
        (
            vec![
                "oidc.enabled=true",
                "oidc.audience=a",
                "oidc.clusterID=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
            ],
            "needs oidc.trustedURLs",
        ),
        (
            [OIDC_ON, &["oidc.trustedURLs={http://fv.local}"]].concat(),
            "needs ferrvault.allowInsecureHttp",
        ),
        (vec!["oidc.clusterID=nope"], "oidc.clusterID"),
        (vec!["oidc.trustedURLs={ftp://x}"], "oidc.trustedURLs"),
        (
            vec!["admin.enabled=true", "admin.bindAddress=localhost"],
            "bindAddress",
        ),
        (vec!["logFormat=yaml"], "logFormat"),
        (vec!["replicas=3"], "additional properties 'replicas'"),
    ] {
        let error = helm_template(&sets, "1.35.0").expect_err("rendering must fail");
        assert!(
            error.contains(fragment),
            "{sets:?} should fail naming {fragment:?}: {error}"
        );
    }
}
