//! `sync`: the force-sync annotation set, and the wait on what the operator records.
//!
//! The operator on this branch does not record `status.observedForceSync` yet (issue 36 point
//! 1 is built in parallel), so [`play_operator`] writes the status as that operator writes it.

use std::{convert::Infallible, time::Duration};

use ferrvault_operator::api::FerrVaultSecret;
use jiff::Timestamp;
use kube::{
    Api, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams, Patch, PatchParams},
};
use serde_json::{Value, json};

use crate::support::{Cluster, NS, Run, ready, synced_status};

const FORCE_SYNC: &str = "ferrvault.com/force-sync";

/// When [`play_operator`] gives an annotated object its pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// As soon as it sees the annotation.
    AtOnce,
    /// Once the plugin has read the object after annotating it (so it saw it pending first).
    AfterThePluginLooked,
}

/// Plays the operator's part until dropped: an object whose force-sync annotation holds a value
/// its status has not observed gets a pass, as `when` says: Ready=True/Synced with the value
/// recorded, or for the names in `failing` Ready=False/VaultNotFound (transitioned now; a failed
/// pass records no value).
async fn play_operator(cluster: &Cluster, failing: &[&str], when: Pass) -> Infallible {
    let resource = ApiResource::erase::<FerrVaultSecret>(&());
    let client = cluster.sim.client_as(OPERATOR);
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let pointer = format!("/metadata/annotations/{}", FORCE_SYNC.replace('/', "~1"));
    loop {
        for object in api.list(&ListParams::default()).await.expect("list").items {
            let (namespace, name) = (object.namespace().expect("namespaced"), object.name_any());
            let data = serde_json::to_value(&object).expect("JSON");
            let Some(value) = data.pointer(&pointer).and_then(Value::as_str) else {
                continue;
            };
            let handled = data.pointer("/status/observedForceSync") == Some(&json!(value))
                || data.pointer("/status/conditions/0/status") == Some(&json!("False"));
            if handled || (when == Pass::AfterThePluginLooked && !plugin_looked(cluster, &name)) {
                continue;
            }
            let now = Timestamp::now();
            let status = if failing.contains(&name.as_str()) {
                json!({ "conditions": [ready("False", "VaultNotFound", "vault gone not found", 1, now)] })
            } else {
                let mut status = synced_status(now, "7", "connection=c/1/True token=1 ca=- key=k");
                status["observedForceSync"] = json!(value);
                status
            };
            Api::<DynamicObject>::namespaced_with(client.clone(), &namespace, &resource)
                .patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({ "status": status })),
                )
                .await
                .expect("status written");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Who [`play_operator`] is in the audit log.
const OPERATOR: &str = "fake-operator";

/// Whether the plugin read `name` after it last annotated it (the audit log's order).
fn plugin_looked(cluster: &Cluster, name: &str) -> bool {
    let audit = cluster.sim.audit();
    let on_it =
        |e: &&ferrvault_sim::kube::AuditEntry| e.resource == "ferrvaultsecrets" && e.identity != OPERATOR;
    let annotated = audit
        .iter()
        .rposition(|e| on_it(&e) && e.verb == "patch" && e.name == name && e.subresource.is_empty());
    annotated.is_some_and(|at| {
        audit[at..]
            .iter()
            .filter(on_it)
            .any(|e| e.verb == "get" || e.verb == "list")
    })
}

/// Runs the plugin with `args` while [`play_operator`] plays its part.
async fn plugin_with_operator(cluster: &Cluster, args: &[&str], failing: &[&str], when: Pass) -> Run {
    tokio::select! {
        run = cluster.plugin(args) => run,
        never = play_operator(cluster, failing, when) => match never {},
    }
}

/// A FerrVaultSecret that synced ten minutes ago.
async fn synced(cluster: &Cluster, namespace: &str, name: &str, connection: &str, spec: Value) {
    cluster.create_fvs(namespace, name, connection, spec).await;
    let at = Timestamp::from_second(Timestamp::now().as_second() - 600).expect("a timestamp");
    cluster
        .write_status(
            namespace,
            name,
            synced_status(at, "5", "connection=c/1/True token=1 ca=- key=k"),
        )
        .await;
}

/// The force-sync annotation of `name`.
async fn annotation(cluster: &Cluster, namespace: &str, name: &str) -> Option<String> {
    let object = cluster.fvs(namespace).get(name).await.expect("the object");
    object
        .metadata
        .annotations
        .and_then(|a| a.get(FORCE_SYNC).cloned())
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_should_set_a_fresh_force_sync_value_and_wait_until_a_pass_records_it() {
    let cluster = Cluster::start().await;
    synced(&cluster, NS, "app", "prod", json!({})).await;
    let before = Timestamp::now();

    let run = plugin_with_operator(
        &cluster,
        &["sync", "app", "-o", "json"],
        &[],
        Pass::AfterThePluginLooked,
    )
    .await;
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    let value = report["forceSync"].as_str().expect("the value set").to_owned();
    let set_at: Timestamp = value.parse().expect("the value is the time of the request");
    assert!(set_at >= before, "a fresh value: {value}");
    assert_eq!(report["items"][0]["name"], "app");
    assert_eq!(report["items"][0]["outcome"], "Synced");
    assert_eq!(
        annotation(&cluster, NS, "app").await.as_deref(),
        Some(value.as_str())
    );
    let object = cluster.fvs(NS).get("app").await.expect("the object");
    assert_eq!(
        object.data.pointer("/status/observedForceSync"),
        Some(&json!(value))
    );
    assert!(
        run.stderr
            .contains("◎ waiting for 1 FerrVaultSecret(s): 0 synced, 0 failed, 1 pending"),
        "a progress line while it waits:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("1 synced, 0 failed, 0 pending"),
        "{}",
        run.stderr
    );

    let again = plugin_with_operator(&cluster, &["sync", "app"], &[], Pass::AtOnce).await;
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.stdout, "ferrvaultsecret/app synced\n");
    assert_ne!(
        annotation(&cluster, NS, "app").await,
        Some(value),
        "every sync sets a new value"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_all_should_wait_for_every_object_and_exit_1_naming_the_failed_pass() {
    let cluster = Cluster::start().await;
    synced(&cluster, NS, "app", "prod", json!({})).await;
    synced(&cluster, NS, "db", "prod", json!({})).await;
    let run = plugin_with_operator(&cluster, &["sync", "--all"], &["db"], Pass::AtOnce).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "ferrvaultsecret/app synced\n\
         ferrvaultsecret/db failed: vault gone not found (Ready=False VaultNotFound)\n"
    );
    assert!(
        run.stderr
            .ends_with("error: 1 of 2 FerrVaultSecret(s) not synced\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        annotation(&cluster, NS, "app").await,
        annotation(&cluster, NS, "db").await
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_should_exit_1_when_no_pass_records_the_value_before_the_timeout() {
    let cluster = Cluster::start().await;
    synced(&cluster, NS, "app", "prod", json!({})).await;
    let run = cluster.plugin(&["sync", "app", "--timeout", "2s"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.starts_with(
            "ferrvaultsecret/app not synced before the timeout: 1 key(s) synced (Ready=True Synced)"
        ),
        "{}",
        run.stdout
    );
    assert!(
        annotation(&cluster, NS, "app").await.is_some(),
        "the annotation stays set"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_no_wait_should_return_at_once_with_the_annotation_set() {
    let cluster = Cluster::start().await;
    synced(&cluster, NS, "app", "prod", json!({})).await;
    let run = tokio::time::timeout(
        Duration::from_secs(10),
        cluster.plugin(&["sync", "app", "--no-wait"]),
    )
    .await
    .expect("--no-wait does not wait for a pass nobody makes");
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "ferrvaultsecret/app sync requested\n"),
        "{run:?}"
    );
    assert!(annotation(&cluster, NS, "app").await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_should_annotate_exactly_the_objects_selected_by_connection_or_all() {
    let cluster = Cluster::start().await;
    cluster.namespace("team-b").await;
    for (name, connection) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
        synced(&cluster, NS, name, connection, json!({})).await;
    }
    synced(&cluster, "team-b", "a3", "a", json!({})).await;

    let run = cluster
        .plugin(&["sync", "--connection", "a", "--no-wait", "-o", "json"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let value = run.json()["forceSync"].as_str().expect("a value").to_owned();
    for (name, expected) in [("a1", Some(&value)), ("a2", Some(&value)), ("b1", None)] {
        assert_eq!(annotation(&cluster, NS, name).await.as_ref(), expected, "{name}");
    }
    assert_eq!(
        annotation(&cluster, "team-b", "a3").await,
        None,
        "another namespace without -A"
    );

    let run = cluster
        .plugin(&["sync", "--all", "-A", "--no-wait", "-o", "yaml"])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let report: Value = serde_norway::from_str(&run.stdout).expect("YAML");
    let value = report["forceSync"].as_str().expect("a value").to_owned();
    assert_eq!(report["items"].as_array().map(Vec::len), Some(4));
    for (namespace, name) in [(NS, "a1"), (NS, "a2"), (NS, "b1"), ("team-b", "a3")] {
        assert_eq!(
            annotation(&cluster, namespace, name).await.as_ref(),
            Some(&value),
            "{name}"
        );
    }

    let none = cluster.plugin(&["sync", "--connection", "nobody"]).await;
    assert_eq!(none.code, 1, "{none:?}");
    assert_eq!(
        none.stderr,
        "error: no FerrVaultSecret uses connection nobody in namespace default\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_should_refuse_a_suspended_object_without_annotating_it() {
    let cluster = Cluster::start().await;
    synced(&cluster, NS, "paused", "prod", json!({ "suspend": true })).await;
    let run = cluster.plugin(&["sync", "paused"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "ferrvaultsecret/paused not synced: suspended: resume it first (Ready=True Synced)\n"
    );
    assert_eq!(annotation(&cluster, NS, "paused").await, None);
}
