//! The rendered chart against the real binary: the Deployment's command line and environment
//! start `ferrvault-operator run` as the kubelet would, and `RUN_FLAGS` is what `run` accepts.

use std::{process::Command, time::Duration};

use ferrvault_sim::{kube::KubeSim, testkit::poll_until};
use k8s_openapi::{
    api::core::v1::{Container, Namespace, Probe},
    apimachinery::pkg::util::intstr::IntOrString,
};
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::{
    process_support::{Spawned, binary, free_port, get, wait_for_200},
    *,
};

/// The port number behind a probe's `httpGet.port` (a number or a container port name).
fn probe_port(container: &Container, probe: &Option<Probe>) -> (String, i32) {
    let http = probe
        .as_ref()
        .and_then(|p| p.http_get.clone())
        .expect("an httpGet probe");
    let port = match http.port {
        IntOrString::Int(port) => port,
        IntOrString::String(name) => {
            container
                .ports
                .iter()
                .flatten()
                .find(|p| p.name.as_deref() == Some(name.as_str()))
                .unwrap_or_else(|| panic!("no container port named {name}"))
                .container_port
        }
    };
    (http.path.expect("a probe path"), port)
}

/// The port of a `--*-bind-address` value (`:8081`, `0.0.0.0:8081`).
fn port_of(launch: &ContainerLaunch, flag: &str) -> i32 {
    let value = launch
        .flag(flag)
        .flatten()
        .unwrap_or_else(|| panic!("--{flag} is rendered with a value"));
    value
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("--{flag}={value} has no port"))
}

/// The CRDs of `rendering` and the release namespace, created in `sim` (what a cluster has
/// before the operator's pod starts).
pub async fn install_prerequisites(sim: &KubeSim, rendering: &Rendering) {
    let namespaces: Api<Namespace> = Api::all(sim.client());
    let namespace = serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).expect("Namespace");
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .expect("release namespace created");
    let crds = Api::all(sim.client());
    for crd in rendering.of_kind("CustomResourceDefinition") {
        let crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
            serde_json::from_value(crd.clone()).expect("a CRD");
        crds.create(&PostParams::default(), &crd)
            .await
            .expect("CRD created");
    }
}

/// Starts the binary exactly as `launch` says (argv and nothing but its env).
pub fn start(launch: &ContainerLaunch) -> Spawned {
    let mut command = Command::new(binary());
    command
        .args(&launch.argv)
        .env_clear()
        .envs(launch.env.iter().cloned());
    Spawned::start(command)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rendered_deployment_should_start_the_binary_serve_its_probes_and_exit_cleanly_on_sigterm() {
    for sets in [DEFAULTS, LEADER_ELECTION_OFF, WATCH_NAMESPACE, ADMIN_ON, OIDC_ON] {
        let rendering = Rendering::new(sets);
        let deployment = deployment(&rendering);
        let container = manager(&deployment);
        let (liveness_path, liveness_port) = probe_port(&container, &container.liveness_probe);
        let (readiness_path, readiness_port) = probe_port(&container, &container.readiness_probe);
        let launch = launch(sets);
        assert_eq!(
            port_of(&launch, "health-probe-bind-address"),
            liveness_port,
            "{sets:?}: the probes must hit the port --health-probe-bind-address binds"
        );
        assert_eq!(readiness_port, liveness_port, "{sets:?}");

        let sim = KubeSim::start().await.expect("the simulator starts");
        install_prerequisites(&sim, &rendering).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
        let probes = free_port();
        let mut launch = launch
            .with_flag("health-probe-bind-address", &format!("127.0.0.1:{probes}"))
            .with_flag("metrics-bind-address", &format!("127.0.0.1:{}", free_port()))
            .with_flag("kubeconfig", &kubeconfig.display().to_string());
        if launch
            .flag("admin-bind-address")
            .flatten()
            .is_some_and(|a| !a.is_empty())
        {
            launch = launch.with_flag("admin-bind-address", &format!("127.0.0.1:{}", free_port()));
        }
        let mut operator = start(&launch);
        // A flag the binary refuses ends it here, with clap's message in the failure.
        operator.wait_for_line("http servers listening", Duration::from_secs(30));
        let base = format!("http://127.0.0.1:{probes}");
        wait_for_200(&format!("{base}{readiness_path}"), Duration::from_secs(30)).await;
        // Ready as a standby first when competing for the Lease; alone, it must then lead.
        poll_until(&format!("{sets:?}: leads"), Duration::from_secs(30), || async {
            let (status, body) = get(&format!("{base}{readiness_path}?verbose")).await;
            if status == 200 && body.contains("[+]role ok: leader") {
                Ok(())
            } else {
                Err(format!("{status}\n{body}\n{}", operator.output()))
            }
        })
        .await;
        let (status, live) = get(&format!("{base}{liveness_path}")).await;
        assert_eq!(status, 200, "{sets:?}: {live}");

        operator.sigterm();
        let grace = deployment
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30);
        let exit = operator.wait_exit(Duration::from_secs(u64::try_from(grace).expect("positive")));
        assert_eq!(exit.code(), Some(0), "{sets:?}:\n{}", operator.output());
    }
}

#[test]
fn run_flags_should_be_exactly_the_flags_run_help_lists() {
    let output = Command::new(binary())
        .args(["run", "--help"])
        .output()
        .expect("run --help");
    assert!(output.status.success(), "run --help failed");
    let help = String::from_utf8(output.stdout).expect("UTF-8 help");
    let flag = regex::Regex::new(r"(?m)^\s+(?:-\w, )?--([a-z][a-z-]*)").expect("regex");
    let mut listed: Vec<&str> = flag
        .captures_iter(&help)
        .map(|c| c.get(1).expect("group").as_str())
        .filter(|name| *name != "help")
        .collect();
    listed.sort_unstable();
    let mut expected = RUN_FLAGS.to_vec();
    expected.sort_unstable();
    assert_eq!(listed, expected, "run --help:\n{help}");
}
