//! kubectl (the real binary) against the simulator, through a kubeconfig written by
//! `KubeSim::write_kubeconfig`: apply, get (list, single, `-o json`, `-l`), get -w,
//! patch (merge and `--subresource status`), replace, delete with a finalizer, wait, and the
//! field managers kubectl's client- and server-side apply are recorded as.
//!
//! Imperative `kubectl create …` (protobuf bodies) is in `kubectl_create.rs`.

use crate::{
    kube_sim_support::{Widget, WidgetSpec, eventually, install_widget_crd, sim, within},
    kubectl_support::Kubectl,
};
use ferrvault_sim::kube::KubeSim;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, api::PostParams};
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::Command,
};

const GADGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.sim.ferrvault.dev
spec:
  group: sim.ferrvault.dev
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

const GADGET: &str = r#"
apiVersion: sim.ferrvault.dev/v1
kind: Gadget
metadata: {name: g1, labels: {tier: gold}}
spec: {size: 1}
"#;

const SECRET: &str = r#"
apiVersion: v1
kind: Secret
metadata: {name: s1, labels: {tier: gold}}
stringData: {user: admin}
"#;

/// A simulator holding the widget `name`, and kubectl pointed at it.
async fn sim_with_widget(name: &str) -> (KubeSim, Kubectl) {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    widget(&sim, name).await;
    (sim, k)
}

async fn widget(sim: &KubeSim, name: &str) -> Widget {
    install_widget_crd(&sim.client()).await;
    let widgets: Api<Widget> = Api::namespaced(sim.client(), "default");
    widgets
        .create(&PostParams::default(), &Widget::new(name, WidgetSpec { size: 1 }))
        .await
        .expect("widget created")
}

#[tokio::test]
async fn kubectl_apply_should_create_a_crd_then_custom_resources_and_secrets_that_get_lists() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let crd = k.file("crd.yaml", GADGET_CRD);
    let out = k.ok(&["apply", "-f", crd.to_str().expect("utf-8 path")]).await;
    assert!(
        out.contains("customresourcedefinition.apiextensions.k8s.io/gadgets.sim.ferrvault.dev created"),
        "{out}"
    );
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.sim.ferrvault.dev",
        "--timeout=20s",
    ])
    .await;
    let gadget = k.file("gadget.yaml", GADGET);
    assert!(
        k.ok(&["apply", "-f", gadget.to_str().expect("utf-8")])
            .await
            .contains("gadget.sim.ferrvault.dev/g1 created")
    );
    let secret = k.file("secret.yaml", SECRET);
    assert!(
        k.ok(&["apply", "-f", secret.to_str().expect("utf-8")])
            .await
            .contains("secret/s1 created")
    );

    let table = k.ok(&["get", "gd"]).await;
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "SIZE", "READY", "AGE"],
        "printer columns: {table}"
    );
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(row[..2], ["g1", "1"], "{table}");
    let single: Value =
        serde_json::from_str(&k.ok(&["get", "gadget", "g1", "-o", "json"]).await).expect("json");
    assert_eq!(single["spec"]["size"], 1);
    let list: Value = serde_json::from_str(&k.ok(&["get", "gadgets", "-o", "json"]).await).expect("json");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        k.ok(&["get", "secrets", "-l", "tier=gold", "-o", "name"])
            .await
            .trim(),
        "secret/s1"
    );
    assert_eq!(
        k.ok(&["get", "secrets", "-l", "tier!=gold", "-o", "name"])
            .await
            .trim(),
        ""
    );
    let s = Api::<Secret>::namespaced(sim.client(), "default")
        .get("s1")
        .await
        .expect("secret");
    assert_eq!(s.data.expect("data")["user"].0, b"admin");
}

