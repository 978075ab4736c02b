//! Exit codes and errors as kubectl users expect them, and kubectl finding the plugin on PATH.

use std::path::Path;

use serde_json::json;

use crate::support::{Cluster, NS, plugin_with};

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_should_exit_2_with_the_usage_on_stderr() {
    let cluster = Cluster::start().await;
    for argv in [
        &["sync", "app", "--all"][..],
        &["sync"],
        &["sync", "--all", "--connection", "prod"],
        &["sync", "app", "--timeout", "soon"],
        &["status", "-o", "xml"],
        &["render", "app"],
        &["suspend"],
        &["suspend", "secret/app"],
        &["frobnicate"],
    ] {
        let run = cluster.plugin(argv).await;
        assert_eq!(run.code, 2, "{argv:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{argv:?}: {run:?}");
        assert!(
            run.stderr.starts_with("error: ") && run.stderr.contains("--help"),
            "{argv:?}: {}",
            run.stderr
        );
    }
    assert!(
        cluster.sim.audit().iter().all(|e| e.verb != "patch"),
        "a usage error wrote nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unusable_kubeconfig_should_exit_1() {
    let run = plugin_with(Path::new("/nonexistent/kubeconfig"), &["status"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.starts_with("error: loading the kubeconfig: "),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_should_find_the_plugin_on_path() {
    let cluster = Cluster::start().await;
    cluster.create_fvs(NS, "app", "prod", json!({})).await;
    let binary = Path::new(env!("CARGO_BIN_EXE_kubectl-ferrvault"));
    let path = std::env::join_paths(
        std::iter::once(binary.parent().expect("a folder").to_owned()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .expect("a PATH");
    let kubeconfig = cluster.kubeconfig.display().to_string();
    let output = tokio::process::Command::new("kubectl")
        .args(["ferrvault", "--kubeconfig", &kubeconfig, "status", "-o", "json"])
        .env("PATH", path)
        .output()
        .await
        .expect("kubectl runs: bash .ci/install-tools puts it in .tools/bin");
    assert!(output.status.success(), "{output:?}");
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(listed["items"][0]["name"], "app");
}
