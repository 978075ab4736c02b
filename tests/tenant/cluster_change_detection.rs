//! `changeDetection: {mode: Versions}` on a ClusterFerrVaultConnection (issue 38): one poller for
//! the whole connection, counted per token by the FerrVault simulator. A value rotated behind it
//! reaches a FerrVaultSecret's target and every copy of a ClusterFerrVaultSecret within the
//! interval (+1 s), with one `list` per interval and at most one reveal per object (the cluster
//! secret's one reveal serving all its copies; the two usually join into one request); the
//! connection says `ChangeDetection=True/VersionsFollowed`.

use std::time::{Duration, Instant};

use ferrvault_operator::api::FerrVaultSecret;
use ferrvault_sim::testkit::poll_until;
use kube::{
    Api,
    api::{ApiResource, DynamicObject},
};
use serde_json::{Value, json};

use crate::{
    cluster_connections::{
        PLATFORM, SERVED, cluster_connections, label_namespace, platform_connection_with, platform_reveals,
        through_platform,
    },
    cluster_secrets::{cluster_secret, copy, served_namespace, wait_allowed, wait_status},
    harness::{
        Launch, VICTIM, VICTIM_VAULT, World,
        bounds::{Baseline, victim_keeps_syncing},
        finish,
        tenant::SHOWS_WITHIN,
        victim_syncs,
    },
};

/// The interval the platform connection follows versions at: the schema's floor.
const INTERVAL: Duration = Duration::from_secs(5);
/// The namespaces the cluster secret copies into.
const COPIED_TO: [&str; 3] = ["versions-a", "versions-b", "versions-c"];
/// The value rotated in.
const ROTATED: &str = "postgres://rotated-behind-the-platform";

/// `GET /operator/secrets/list` calls made with the platform's token so far.
fn platform_lists(world: &World) -> u64 {
    let stats = world.fv.token_stats("platform");
    stats.endpoints.get("list").copied().unwrap_or(0)
}

/// The `ChangeDetection` condition of the platform connection, once it has one.
async fn change_detection(world: &World) -> Value {
    let api = cluster_connections(world.admin.clone());
    poll_until(
        "the platform connection's ChangeDetection",
        SHOWS_WITHIN,
        || async {
            let status = api.get(PLATFORM).await.map_err(|e| e.to_string())?.data["status"].clone();
            let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
            conditions
                .into_iter()
                .find(|c| c["type"] == "ChangeDetection" && c["reason"] != Value::Null)
                .ok_or_else(|| status.to_string())
        },
    )
    .await
}

/// The victim's FerrVaultSecret `name`, once its status records a source version.
async fn with_source_version(world: &World, name: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        world.admin.clone(),
        VICTIM,
        &ApiResource::erase::<FerrVaultSecret>(&()),
    );
    poll_until(&format!("{name}'s source version"), SHOWS_WITHIN, || async {
        let status = api.get(name).await.map_err(|e| e.to_string())?.data["status"].clone();
        status["observedSourceVersion"]
            .as_str()
            .map(|_| ())
            .ok_or_else(|| status.to_string())
    })
    .await;
}

/// Whether the victim's target and every copy hold [`ROTATED`].
async fn rotated_everywhere(world: &World) -> Result<(), String> {
    let target = world.victim().target("via-platform").await.unwrap_or_default();
    if target.get("DB_URL").map(Vec::as_slice) != Some(ROTATED.as_bytes()) {
        return Err("the FerrVaultSecret's target".into());
    }
    for namespace in COPIED_TO {
        let copy = copy(world, namespace)
            .await
            .and_then(|s| s.data)
            .unwrap_or_default();
        if copy.get("DB_URL").map(|v| v.0.as_slice()) != Some(ROTATED.as_bytes()) {
            return Err(format!("the copy in {namespace}"));
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_behind_a_cluster_connection_should_reach_a_secret_and_every_copy_within_the_interval() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let allowed = json!({ "selector": { "matchLabels": { SERVED: "yes" } } });
    let versions = json!({ "changeDetection": { "mode": "Versions", "interval": "5s" } });
    platform_connection_with(&world, allowed, versions).await;
    label_namespace(&world, VICTIM, Some("yes")).await;
    for namespace in COPIED_TO {
        served_namespace(&world, namespace).await;
    }
    wait_allowed(&world, 1 + COPIED_TO.len() as u64).await;
    let detection = change_detection(&world).await;
    assert_eq!(
        (detection["status"].as_str(), detection["reason"].as_str()),
        (Some("True"), Some("VersionsFollowed")),
        "{detection}"
    );

    // Refreshed only every 24 h (the safety net): every later pass is change detection's.
    let followed = json!({ "selector": { "names": ["DB_URL"] }, "refreshInterval": "24h" });
    let mut spec = through_platform();
    json_patch::merge(&mut spec, &followed);
    world.victim().ferrvault_secret("via-platform", spec).await;
    with_source_version(&world, "via-platform").await;
    cluster_secret(&world, "shared", followed).await;
    let status = wait_status(&world, "shared", "every copy, with its source version", |s| {
        s["provisioned"] == COPIED_TO.len() && s["observedSourceVersion"].is_string()
    })
    .await;
    assert_eq!(status["selected"], COPIED_TO.len(), "{status}");

    let (reveals, lists) = (platform_reveals(&world), platform_lists(&world));
    let rotated_at = Instant::now();
    assert!(world.fv.put_secret(VICTIM_VAULT, "DB_URL", ROTATED));
    poll_until("the rotated value everywhere", SHOWS_WITHIN, || {
        rotated_everywhere(&world)
    })
    .await;
    let took = rotated_at.elapsed();
    assert!(took <= INTERVAL + Duration::from_secs(1), "took {took:?}");
    // One for the FerrVaultSecret, one for the cluster secret's three copies; the two passes,
    // queued by one `list`, usually join into one request (the client's single-flight).
    let revealed = platform_reveals(&world) - reveals;
    assert!(
        (1..=2).contains(&revealed),
        "{revealed} reveals: at most one per object, none per copy"
    );
    let polls = platform_lists(&world) - lists;
    assert!(polls <= 2, "{polls} lists in {took:?}: one per interval");
    let status = wait_status(&world, "shared", "the rotated copies recorded", |s| {
        s["provisioned"] == COPIED_TO.len()
    })
    .await;
    assert_eq!(status["failedNamespaces"], json!([]), "{status}");

    victim_keeps_syncing(&world, "after-rotation").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[ROTATED]).await;
}