#[tokio::test]
async fn kubectl_get_watch_should_print_added_modified_and_deleted_events() {
    let (_sim, k) = sim_with_widget("w1").await;
    let mut watch = k.spawn(&["get", "widgets", "-w", "--output-watch-events"]);
    let mut lines = BufReader::new(watch.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    let mut next_event = async |seen: &mut Vec<String>| {
        let line = within("kubectl prints the next watch line", lines.next_line())
            .await
            .expect("read")
            .expect("kubectl exited early");
        seen.push(line.split_whitespace().next().unwrap_or_default().to_string());
    };
    next_event(&mut seen).await; // header
    next_event(&mut seen).await;
    k.patch_widget("w1", &[], "merge", r#"{"spec":{"size":2}}"#).await;
    next_event(&mut seen).await;
    k.ok(&["delete", "widget", "w1"]).await;
    next_event(&mut seen).await;
    assert_eq!(seen, ["EVENT", "ADDED", "MODIFIED", "DELETED"]);
}

#[tokio::test]
async fn kubectl_patch_should_change_spec_and_status_through_their_own_endpoints() {
    let (sim, k) = sim_with_widget("w1").await;
    k.patch_widget(
        "w1",
        &[],
        "merge",
        r#"{"spec":{"size":3},"status":{"observed":9}}"#,
    )
    .await;
    k.patch_widget(
        "w1",
        &["--subresource", "status"],
        "merge",
        r#"{"spec":{"size":7},"status":{"observed":3}}"#,
    )
    .await;
    let w = Api::<Widget>::namespaced(sim.client(), "default")
        .get("w1")
        .await
        .expect("widget");
    assert_eq!(
        (w.spec.size, w.status.map(|s| s.observed), w.metadata.generation),
        (3, Some(3), Some(2))
    );
}

#[tokio::test]
async fn kubectl_replace_should_fail_the_second_time_with_a_stale_resource_version() {
    let (_sim, k) = sim_with_widget("w1").await;
    let mut current: Value =
        serde_json::from_str(&k.ok(&["get", "widget", "w1", "-o", "json"]).await).expect("json");
    current["spec"]["size"] = json!(5);
    let file = k.file("w1.json", &current.to_string());
    let path = file.to_str().expect("utf-8");
    assert!(k.ok(&["replace", "-f", path]).await.contains("replaced"));
    let err = k.fails(&["replace", "-f", path]).await;
    assert!(
        err.contains("Conflict") && err.contains("the object has been modified"),
        "{err}"
    );
}

#[tokio::test]
async fn kubectl_delete_should_wait_for_the_finalizer_and_finish_when_it_is_released() {
    let (sim, k) = sim_with_widget("w1").await;
    k.patch_widget(
        "w1",
        &[],
        "merge",
        r#"{"metadata":{"finalizers":["sim.ferrvault.dev/hold"]}}"#,
    )
    .await;
    let mut delete = k.spawn(&["delete", "widget", "w1", "--timeout=20s"]);
    let widgets: Api<Widget> = Api::namespaced(sim.client(), "default");
    eventually("the widget is marked for deletion", || async {
        widgets
            .get("w1")
            .await
            .ok()
            .and_then(|w| w.metadata.deletion_timestamp)
    })
    .await;
    assert!(
        delete.try_wait().expect("poll kubectl").is_none(),
        "kubectl delete must wait for the finalizer"
    );
    k.patch_widget(
        "w1",
        &[],
        "json",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    )
    .await;
    let out = within("kubectl delete finishes", delete.wait_with_output())
        .await
        .expect("kubectl delete output");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("widget.sim.ferrvault.dev \"w1\" deleted"));
    assert!(widgets.get_opt("w1").await.expect("get_opt").is_none());
}

#[tokio::test]
async fn sim_kube_subcommand_should_serve_kubectl_through_the_kubeconfig_it_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    let mut server = Command::new(env!("CARGO_BIN_EXE_ferrvault-sim"))
        .args(["kube", "--port", "0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("binary starts");
    eventually("the subcommand writes its kubeconfig", || async {
        kubeconfig.exists().then_some(())
    })
    .await;
    let out = within(
        "kubectl get namespaces",
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .args(["get", "namespaces", "-o", "name"])
            .output(),
    )
    .await
    .expect("kubectl runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        [
            "namespace/default",
            "namespace/kube-public",
            "namespace/kube-system"
        ]
    );
    server.kill().await.expect("stop the simulator");
}

#[tokio::test]
async fn kubectl_with_an_identity_kubeconfig_should_be_audited_under_that_name() {
    let sim = sim().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig_as(&kubeconfig, "alice").expect("kubeconfig");
    let out = within(
        "kubectl get secrets",
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .args(["get", "secrets"])
            .output(),
    )
    .await
    .expect("kubectl runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let audit = sim.audit();
    assert!(
        audit
            .iter()
            .any(|e| e.identity == "alice" && e.verb == "list" && e.resource == "secrets"),
        "{audit:?}"
    );
}

/// `(manager, operation)` of each managedFields entry of `object`.
fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                    (s("manager"), s("operation"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn kubectl_should_be_recorded_as_field_manager_and_hide_managed_fields_unless_asked() {
    let sim = sim().await;
    let k = Kubectl::new(&sim);
    let client_side = k.file("secret.yaml", SECRET);
    k.ok(&["apply", "-f", client_side.to_str().expect("utf-8")]).await;
    let server_side = k.file("secret2.yaml", &SECRET.replace("name: s1", "name: s2"));
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        server_side.to_str().expect("utf-8"),
    ])
    .await;

    let get = |name: &'static str, show: bool| {
        let mut args = vec!["get", "secret", name, "-o", "json"];
        if show {
            args.push("--show-managed-fields");
        }
        let k = &k;
        async move {
            let out = k.ok(&args).await;
            serde_json::from_str::<Value>(&out).expect("kubectl prints JSON")
        }
    };
    let plain = get("s1", false).await;
    assert!(
        plain["metadata"].get("managedFields").is_none(),
        "kubectl hides managedFields by default: {plain}"
    );
    let s1 = get("s1", true).await;
    assert_eq!(
        managers(&s1),
        [("kubectl-client-side-apply".to_owned(), "Update".to_owned())],
        "{s1}"
    );
    let s2 = get("s2", true).await;
    assert_eq!(
        managers(&s2),
        [("kubectl".to_owned(), "Apply".to_owned())],
        "{s2}"
    );
}
