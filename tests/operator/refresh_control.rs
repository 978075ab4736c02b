//! End-to-end: refresh control (issue 36 points 1-3) counted by the FerrVault simulator and the
//! Kubernetes simulator's audit. A new `ferrvault.com/force-sync` value costs exactly one fresh
//! read, the same value again or any other annotation none, 200 objects forced at once no 429; a
//! suspended object makes no request over two refresh intervals and is still deleted;
//! `CreatedOnce` never writes an existing target, also for a recreated FerrVaultSecret; a
//! connection's force-sync re-probes it and forces every dependant; resuming syncs only what is
//! due (no request when only `spec.suspend` changed, one when another field did).

use std::{collections::BTreeMap, time::Duration};

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecretSpec, FerrVaultSecretStatus, RefreshPolicy, SecretSelector, names::FORCE_SYNC_ANNOTATION,
};
use ferrvault_sim::{kube::audit::AuditEntry, testkit::poll::poll_until};
use kube::{
    ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams},
};
use serde_json::json;

/// Merges `patch` into FerrVaultSecret `name`.
async fn patch_fvs(h: &Harness, name: &str, patch: serde_json::Value) {
    h.fvs()
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("patch FerrVaultSecret");
}

/// Sets the force-sync annotation of FerrVaultSecret `name` to `value`.
async fn force(h: &Harness, name: &str, value: &str) {
    patch_fvs(
        h,
        name,
        json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: value } } }),
    )
    .await;
}

/// The status of FerrVaultSecret `name`, once `check` accepts it.
pub(crate) async fn wait_status(
    h: &Harness,
    name: &str,
    what: &str,
    check: impl Fn(&FerrVaultSecretStatus) -> bool,
) -> FerrVaultSecretStatus {
    let check = &check;
    h.eventually(&format!("FerrVaultSecret {name} {what}"), || async move {
        let status = h.fvs().get(name).await.ok()?.status?;
        check(&status).then_some(status)
    })
    .await
}

/// Waits until FerrVaultSecret `name` recorded the force-sync `value`.
async fn wait_forced(h: &Harness, name: &str, value: &str) -> FerrVaultSecretStatus {
    wait_status(h, name, &format!("forced with {value}"), |s| {
        s.observed_force_sync.as_deref() == Some(value)
    })
    .await
}

