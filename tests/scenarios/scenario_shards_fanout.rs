//! Issue 39 point 5, a ClusterFerrVaultSecret's fan-out under shards: three replicas with
//! `--shards 6` provision one cluster secret into 30 namespaces, each namespace's copy written
//! only by the replica holding its shard, the object's status (Ready/Synced, every copy
//! counted) written by the holder of the empty namespace's shard. SIGKILL that holder: the
//! survivors take its shards and the object, ask FerrVault nothing and rewrite nothing; a value
//! changed in FerrVault and a force-sync reach every copy; deleting the object while the other
//! survivor is frozen deletes every copy, whichever replica holds it, before its finalizer is
//! released.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use controller_actors::Shards;
use ferrvault_operator::api::{ClusterFerrVaultSecret, names::CLUSTER_SECRET_UID_LABEL};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, Secret};
use kube::{
    Api,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

use crate::{
    scenario_shards::{
        SHARDS, create_namespace, launch_sharded, platform_connection, sum_all, target_writes,
        team_namespaces, wait_for_split, writers_by_namespace,
    },
    scenario_support::{
        audit::{is_object_write, time_of},
        cluster::{Cluster, VAULT, ferrvault_config, unlimited},
        finish,
        fixtures::{API_KEY, DB_URL},
        operator::OperatorProcess,
        poll_until,
    },
};

const NAMESPACES: usize = 30;
/// The cluster secret and its copies' name in every namespace.
const NAME: &str = "shared";
const TARGET: &str = "shared-db";
/// The value FerrVault holds after the change.
const ROTATED: &str = "LEAKCHECK-rotated-api-key-fanout";
/// How long the copies, the status or the deletion may take.
const WITHIN: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_should_fan_a_cluster_secret_out_each_writing_its_own_shards_copies() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    let namespaces = team_namespaces(NAMESPACES);
    for namespace in &namespaces {
        create_namespace(&cluster, namespace).await;
    }
    platform_connection(&cluster).await;
    let (mut operators, owners) = launch_sharded(&cluster, "shards-fanout", &[]).await;
    create_cluster_secret(&cluster, &namespaces).await;
    wait_status(&cluster, "every copy provisioned, Ready/Synced", |s| {
        s["selected"] == NAMESPACES && s["provisioned"] == NAMESPACES && ready(s) == ("True", "Synced")
    })
    .await;
    wait_copies(&cluster, &namespaces, API_KEY).await;
    // Its Synced Event, in `default` (a cluster-scoped object's), whichever shard holds `default`.
    wait_synced_event(&cluster).await;

    // Each copy written by the replica holding its namespace's shard, no reconcile failed.
    let of = Shards::new(u32::from(SHARDS)).expect("a valid count");
    let holder = |owners: &BTreeMap<u16, usize>, namespace: &str| owners[&of.of_namespace(namespace).0];
    let writers = writers_by_namespace(&cluster, &operators);
    for namespace in &namespaces {
        let owner = &operators[holder(&owners, namespace)].name;
        assert_eq!(
            writers.get(namespace.as_str()),
            Some(&BTreeSet::from([owner.clone()])),
            "{namespace}'s copy should be written by its shard's holder only"
        );
    }
    let errors = sum_all(
        &mut operators,
        &[0, 1, 2],
        "controller_runtime_reconcile_errors_total",
    )
    .await;
    assert_eq!(errors, 0.0, "no replica should fail a reconcile");

    // SIGKILL the object's writer: the survivors take its shards and the object; nothing is
    // due, so nothing is asked of FerrVault and nothing is written.
    let killed = holder(&owners, "");
    let live: Vec<usize> = (0..3).filter(|i| *i != killed).collect();
    let requests_before = cluster.fv.stats().total.requests;
    let target_writes_before = target_writes(&cluster);
    operators[killed].kill9();
    assert_eq!(
        operators[killed].wait_exit(Duration::from_secs(10)),
        None,
        "killed by a signal"
    );
    let killed_at = Timestamp::now();
    let owners_after = wait_for_split(&mut operators, &live, 3).await;
    for i in &live {
        wait_ready(&operators[*i]).await;
    }
    assert_eq!(
        (
            cluster.fv.stats().total.requests - requests_before,
            target_writes(&cluster)
        ),
        (0, target_writes_before),
        "a takeover with nothing due should ask FerrVault nothing and write nothing"
    );
    let status = wait_status(&cluster, "still Ready/Synced", |s| ready(s) == ("True", "Synced")).await;
    assert_eq!(status["provisioned"], NAMESPACES, "every copy still counted");

    // A value changed in FerrVault, then a force-sync: every copy gets it, each from its holder.
    assert!(cluster.fv.put_secret(VAULT, "API_KEY", ROTATED));
    let force = json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": "1" } } });
    cluster_secrets(&cluster)
        .patch(NAME, &PatchParams::default(), &Patch::Merge(&force))
        .await
        .expect("force a sync");
    wait_copies(&cluster, &namespaces, ROTATED).await;
    wait_status(&cluster, "the forced sync recorded", |s| {
        s["observedForceSync"] == "1" && s["provisioned"] == NAMESPACES && ready(s) == ("True", "Synced")
    })
    .await;
    for entry in cluster.kube.audit() {
        let namespace = entry.namespace.as_str();
        if entry.resource == "secrets"
            && entry.code < 300
            && namespace.starts_with("team-")
            && time_of(&entry) > killed_at
        {
            let owner = &operators[holder(&owners_after, namespace)].name;
            assert!(
                entry.identity == *owner || !entry.identity.starts_with("operator-"),
                "{namespace}'s copy was written by {} after the kill, not by its shard's holder {owner}",
                entry.identity
            );
        }
    }

    // Deleted while the other survivor is frozen: the object's writer deletes its own copies
    // and keeps the finalizer until the frozen replica's shards are taken over and their copies
    // deleted too; every copy goes, then the object.
    let writer = holder(&owners_after, "");
    let frozen = *live.iter().find(|i| **i != writer).expect("two survivors");
    operators[frozen].pause();
    cluster_secrets(&cluster)
        .delete(NAME, &DeleteParams::default())
        .await
        .expect("delete the cluster secret");
    poll_until("the cluster secret and every copy gone", WITHIN, || async {
        let left = copies(&cluster, &namespaces).await;
        let object = cluster_secrets(&cluster)
            .get_opt(NAME)
            .await
            .map_err(|e| e.to_string())?;
        match (left.len(), object) {
            (0, None) => Ok(()),
            (left, object) => Err(format!(
                "{left} copies left, object still there: {}",
                object.is_some()
            )),
        }
    })
    .await;
    operators[frozen].resume();
    // The finalizer was released after the last copy went, by whichever replica.
    let audit = cluster.kube.audit();
    let released = audit
        .iter()
        .rposition(|e| {
            e.resource == "clusterferrvaultsecrets"
                && e.subresource.is_empty()
                && is_object_write(e)
                && e.code < 300
                && e.identity.starts_with("operator-")
        })
        .expect("a replica released the finalizer");
    let last_delete = audit
        .iter()
        .rposition(|e| {
            e.resource == "secrets" && e.verb == "delete" && e.code < 300 && e.namespace.starts_with("team-")
        })
        .expect("the copies were deleted");
    assert!(
        last_delete < released,
        "the finalizer was released (audit #{released}, by {}) before the last copy was deleted (#{last_delete}, by {})",
        audit[released].identity,
        audit[last_delete].identity
    );

    finish("shards-fanout", started, &cluster, operators, &[ROTATED]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_status_writer_holding_no_selected_namespace_should_still_record_the_content_hash() {
    let started = Instant::now();
    let cluster = Cluster::start(ferrvault_config(unlimited(), false)).await;
    let namespaces = team_namespaces(NAMESPACES);
    for namespace in &namespaces {
        create_namespace(&cluster, namespace).await;
    }
    platform_connection(&cluster).await;
    let (mut operators, owners) = launch_sharded(&cluster, "shards-fanout-elsewhere", &[]).await;
    // Only the namespaces the other two replicas hold: the status writer has no copy to write,
    // yet the others compare theirs with the content hash it records.
    let of = Shards::new(u32::from(SHARDS)).expect("a valid count");
    let writer = owners[&of.of_namespace("").0];
    let elsewhere: Vec<String> = (namespaces.iter())
        .filter(|ns| owners[&of.of_namespace(ns).0] != writer)
        .cloned()
        .collect();
    assert!(!elsewhere.is_empty(), "30 namespaces cover every shard");
    create_cluster_secret(&cluster, &elsewhere).await;
    let count = elsewhere.len();
    let status = wait_status(&cluster, "every copy provisioned, Ready/Synced", |s| {
        s["selected"] == count && s["provisioned"] == count && ready(s) == ("True", "Synced")
    })
    .await;
    assert!(
        status["contentHash"].is_string(),
        "the status records the content hash"
    );
    wait_copies(&cluster, &elsewhere, API_KEY).await;
    let writers = writers_by_namespace(&cluster, &operators);
    assert!(
        writers
            .keys()
            .all(|ns| !ns.starts_with("team-") || elsewhere.contains(ns)),
        "only the selected namespaces are written: {writers:?}"
    );
    let errors = sum_all(
        &mut operators,
        &[0, 1, 2],
        "controller_runtime_reconcile_errors_total",
    )
    .await;
    assert_eq!(errors, 0.0, "no replica should fail a reconcile");
    finish("shards-fanout-elsewhere", started, &cluster, operators, &[]).await;
}

/// Waits for a `Synced` Event about ClusterFerrVaultSecret [`NAME`] in `default`.
async fn wait_synced_event(cluster: &Cluster) {
    poll_until(
        "the cluster secret's Synced Event in default",
        Duration::from_secs(20),
        || async {
            let events = Api::<Event>::namespaced(cluster.client.clone(), "default")
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            events
                .items
                .iter()
                .any(|e| {
                    e.involved_object.name.as_deref() == Some(NAME) && e.reason.as_deref() == Some("Synced")
                })
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "{} Events in default, none Synced about {NAME}",
                        events.items.len()
                    )
                })
        },
    )
    .await;
}

