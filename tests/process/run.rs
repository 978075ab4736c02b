//! `ferrvault-operator run`, the real binary, against the Kubernetes simulator: what a kubelet,
//! a Prometheus and an operator engineer see from outside the process.

use std::{process::Command, time::Duration};

pub(crate) use crate::process_support::run_command;
use crate::process_support::{Spawned, binary, call, get, promtool_check_metrics, wait_for_200};
use ferrvault_operator::api::crdgen;
use ferrvault_sim::{kube::KubeSim, testkit::poll_until};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, api::PostParams};
use tempfile::TempDir;

const STARTUP: Duration = Duration::from_secs(30);
/// SIGTERM must end the process well within the kubelet's default 30s grace period.
const PROMPT_EXIT: Duration = Duration::from_secs(15);

/// A simulator with the CRDs installed and a kubeconfig for it.
pub(crate) async fn cluster() -> (KubeSim, TempDir, String) {
    let sim = KubeSim::start().await.expect("the simulator starts");
    let crds: Api<CustomResourceDefinition> = Api::all(sim.client());
    for crd in crdgen::crds() {
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("CRD created");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
    let kubeconfig = kubeconfig.display().to_string();
    (sim, dir, kubeconfig)
}

#[tokio::test(flavor = "multi_thread")]
async fn run_should_serve_probes_metrics_and_debug_endpoints_then_exit_zero_on_sigterm() {
    let (_sim, _dir, kubeconfig) = cluster().await;
    let mut operator = Spawned::start(run_command(&kubeconfig, &[]));
    let at = operator.addresses();
    let admin = at.admin.expect("the admin server was asked for");

    let ready = wait_for_200(&format!("http://{}/readyz?verbose", at.probes), STARTUP).await;
    assert!(
        ready.contains("[+]role ok: leader"),
        "/readyz shows the role:\n{ready}"
    );
    let (status, live) = get(&format!("http://{}/healthz", at.probes)).await;
    assert_eq!(
        (status, live.as_str()),
        (200, "ok"),
        "controller-runtime's answer"
    );
    let (status, live) = get(&format!("http://{}/healthz?verbose", at.probes)).await;
    assert_eq!(status, 200, "/healthz?verbose:\n{live}");
    assert!(
        live.contains("[+]progress ok: ") && live.ends_with("healthz check passed\n"),
        "/healthz?verbose names its checks and why they pass:\n{live}"
    );
    let (status, progress) = get(&format!("http://{}/healthz/reconcile-progress", at.probes)).await;
    assert_eq!(
        (status, progress.as_str()),
        (200, "ok"),
        "the Go operator's check name"
    );

    let (status, scrape) = get(&format!("http://{}/metrics", at.metrics)).await;
    assert_eq!(status, 200);
    for family in [
        "workqueue_depth",
        "leader_election_master_status",
        "ferrvault_client_requests",
    ] {
        assert!(scrape.contains(family), "/metrics lacks {family}:\n{scrape}");
    }
    if let Err(complaint) = promtool_check_metrics(&scrape) {
        panic!("promtool check metrics complained:\n{complaint}\n--- scrape\n{scrape}");
    }
    let openmetrics = crate::process_support::http()
        .get(format!("http://{}/metrics", at.metrics))
        .header(
            "accept",
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
        )
        .send()
        .await
        .expect("scrape as Prometheus does");
    let content_type = openmetrics.headers()["content-type"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    let body = openmetrics.text().await.expect("body");
    assert!(
        content_type.starts_with("application/openmetrics-text") && body.ends_with("# EOF\n"),
        "Prometheus asks for OpenMetrics and gets it: {content_type}"
    );

    let (status, tree) = get(&format!("http://{admin}/debug/actors")).await;
    assert_eq!(status, 200);
    let tree: serde_json::Value = serde_json::from_str(&tree).expect("/debug/actors is JSON");
    assert_eq!(tree["name"], "supervisor", "{tree:#}");
    let (status, text) = get(&format!("http://{admin}/debug/actors?format=text")).await;
    assert_eq!(status, 200);
    assert!(
        text.starts_with("- supervisor") && text.contains("\n    - ferrvaultsecret/queue"),
        "an indented tree:\n{text}"
    );
    let (status, queue) = get(&format!("http://{admin}/debug/queue")).await;
    assert_eq!(status, 200);
    let queue: serde_json::Value = serde_json::from_str(&queue).expect("/debug/queue is JSON");
    let controllers: Vec<&str> = queue["controllers"]
        .as_array()
        .expect("a controllers list")
        .iter()
        .filter_map(|c| c["controller"].as_str())
        .collect();
    assert_eq!(
        controllers,
        [
            "ferrvaultsecret",
            "ferrvaultconnection",
            "clusterferrvaultconnection",
            "clusterferrvaultsecret"
        ],
        "{queue:#}"
    );

    operator.sigterm();
    let status = operator.wait_exit(PROMPT_EXIT);
    assert_eq!(
        status.code(),
        Some(0),
        "exit after SIGTERM:\n{}",
        operator.output()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_server_should_answer_405_to_anything_but_get_and_head_and_404_to_unknown_paths() {
    let (_sim, _dir, kubeconfig) = cluster().await;
    let mut operator = Spawned::start(run_command(&kubeconfig, &[]));
    let at = operator.addresses();
    let admin = at.admin.expect("the admin server was asked for");
    let urls = [
        format!("http://{}/metrics", at.metrics),
        format!("http://{}/healthz", at.probes),
        format!("http://{}/readyz", at.probes),
        format!("http://{admin}/debug/actors"),
        format!("http://{admin}/debug/queue"),
    ];
    for url in &urls {
        for method in [
            reqwest::Method::POST,
            reqwest::Method::PUT,
            reqwest::Method::DELETE,
        ] {
            let (status, body) = call(method.clone(), url).await;
            assert_eq!(status, 405, "{method} {url}: {body}");
        }
        let (status, body) = call(reqwest::Method::HEAD, url).await;
        assert!(status == 200 || status == 500, "HEAD {url}: {status}");
        assert!(body.is_empty(), "HEAD {url} has no body");
    }
    for url in [
        format!("http://{}/debug/actors", at.metrics),
        format!("http://{}/metrics", at.probes),
        format!("http://{admin}/healthz"),
    ] {
        assert_eq!(get(&url).await.0, 404, "{url} is served by another server");
    }
}

#[test]
fn run_should_refuse_a_reconcile_timeout_below_the_floor_with_exit_code_2_and_the_reason() {
    for (flag, env) in [(Some("--reconcile-timeout=20s"), None), (None, Some("5s"))] {
        let mut command = Command::new(binary());
        command.args(["run", "--kubeconfig=/nonexistent"]).args(flag);
        if let Some(value) = env {
            command.env("FERRVAULT_RECONCILE_TIMEOUT", value);
        }
        let mut operator = Spawned::start(command);
        let status = operator.wait_exit(PROMPT_EXIT);
        let output = operator.output();
        assert_eq!(status.code(), Some(2), "{flag:?} {env:?}:\n{output}");
        assert!(
            output.contains("invalid --reconcile-timeout")
                && output.contains("is below 30.65s")
                && output.contains("anything shorter cancels healthy reveals"),
            "{flag:?} {env:?}:\n{output}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn run_should_fail_at_startup_when_the_probe_port_is_taken() {
    let (_sim, _dir, kubeconfig) = cluster().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("local addr").to_string();
    // Given after run_command's own value: the last one wins, as the chart's extraArgs rely on.
    let flag = format!("--health-probe-bind-address={address}");
    let mut operator = Spawned::start(run_command(&kubeconfig, &[&flag]));
    let status = operator.wait_exit(STARTUP);
    let output = operator.output();
    assert_eq!(status.code(), Some(1), "{output}");
    assert!(
        output.contains(&format!("cannot listen on {address} for health probes")),
        "{output}"
    );
}

/// `/readyz` of `probes` until it reports `role`, up to 30s.
async fn wait_for_role(probes: std::net::SocketAddr, role: &str, operator: &Spawned) {
    poll_until(&format!("ready as {role}"), STARTUP, || async {
        let (status, body) = get(&format!("http://{probes}/readyz?verbose")).await;
        if status == 200 && body.contains(&format!("[+]role ok: {role}")) {
            Ok(())
        } else {
            Err(format!("{status}\n{body}\n{}", operator.output()))
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_should_elect_one_leader_and_hand_over_when_it_stops() {
    let (sim, _dir, kubeconfig) = cluster().await;
    let replica = |pod: &str| {
        let mut command = run_command(
            &kubeconfig,
            &[
                "--leader-elect",
                "--leader-elect-namespace=default",
                "--leader-elect-lease-duration=4s",
                "--leader-elect-renew-deadline=3s",
                "--leader-elect-retry-period=500ms",
            ],
        );
        command.env("POD_NAME", pod);
        Spawned::start(command)
    };
    let mut first = replica("replica-a");
    let first_at = first.addresses();
    wait_for_role(first_at.probes, "leader", &first).await;
    let mut second = replica("replica-b");
    let second_at = second.addresses();
    wait_for_role(second_at.probes, "standby", &second).await;

    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(sim.client(), "default");
    let holder = |lease: k8s_openapi::api::coordination::v1::Lease| {
        lease.spec.and_then(|s| s.holder_identity).unwrap_or_default()
    };
    let lease = leases
        .get("ferrvault-operator.ferrvault.com")
        .await
        .expect("the Lease exists");
    assert!(
        holder(lease).starts_with("replica-a_"),
        "POD_NAME + a per-process uid"
    );

    first.sigterm();
    assert_eq!(first.wait_exit(PROMPT_EXIT).code(), Some(0), "{}", first.output());
    wait_for_role(second_at.probes, "leader", &second).await;
    let lease = leases
        .get("ferrvault-operator.ferrvault.com")
        .await
        .expect("the Lease exists");
    assert!(holder(lease).starts_with("replica-b_"), "the standby took over");
    second.sigterm();
    assert_eq!(
        second.wait_exit(PROMPT_EXIT).code(),
        Some(0),
        "{}",
        second.output()
    );
}