/// The sum of the samples of the FerrVaultSecret controller's series `name`.
fn secret_controller_sum(h: &Harness, name: &str) -> f64 {
    let prefix = format!(r#"{name}{{controller="ferrvaultsecret""#);
    h.metrics_text()
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Waits until no FerrVaultSecret key is ready or on a worker: every key enqueued before this
/// call has been reconciled.
pub(crate) async fn idle(h: &Harness) {
    h.eventually("the FerrVaultSecret queue idle", || async {
        (secret_controller_sum(h, "workqueue_depth") == 0.0
            && secret_controller_sum(h, "controller_runtime_active_workers") == 0.0)
            .then_some(())
    })
    .await;
}

/// Waits until every FerrVaultSecret of `names` synced and recorded the force-sync `value`:
/// 200 syncs paced at 2 requests a second, on a loaded machine, take longer than the default
/// deadline.
async fn all_synced(h: &Harness, names: &[String], value: Option<&str>) {
    poll_until(
        &format!("all {} synced, forced with {value:?}", names.len()),
        Duration::from_secs(180),
        || async {
            let listed = h
                .fvs()
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            let done = listed
                .items
                .iter()
                .filter(|cr| names.contains(&cr.name_any()))
                .filter_map(|cr| cr.status.as_ref())
                .filter(|s| s.last_synced_at.is_some() && s.observed_force_sync.as_deref() == value)
                .count();
            if done == names.len() {
                Ok(())
            } else {
                Err(format!("{done} of {}", names.len()))
            }
        },
    )
    .await;
}

/// The syncs started because of `trigger` (`ferrvault_secret_sync_trigger_total`).
pub(crate) fn trigger_count(h: &Harness, trigger: &str) -> f64 {
    h.metric(&format!(
        r#"ferrvault_secret_sync_trigger_total{{trigger="{trigger}"}}"#
    ))
    .unwrap_or(0.0)
}

/// Writes to Secret `name` in the audit.
fn secret_writes(entries: &[AuditEntry], name: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.resource == "secrets" && e.name == name)
        .filter(|e| matches!(e.verb.as_str(), "create" | "update" | "patch" | "delete"))
        .map(|e| format!("{} {}", e.verb, e.name))
        .collect()
}

fn policy(spec: FerrVaultSecretSpec, policy: RefreshPolicy) -> FerrVaultSecretSpec {
    FerrVaultSecretSpec {
        refresh_policy: Some(policy),
        ..spec
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_sync_should_read_fresh_once_per_new_value_and_never_for_other_annotations() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.connection("conn-blobs", "blobs-token", OTHER_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.create_secret("barrier", secret_spec("conn-blobs", "blobs"))
        .await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_secret_reason("barrier", "Synced").await;
    idle(&h).await;
    h.fv.reset_stats();
    let forced_before = trigger_count(&h, "force");

    force(&h, "app", "1").await;
    wait_forced(&h, "app", "1").await;
    // The status is written before the pass counts its trigger and publishes its Event: the
    // pass is over once the queue is idle, and the Event is recorded in the background.
    idle(&h).await;
    assert_eq!(h.reveals(), 1, "a new value: exactly one request");
    assert_eq!(trigger_count(&h, "force") - forced_before, 1.0);
    let forced_events = h
        .eventually("a ForcedSync Event", || async {
            let events = h.events_for("app", "ForcedSync").await;
            (!events.is_empty()).then_some(events.len())
        })
        .await;
    assert_eq!(forced_events, 1, "one ForcedSync Event");

    // The same value again, another annotation and a label: nothing is due.
    patch_fvs(
        &h,
        "app",
        json!({ "metadata": {
            "annotations": { FORCE_SYNC_ANNOTATION: "1", "argocd.argoproj.io/tracking-id": "shop:x" },
            "labels": { "team": "shop" },
        } }),
    )
    .await;
    // Barrier: the watch delivers app's change before barrier's; once barrier's forced sync is
    // done and the queue is idle, any pass app's change enqueued is done too.
    force(&h, "barrier", "b1").await;
    wait_forced(&h, "barrier", "b1").await;
    idle(&h).await;
    let stats = h.fv.stats();
    assert_eq!(
        stats.total.vaults.get("prod").copied().unwrap_or(0),
        1,
        "the same value again and other annotations: no request ({:?})",
        stats.total.vaults
    );
    assert_eq!(
        h.fvs()
            .get("app")
            .await
            .unwrap()
            .status
            .unwrap()
            .observed_force_sync
            .as_deref(),
        Some("1")
    );

    // refreshInterval 0s: still forced.
    patch_fvs(&h, "app", json!({ "spec": { "refreshInterval": "0s" } })).await;
    wait_status(&h, "app", "synced at generation 2", |s| {
        s.observed_generation == Some(2)
    })
    .await;
    h.fv.reset_stats();
    force(&h, "app", "2").await;
    wait_forced(&h, "app", "2").await;
    assert_eq!(h.reveals(), 1, "forced with refreshInterval 0s");
    h.finish().await;
}

/// FerrVault's budget in [`two_hundred_objects_forced_at_once_should_cause_no_429`]: 2
/// requests a second, a burst of 2, and the operator configured with the same.
const FORCED_BUDGET: (f64, u32) = (2.0, 2);

/// 200 forced passes of one vault and credential, 4 workers. The budget is far below what the
/// workers send unpaced, whatever the machine's load: without coalescing (a window of 0), each
/// unpaced forced pass sends its own request as soon as it reaches the reveal, and the workers
/// take the first four keys of the burst together, so four requests meet a burst of 2 within a
/// fraction of one pass (and the next ones come every quarter of a pass, far above 2 a second
/// unless a pass takes 2 seconds). Paced, a flight still gathers the passes waiting for its
/// token (up to one per worker), so the 200 take about 50 requests at 2 a second. (With the 25ms
/// window the default gives, the workers' passes met in one flight and a loaded machine's slow
/// passes stayed under a budget of 5 a second: the test passed without the limiter.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_objects_forced_at_once_should_cause_no_429() {
    let (rate, burst) = FORCED_BUDGET;
    let mut settings = test_settings();
    settings.ferrvault.rate_per_second = rate;
    settings.ferrvault.burst = burst;
    settings.ferrvault.coalesce_window = Duration::ZERO;
    let h = Harness::start_with(settings).await;
    h.fv.set_default_rate_limit(rate, burst);
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let names: Vec<String> = (0..200).map(|i| format!("app-{i:03}")).collect();
    for name in &names {
        h.create_secret(name, secret_spec("conn", "prod")).await;
    }
    all_synced(&h, &names, None).await;
    idle(&h).await;
    h.fv.reset_stats();

    // `kubectl annotate fvs --all ferrvault.com/force-sync=go`, all at once.
    futures::future::join_all(names.iter().map(|name| force(&h, name, "go"))).await;
    all_synced(&h, &names, Some("go")).await;
    let stats = h.fv.stats();
    assert!(h.reveals() >= 1, "forced syncs read FerrVault");
    assert_eq!(
        stats.total.rate_limited,
        0,
        "no 429 in {} requests: {:?}",
        h.reveals(),
        stats.total.statuses
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspended_object_should_make_no_request_over_two_refresh_intervals_and_still_be_deleted() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.connection("conn-blobs", "blobs-token", OTHER_TOKEN).await;
    let every_second = |conn: &str, vault: &str| FerrVaultSecretSpec {
        refresh_interval: "1s".into(),
        ..secret_spec(conn, vault)
    };
    h.create_secret("paused", every_second("conn", "prod")).await;
    h.create_secret("clock", every_second("conn-blobs", "blobs"))
        .await;
    h.wait_secret_reason("paused", "Synced").await;

    patch_fvs(&h, "paused", json!({ "spec": { "suspend": true } })).await;
    let suspended = wait_status(&h, "paused", "Suspended", |s| {
        condition(&s.conditions, "Suspended").is_some_and(|c| c.status == "True" && c.reason == "Suspended")
    })
    .await;
    assert_eq!(
        ready(Some(&suspended.conditions)).unwrap().reason,
        "Synced",
        "Ready is left as it was"
    );
    h.fv.reset_stats();
    force(&h, "paused", "while-paused").await;
    // Two refresh intervals, measured by the other object's refreshes.
    let start = h
        .fvs()
        .get("clock")
        .await
        .unwrap()
        .status
        .unwrap()
        .last_synced_at
        .unwrap()
        .0;
    wait_status(&h, "clock", "refreshed twice", |s| {
        s.last_synced_at
            .as_ref()
            .is_some_and(|t| t.0.duration_since(start).as_secs_f64() >= 2.0)
    })
    .await;
    let stats = h.fv.stats();
    assert_eq!(
        stats.total.vaults.get("prod").copied().unwrap_or(0),
        0,
        "no request for the suspended object, not even forced: {:?}",
        stats.total.vaults
    );
    assert_eq!(
        h.fvs()
            .get("paused")
            .await
            .unwrap()
            .status
            .unwrap()
            .observed_force_sync,
        None
    );

    // Resumed: the force still pending syncs; the Suspended condition goes.
    patch_fvs(&h, "paused", json!({ "spec": { "suspend": false } })).await;
    let resumed = wait_forced(&h, "paused", "while-paused").await;
    assert!(
        condition(&resumed.conditions, "Suspended").is_none(),
        "{:?}",
        resumed.conditions
    );

    // Deleting a suspended object still runs its cleanup (the finalizer goes).
    patch_fvs(&h, "paused", json!({ "spec": { "suspend": true } })).await;
    wait_status(&h, "paused", "Suspended again", |s| {
        condition(&s.conditions, "Suspended").is_some()
    })
    .await;
    h.fvs()
        .delete("paused", &DeleteParams::default())
        .await
        .expect("delete");
    h.eventually("the suspended object deleted", || async {
        h.fvs().get_opt("paused").await.ok()?.is_none().then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_once_should_never_write_an_existing_target_even_for_a_recreated_object() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // A pre-existing target that opted in: any other policy would adopt and overwrite it.
    let mut existing = h.put_secret("pre", &[("DB_URL", "hand-made")]).await;
    existing
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert("ferrvault.com/adoptable-by".into(), "pre".into());
    h.secrets()
        .replace("pre", &Default::default(), &existing)
        .await
        .expect("opt in");
    h.fv.reset_stats();
    h.kube.clear_audit();
    h.create_secret(
        "pre",
        policy(secret_spec("conn", "prod"), RefreshPolicy::CreatedOnce),
    )
    .await;
    h.wait_secret_reason("pre", "TargetKept").await;
    assert_eq!(
        secret_writes(&h.kube.audit(), "pre"),
        Vec::<String>::new(),
        "0 writes"
    );
    assert_eq!(h.reveals(), 0, "nothing revealed");
    assert_eq!(
        data_of(&h.secrets().get("pre").await.unwrap())["DB_URL"],
        b"hand-made"
    );

    // Created once: a missing target is created; deleted (orphaning it) and recreated, kept.
    h.create_secret(
        "once",
        policy(secret_spec("conn", "prod"), RefreshPolicy::CreatedOnce),
    )
    .await;
    h.wait_secret_reason("once", "Synced").await;
    h.wait_target("once", |s| {
        data_of(s).get("DB_URL").map(Vec::as_slice) == Some(DB_URL.as_bytes())
    })
    .await;
    h.fvs()
        .delete("once", &DeleteParams::orphan())
        .await
        .expect("delete, orphaning the target");
    h.eventually("the first object gone", || async {
        h.fvs().get_opt("once").await.ok()?.is_none().then_some(())
    })
    .await;
    h.fv.reset_stats();
    h.kube.clear_audit();
    h.create_secret(
        "once",
        policy(secret_spec("conn", "prod"), RefreshPolicy::CreatedOnce),
    )
    .await;
    h.wait_secret_reason("once", "TargetKept").await;
    assert_eq!(
        secret_writes(&h.kube.audit(), "once"),
        Vec::<String>::new(),
        "recreated: 0 writes"
    );
    assert_eq!(h.reveals(), 0);

    // Only force-sync overwrites it.
    force(&h, "pre", "1").await;
    wait_forced(&h, "pre", "1").await;
    h.wait_target("pre", |s| {
        data_of(s).get("DB_URL").map(Vec::as_slice) == Some(DB_URL.as_bytes())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connections_force_sync_should_reprobe_it_and_force_every_dependant() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let names = ["a", "b", "c"];
    for name in names {
        h.create_secret(name, secret_spec("conn", "prod")).await;
    }
    for name in names {
        h.wait_secret_reason(name, "Synced").await;
    }
    idle(&h).await;
    h.fv.reset_stats();
    let forced_before = trigger_count(&h, "force");
    h.fvc()
        .patch(
            "conn",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "annotations": { FORCE_SYNC_ANNOTATION: "c1" } } })),
        )
        .await
        .expect("annotate the connection");
    h.eventually("the connection re-probed", || async {
        let status = h.fvc().get("conn").await.ok()?.status?;
        (status.observed_force_sync.as_deref() == Some("c1")).then_some(())
    })
    .await;
    for name in names {
        wait_status(&h, name, "forced by its connection", |s| {
            s.observed_connection_force_sync.as_deref() == Some("c1")
        })
        .await;
    }
    // Each pass counts its trigger after writing its status.
    idle(&h).await;
    let stats = h.fv.stats();
    assert!(
        stats.total.endpoints.get("healthz").copied().unwrap_or(0) >= 1,
        "re-probed"
    );
    assert!(h.reveals() >= 1, "read FerrVault");
    assert_eq!(
        trigger_count(&h, "force") - forced_before,
        3.0,
        "every dependant forced"
    );
    h.finish().await;
}

/// Two objects of one vault and credential: `peer`'s pass keeps its answer (every key) for the
/// rest of its wave (up to 2s after it served anyone), which an unforced pass of `forced` would
/// take without a request. (`forced` selects one key, so its own earlier answer, kept for its
/// wave, does not cover `peer`'s keys and cannot serve `peer` instead.) The value changes in
/// FerrVault between `peer`'s pass and the forced pass of `forced`: only a fresh read writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forced_sync_should_read_fresh_rather_than_take_its_waves_kept_answer() {
    const ROTATED: &str = "sk_live_LEAKCHECK_apikey_rotated";
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut one_key = secret_spec("conn", "prod");
    one_key.selector = Some(SecretSelector {
        names: vec!["API_KEY".to_owned()],
    });
    h.create_secret("forced", one_key).await;
    h.wait_secret_reason("forced", "Synced").await;
    idle(&h).await;
    h.create_secret("peer", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("peer", "Synced").await;
    h.fv.put_secret("prod", "API_KEY", ROTATED);
    h.fv.reset_stats();
    force(&h, "forced", "1").await;
    wait_forced(&h, "forced", "1").await;
    let target = h.secrets().get("forced").await.expect("target Secret");
    assert_eq!(
        data_of(&target)
            .get("API_KEY")
            .map(|value| String::from_utf8_lossy(value).into_owned()),
        Some(ROTATED.to_owned()),
        "the forced pass wrote what FerrVault holds now, not its wave's kept answer"
    );
    assert_eq!(h.reveals(), 1, "the forced pass read FerrVault itself");
    h.finish().await;
}

/// The sum of `ferrvault_secret_sync_trigger_total` over every trigger: the syncs started.
pub(crate) fn syncs_started(h: &Harness) -> f64 {
    ["force", "refresh", "spec", "inputs", "drift", "source", "hint"]
        .iter()
        .map(|trigger| trigger_count(h, trigger))
        .sum()
}

/// Sets `spec.suspend` of FerrVaultSecret `name` to `suspend`, and waits until a pass answered
/// the generation this made (with `Suspended=True` when suspending, without it when resuming).
async fn set_suspend(h: &Harness, name: &str, suspend: bool) -> FerrVaultSecretStatus {
    patch_fvs(h, name, json!({ "spec": { "suspend": suspend } })).await;
    let generation = h.fvs().get(name).await.expect("get").metadata.generation;
    wait_status(h, name, &format!("suspend: {suspend} answered"), |s| {
        let suspended = condition(&s.conditions, "Suspended").filter(|c| c.observed_generation == generation);
        if suspend {
            suspended.is_some()
        } else {
            condition(&s.conditions, "Suspended").is_none() && s.observed_generation == generation
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_should_sync_only_when_something_besides_suspend_changed() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.connection("conn-blobs", "blobs-token", OTHER_TOKEN).await;
    h.create_secret("paused", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("paused", "Synced").await;
    let synced_at = h
        .fvs()
        .get("paused")
        .await
        .unwrap()
        .status
        .unwrap()
        .last_synced_at;

    // Paused and resumed with nothing else changed, the refresh an hour away: nothing to do.
    set_suspend(&h, "paused", true).await;
    idle(&h).await;
    let (reveals, syncs) = (h.reveals(), syncs_started(&h));
    let resumed = set_suspend(&h, "paused", false).await;
    idle(&h).await;
    assert_eq!(h.reveals() - reveals, 0, "no FerrVault request on resume");
    assert_eq!(syncs_started(&h) - syncs, 0.0, "no sync on resume");
    let kept = ready(Some(&resumed.conditions)).expect("Ready");
    assert_eq!((kept.status.as_str(), kept.reason.as_str()), ("True", "Synced"));
    assert_eq!(kept.observed_generation, resumed.observed_generation);
    assert_eq!(resumed.last_synced_at, synced_at, "the last sync still holds");

    // Paused, edited (another vault), resumed: exactly one sync and one request.
    set_suspend(&h, "paused", true).await;
    patch_fvs(
        &h,
        "paused",
        json!({ "spec": { "vault": "blobs", "connectionRef": { "name": "conn-blobs" } } }),
    )
    .await;
    idle(&h).await;
    let (reveals, spec_syncs) = (h.reveals(), trigger_count(&h, "spec"));
    let resumed = set_suspend(&h, "paused", false).await;
    idle(&h).await;
    assert_eq!(h.reveals() - reveals, 1, "one FerrVault request for the edit");
    assert_eq!(trigger_count(&h, "spec") - spec_syncs, 1.0);
    assert_eq!(
        ready(Some(&resumed.conditions)).map(|c| c.reason.as_str()),
        Some("Synced")
    );
    assert_eq!(
        resumed.synced_keys,
        ["CERT", "CONFIG"],
        "the target holds the new vault's keys"
    );
    h.finish().await;
}