/// The ClusterFerrVaultSecrets, untyped.
fn cluster_secrets(cluster: &Cluster) -> Api<DynamicObject> {
    Api::all_with(
        cluster.client.clone(),
        &ApiResource::erase::<ClusterFerrVaultSecret>(&()),
    )
}

/// ClusterFerrVaultSecret [`NAME`]: vault [`VAULT`] through `platform` into [`TARGET`] in
/// `namespaces`.
async fn create_cluster_secret(cluster: &Cluster, namespaces: &[String]) {
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultSecret",
        "metadata": { "name": NAME },
        "spec": {
            "namespaces": { "names": namespaces },
            "secretSpec": {
                "connectionRef": { "name": "platform", "kind": "ClusterFerrVaultConnection" },
                "vault": VAULT,
                "target": { "name": TARGET },
            },
        },
    }))
    .expect("a ClusterFerrVaultSecret");
    cluster_secrets(cluster)
        .create(&PostParams::default(), &object)
        .await
        .expect("create ClusterFerrVaultSecret");
}

/// The cluster secret's status once `check` accepts it.
async fn wait_status(cluster: &Cluster, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let api = cluster_secrets(cluster);
    poll_until(what, WITHIN, || async {
        let status = api.get(NAME).await.map_err(|e| e.to_string())?.data["status"].clone();
        if check(&status) {
            Ok(status)
        } else {
            Err(status.to_string())
        }
    })
    .await
}

