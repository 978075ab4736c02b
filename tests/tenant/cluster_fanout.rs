//! A ClusterFerrVaultSecret as its users see it beyond the copies (issue 37): a copy someone
//! deletes, or whose data they edit under its content-hash annotation, is healed within a second,
//! for one reveal; its Events say `Synced` and name each failed
//! namespace with its reason; in cloud mode each namespace is read on its own (FerrVault
//! authorises each), exactly once per refresh, a bounded number at a time, so a slow FerrVault
//! costs N / 8 round trips, not N, within the reconcile deadline.

use std::time::{Duration, Instant};

use ferrvault_sim::{
    ferrvault::{Endpoint, FaultSpec},
    testkit::poll_until,
};
use k8s_openapi::api::{core::v1::Secret, events::v1::Event};
use kube::{
    Api,
    api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

use crate::{
    cluster_connections::{PLATFORM, SERVED, cluster_connections, platform_connection, platform_reveals},
    cluster_secrets::{
        TARGET, cluster_secret, cluster_secrets, copy, select_namespace, served_namespace, serving_world,
        wait_allowed, wait_status,
    },
    harness::{
        ATTACKER, Launch, ORG, PROJECT, VICTIM_DB_URL, World,
        bounds::{Baseline, victim_keeps_syncing},
        finish,
        tenant::SHOWS_WITHIN,
        victim_syncs,
    },
};

/// How long a copy someone deleted or edited may stay so: far below the one-hour refresh, so only
/// the Secret's own event can have brought it back.
const HEALED_WITHIN: Duration = Duration::from_secs(2);
/// Namespaces of the cloud-mode test.
const CLOUD_NAMESPACES: usize = 100;
/// What each cloud reveal takes at the simulated FerrVault.
const CLOUD_LATENCY: Duration = Duration::from_millis(200);
/// How long the cloud-mode copies may take: one namespace after another would take
/// `CLOUD_NAMESPACES × CLOUD_LATENCY` (20 s); eight at a time take 2.5 s.
const CLOUD_COPIES_WITHIN: Duration = Duration::from_secs(10);

/// The FerrVault requests of `endpoint` so far.
fn requests(world: &World, endpoint: &str) -> u64 {
    world
        .fv
        .stats()
        .total
        .endpoints
        .get(endpoint)
        .copied()
        .unwrap_or(0)
}

/// Forces a sync of cluster secret `name` with `token` and waits until its status honoured it.
async fn force(world: &World, name: &str, token: &str) {
    let force = json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": token } } });
    cluster_secrets(world.admin.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&force))
        .await
        .expect("the admin forces a sync");
    wait_status(world, name, "the forced sync", |s| {
        s["observedForceSync"] == token
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copy_someone_deletes_or_edits_should_be_healed_within_a_second_for_one_reveal_each() {
    let (world, mut operator, baseline) = serving_world().await;
    for namespace in ["fan-a", "fan-b"] {
        served_namespace(&world, namespace).await;
    }
    wait_allowed(&world, 2).await;
    cluster_secret(&world, "shared", json!({})).await;
    wait_status(&world, "shared", "two copies", |s| s["provisioned"] == 2).await;
    let untouched = copy(&world, "fan-b").await.expect("fan-b's copy");

    let before = platform_reveals(&world);
    Api::<Secret>::namespaced(world.admin.clone(), "fan-a")
        .delete(TARGET, &DeleteParams::default())
        .await
        .expect("someone deletes a copy");
    let deleted = Instant::now();
    poll_until("the deleted copy is back", HEALED_WITHIN, || async {
        copy(&world, "fan-a")
            .await
            .map(|_| ())
            .ok_or_else(|| "no copy yet".to_owned())
    })
    .await;
    assert!(deleted.elapsed() < HEALED_WITHIN, "{:?}", deleted.elapsed());
    let healed = copy(&world, "fan-a").await.expect("the copy");
    assert_eq!(healed.data.expect("data")["DB_URL"].0, VICTIM_DB_URL.as_bytes());
    // Values are not kept between passes: the heal reads FerrVault once, for every namespace.
    assert_eq!(platform_reveals(&world) - before, 1, "one reveal to heal a copy");
    let other = copy(&world, "fan-b").await.expect("fan-b's copy");
    assert_eq!(
        other.metadata.resource_version, untouched.metadata.resource_version,
        "the other namespace's copy is not rewritten"
    );

    // Its data edited under the operator's content-hash annotation: rewritten at that event.
    let before = platform_reveals(&world);
    let tamper = json!({ "data": { "DB_URL": "dGFtcGVyZWQ=" } });
    Api::<Secret>::namespaced(world.admin.clone(), "fan-a")
        .patch(TARGET, &PatchParams::default(), &Patch::Merge(&tamper))
        .await
        .expect("someone edits a copy's data");
    let edited = Instant::now();
    poll_until("the edited copy is healed", HEALED_WITHIN, || async {
        let data = copy(&world, "fan-a")
            .await
            .and_then(|c| c.data)
            .unwrap_or_default();
        match data.get("DB_URL") {
            Some(value) if value.0 == VICTIM_DB_URL.as_bytes() => Ok(()),
            other => Err(format!("{} bytes", other.map_or(0, |v| v.0.len()))),
        }
    })
    .await;
    assert!(edited.elapsed() < HEALED_WITHIN, "{:?}", edited.elapsed());
    assert_eq!(platform_reveals(&world) - before, 1, "one reveal to heal an edit");
    victim_keeps_syncing(&world, "after-heal").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_secret_should_publish_synced_and_a_warning_naming_each_failed_namespace() {
    let world = World::start().await;
    let operator = Launch::new().insecure_http().start(&world);
    platform_connection(
        &world,
        json!({ "selector": { "matchLabels": { SERVED: "yes" } } }),
    )
    .await;
    served_namespace(&world, "fan-a").await;
    // The attacker's namespace: selected, not allowed by the connection.
    select_namespace(&world, ATTACKER).await;
    wait_allowed(&world, 1).await;
    cluster_secret(&world, "shared", json!({})).await;
    wait_status(&world, "shared", "one copy and one failure", |s| {
        s["provisioned"] == 1 && s["failedNamespaces"].as_array().is_some_and(|f| f.len() == 1)
    })
    .await;
    // Cluster-scoped: its Events live in `default`, as Kubernetes puts those of such objects.
    let events = Api::<Event>::namespaced(world.admin.clone(), "default");
    let found = poll_until("the cluster secret's Events", SHOWS_WITHIN, || async {
        let list = events
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let mine: Vec<(String, String, String)> = list
            .items
            .into_iter()
            .filter(|e| {
                e.regarding
                    .as_ref()
                    .is_some_and(|r| r.kind.as_deref() == Some("ClusterFerrVaultSecret"))
            })
            .map(|e| {
                (
                    e.type_.unwrap_or_default(),
                    e.reason.unwrap_or_default(),
                    e.note.unwrap_or_default(),
                )
            })
            .collect();
        let has = |type_: &str, reason: &str| mine.iter().any(|(t, r, _)| t == type_ && r == reason);
        if has("Normal", "Synced") && has("Warning", "SyncFailed") {
            Ok(mine)
        } else {
            Err(format!("{mine:?}"))
        }
    })
    .await;
    let warning = found
        .iter()
        .find(|(_, reason, _)| reason == "SyncFailed")
        .expect("the Warning");
    assert!(
        warning
            .2
            .starts_with(&format!("ConnectionNotAllowed: namespace {ATTACKER}:")),
        "{warning:?}"
    );
    let synced = found
        .iter()
        .find(|(_, reason, _)| reason == "Synced")
        .expect("Synced");
    assert!(synced.2.starts_with("1 of 2 selected namespaces"), "{synced:?}");
    // No value in any Event (and the rest of the leak scan).
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cloud_cluster_connection_should_read_each_namespace_once_per_refresh_eight_at_a_time() {
    // FerrVault honours the cluster's tokens for every namespace.
    let mut config = World::ferrvault_config();
    config.oidc_clusters[0].namespaces = Vec::new();
    let world = World::start_with(config).await;
    let mut operator = Launch::new()
        .insecure_http()
        .cluster_identity(&world.projected_token_path(), &[&world.fv.url()])
        .start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let connection: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ferrvault.com/v1alpha1",
        "kind": "ClusterFerrVaultConnection",
        "metadata": { "name": PLATFORM },
        "spec": {
            "mode": "cloud",
            "url": world.fv.url(),
            "organization": ORG,
            "oidc": {},
            "allowedNamespaces": { "selector": { "matchLabels": { SERVED: "yes" } } },
        },
    }))
    .expect("a ClusterFerrVaultConnection");
    cluster_connections(world.admin.clone())
        .create(&PostParams::default(), &connection)
        .await
        .expect("the admin creates the cloud cluster connection");
    for i in 0..CLOUD_NAMESPACES {
        served_namespace(&world, &format!("cloud-{i:03}")).await;
    }
    wait_allowed(&world, CLOUD_NAMESPACES as u64).await;
    world.fv.faults().set(
        Endpoint::CloudReveal,
        FaultSpec::default().with_latency(CLOUD_LATENCY),
    );

    let before = requests(&world, "cloud_reveal");
    let created = Instant::now();
    cluster_secret(&world, "shared", json!({ "project": PROJECT })).await;
    let status = wait_status(&world, "shared", "a copy in every namespace", |s| {
        s["provisioned"] == CLOUD_NAMESPACES
    })
    .await;
    let took = created.elapsed();
    assert!(
        took < CLOUD_COPIES_WITHIN,
        "{took:?}: the namespaces were not read a bounded number at a time"
    );
    assert_eq!(status["revealScope"], "PerNamespace", "the status says the cost");
    assert_eq!(
        requests(&world, "cloud_reveal") - before,
        CLOUD_NAMESPACES as u64,
        "one read per namespace"
    );
    for i in [0, CLOUD_NAMESPACES - 1] {
        let copy = copy(&world, &format!("cloud-{i:03}")).await.expect("a copy");
        assert_eq!(copy.data.expect("data")["DB_URL"].0, VICTIM_DB_URL.as_bytes());
    }

    // One refresh (forced): again one read per namespace, no more.
    let before = requests(&world, "cloud_reveal");
    force(&world, "shared", "1").await;
    assert_eq!(
        requests(&world, "cloud_reveal") - before,
        CLOUD_NAMESPACES as u64,
        "one read per namespace per refresh"
    );
    world.fv.faults().clear_all();
    victim_keeps_syncing(&world, "after-cloud-fan-out").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[]).await;
}
