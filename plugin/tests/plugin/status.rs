//! `status`: the table and its JSON and YAML, from what the operator wrote.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::support::{Cluster, NS, ready, synced_status};

/// Ten minutes ago, at the API's second precision.
fn ten_minutes_ago() -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second() - 600).expect("a timestamp")
}

/// Three objects as the operator leaves them: synced, failing, suspended.
async fn three_objects(cluster: &Cluster, namespace: &str) -> Timestamp {
    let at = ten_minutes_ago();
    cluster.create_fvs(namespace, "synced", "prod", json!({})).await;
    cluster
        .create_fvs(namespace, "failing", "prod", json!({ "vault": "gone" }))
        .await;
    cluster
        .create_fvs(
            namespace,
            "paused",
            "prod",
            json!({ "suspend": true, "refreshPolicy": "CreatedOnce" }),
        )
        .await;
    cluster
        .write_status(
            namespace,
            "synced",
            synced_status(at, "5", "connection=c/1/True token=1 ca=- key=k"),
        )
        .await;
    let failed = ready("False", "VaultNotFound", "vault gone not found", 1, at);
    cluster
        .write_status(namespace, "failing", json!({ "conditions": [failed] }))
        .await;
    at
}

fn item<'a>(items: &'a Value, name: &str) -> &'a Value {
    items["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed in {items}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn status_should_list_each_ferrvaultsecret_with_its_ready_reason_schedule_policy_and_suspension() {
    let cluster = Cluster::start().await;
    let at = three_objects(&cluster, NS).await;
    let run = cluster.plugin(&["status", "-o", "json"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let items = run.json();

    let synced = item(&items, "synced");
    assert_eq!(
        (&synced["ready"], &synced["reason"]),
        (&json!("True"), &json!("Synced"))
    );
    assert_eq!(
        synced["lastSyncedAt"]
            .as_str()
            .map(|t| t.parse::<Timestamp>().ok()),
        Some(Some(at))
    );
    assert_eq!(
        (&synced["due"], &synced["refreshPolicy"]),
        (&json!("At"), &json!("Periodic"))
    );
    let next: Timestamp = synced["nextDueAt"]
        .as_str()
        .expect("a next due time")
        .parse()
        .expect("RFC 3339");
    let after = next.duration_since(at);
    // One hour, within the ±10% wave of its (namespace, connection, vault).
    assert!(
        after >= SignedDuration::from_mins(54) && after <= SignedDuration::from_mins(66),
        "next refresh {after:?} after the last sync"
    );

    let failing = item(&items, "failing");
    assert_eq!(
        (&failing["ready"], &failing["reason"]),
        (&json!("False"), &json!("VaultNotFound"))
    );
    assert_eq!(
        (&failing["due"], &failing["nextDueAt"]),
        (&json!("Now"), &Value::Null)
    );

    let paused = item(&items, "paused");
    assert_eq!(
        (&paused["due"], &paused["suspended"]),
        (&json!("Suspended"), &json!(true))
    );
    assert_eq!(paused["refreshPolicy"], "CreatedOnce");
    assert_eq!(paused["ready"], Value::Null, "no pass yet");
}

#[tokio::test(flavor = "multi_thread")]
async fn status_should_print_a_kubectl_table_with_namespaces_only_for_all_namespaces() {
    let cluster = Cluster::start().await;
    cluster.namespace("team-b").await;
    three_objects(&cluster, NS).await;
    cluster
        .create_fvs("team-b", "other", "prod", json!({ "refreshPolicy": "OnChange" }))
        .await;

    let run = cluster.plugin(&["status"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "READY",
            "REASON",
            "LAST",
            "SYNC",
            "NEXT",
            "DUE",
            "POLICY",
            "SUSPENDED"
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        lines.len(),
        4,
        "three objects of the namespace only:\n{}",
        run.stdout
    );
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(name))
            .expect(name)
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("synced")[..4], ["synced", "True", "Synced", "10m"]);
    assert_eq!(
        row("failing")[..5],
        ["failing", "False", "VaultNotFound", "never", "now"]
    );
    assert_eq!(
        row("paused"),
        ["paused", "-", "-", "never", "-", "CreatedOnce", "true"]
    );

    let all = cluster.plugin(&["status", "-A"]).await;
    assert_eq!(all.code, 0, "{all:?}");
    assert!(all.stdout.starts_with("NAMESPACE"), "{}", all.stdout);
    let other = all
        .stdout
        .lines()
        .find(|l| l.starts_with("team-b"))
        .expect("the other namespace's object");
    assert_eq!(
        other.split_whitespace().collect::<Vec<_>>(),
        ["team-b", "other", "-", "-", "never", "now", "OnChange", "false"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_yaml_should_hold_the_same_items_as_json() {
    let cluster = Cluster::start().await;
    three_objects(&cluster, NS).await;
    let json = cluster.plugin(&["status", "-o", "json"]).await.json();
    let yaml = cluster.plugin(&["status", "-o", "yaml"]).await;
    assert_eq!(yaml.code, 0, "{yaml:?}");
    let yaml: Value = serde_norway::from_str(&yaml.stdout).expect("YAML");
    assert_eq!(yaml, json);
}

#[tokio::test(flavor = "multi_thread")]
async fn status_should_show_a_tenants_control_characters_as_question_marks() {
    let cluster = Cluster::start().await;
    // Stored past the CRD schema (its enum refuses it): what a cluster with an older schema holds.
    let object = json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "FerrVaultSecret",
        "metadata": { "name": "app", "namespace": NS },
        "spec": { "connectionRef": { "name": "prod" }, "vault": "v", "refreshPolicy": "Weekly\u{1b}[2J\r" },
    });
    cluster
        .sim
        .store_bypassing_admission("ferrvault.com", "v1alpha1", "ferrvaultsecrets", object)
        .expect("stored");
    let run = cluster.plugin(&["status"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\r'),
        "{:?}",
        run.stdout
    );
    assert!(run.stdout.contains("Weekly?[2J?"), "{}", run.stdout);
}