/// The `Ready` condition's `(status, reason)` in `status`.
fn ready(status: &Value) -> (&str, &str) {
    let conditions = status["conditions"].as_array();
    let ready = conditions.and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
    let field = |name: &str| ready.and_then(|r| r[name].as_str()).unwrap_or_default();
    (field("status"), field("reason"))
}

/// The copies [`TARGET`] in `namespaces`, by namespace.
async fn copies(cluster: &Cluster, namespaces: &[String]) -> BTreeMap<String, Secret> {
    let mut found = BTreeMap::new();
    for namespace in namespaces {
        let copy = Api::<Secret>::namespaced(cluster.client.clone(), namespace)
            .get_opt(TARGET)
            .await
            .expect("read a copy");
        if let Some(copy) = copy {
            found.insert(namespace.clone(), copy);
        }
    }
    found
}

/// Waits until every namespace holds its copy, labelled with the object's UID, with the
/// vault's `DB_URL` and `api_key` as `API_KEY`.
async fn wait_copies(cluster: &Cluster, namespaces: &[String], api_key: &str) {
    poll_until(&format!("{} copies right", namespaces.len()), WITHIN, || async {
        let found = copies(cluster, namespaces).await;
        let right = found
            .values()
            .filter(|copy| {
                let data = copy.data.clone().unwrap_or_default();
                let value = |key: &str| data.get(key).map(|v| v.0.clone());
                let labelled = copy
                    .metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key(CLUSTER_SECRET_UID_LABEL));
                labelled
                    && data.len() == 2
                    && value("DB_URL").as_deref() == Some(DB_URL.as_bytes())
                    && value("API_KEY").as_deref() == Some(api_key.as_bytes())
            })
            .count();
        // Counts only: the values are secrets.
        if right == namespaces.len() {
            Ok(())
        } else {
            Err(format!("{right} right of {}", found.len()))
        }
    })
    .await;
}

/// Waits until `operator` is ready: every watch of its held shards listed.
async fn wait_ready(operator: &OperatorProcess) {
    poll_until(&format!("{} ready", operator.name), WITHIN, || async {
        match operator.probe("/readyz?verbose").await {
            (200, body) if body.contains("[+]watches ok") => Ok(()),
            (status, body) => Err(format!("{status}: {body}")),
        }
    })
    .await;
}
