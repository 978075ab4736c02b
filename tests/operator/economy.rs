//! End-to-end: the operator does no work it need not do. A restart with nothing due costs no
//! FerrVault request and no Kubernetes write (yet heals what changed while it was down), the
//! FerrVaultSecrets of one vault cost one FerrVault request per wave (also when they synced
//! before their connection's first probe), and an unchanged refresh costs one status write and
//! no read per object. Measured by the FerrVault simulator's accounting and the Kubernetes
//! simulator's audit.

use std::{collections::BTreeMap, time::Duration};

use crate::operator_support::*;
use ferrvault_operator::{api::FerrVaultSecretSpec, rules::WAVE_SPREAD};
use ferrvault_sim::{
    ferrvault::{Endpoint, FaultSpec},
    kube::audit::AuditEntry,
};
use jiff::Timestamp;
use k8s_openapi::ByteString;
use kube::{
    ResourceExt,
    api::{DeleteParams, ListParams, PostParams},
};

/// `name-00`, `name-01`, …
fn names(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|i| format!("{prefix}-{i:02}")).collect()
}

/// `app` reading `vault` through `conn`, refreshed every `refresh`.
fn refreshed(conn: &str, vault: &str, refresh: &str) -> FerrVaultSecretSpec {
    let mut spec = secret_spec(conn, vault);
    spec.refresh_interval = refresh.into();
    spec
}

/// When each FerrVaultSecret of `names` last synced, once all of them synced after `after`.
async fn synced_after(h: &Harness, names: &[String], after: Timestamp) -> BTreeMap<String, Timestamp> {
    synced_when(h, names, |_, at| at > after).await
}

/// When each FerrVaultSecret of `names` last synced, once `is_new(name, lastSyncedAt)` holds for
/// all of them. Reads with a list, so the audit shows no GET of the test's own.
async fn synced_when(
    h: &Harness,
    names: &[String],
    is_new: impl Fn(&str, Timestamp) -> bool,
) -> BTreeMap<String, Timestamp> {
    h.eventually("every FerrVaultSecret synced", || async {
        let listed = h.fvs().list(&ListParams::default()).await.ok()?;
        let synced: BTreeMap<String, Timestamp> = listed
            .items
            .iter()
            .filter(|cr| names.contains(&cr.name_any()))
            .filter_map(|cr| {
                let status = cr.status.as_ref()?;
                let ready = ready(Some(&status.conditions))?;
                let at = status.last_synced_at.as_ref()?.0;
                (ready.reason == "Synced" && is_new(&cr.name_any(), at)).then(|| (cr.name_any(), at))
            })
            .collect();
        (synced.len() == names.len()).then_some(synced)
    })
    .await
}

/// The latest of `synced`'s times.
fn latest(synced: &BTreeMap<String, Timestamp>) -> Timestamp {
    synced.values().copied().max().expect("at least one")
}

fn is_write(entry: &AuditEntry) -> bool {
    matches!(
        entry.verb.as_str(),
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

/// `verb resource[/subresource] name` of each entry, for failure messages.
fn described<'a>(entries: impl IntoIterator<Item = &'a AuditEntry>) -> Vec<String> {
    entries
        .into_iter()
        .map(|e| format!("{} {}/{} {}", e.verb, e.resource, e.subresource, e.name))
        .collect()
}

/// The value of the operator's `controller_runtime_reconcile_total` for `controller` and `result`.
fn reconciles(h: &Harness, controller: &str, result: &str) -> f64 {
    h.metric(&format!(
        r#"controller_runtime_reconcile_total{{controller="{controller}",result="{result}"}}"#
    ))
    .unwrap_or(0.0)
}

/// Waits until the restarted operator has ended the first pass of each of its `secrets`
/// FerrVaultSecrets and of its connection.
async fn first_passes_after_restart(h: &Harness, secrets: u32) {
    h.eventually("every object's first pass after the restart", || async {
        (reconciles(h, "ferrvaultsecret", "requeue_after") >= f64::from(secrets)
            && reconciles(h, "ferrvaultconnection", "requeue_after") >= 1.0)
            .then_some(())
    })
    .await;
}

/// Fails unless the FerrVault simulator counted no request (reveal or probe) since its stats
/// were reset.
fn assert_no_ferrvault_request(h: &Harness) {
    let stats = h.fv.stats();
    assert_eq!(
        stats.total.requests, 0,
        "no FerrVault request (reveal or probe): {:?}",
        stats.total.endpoints
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_nothing_due_should_make_no_ferrvault_request_and_no_kubernetes_write() {
    let mut h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let apps = names("app", 30);
    for name in &apps {
        h.create_secret(name, refreshed("conn", "prod", "1h")).await;
    }
    synced_after(&h, &apps, Timestamp::UNIX_EPOCH).await;

    h.stop_operator().await;
    h.fv.reset_stats();
    h.kube.clear_audit();
    h.start_operator().await;
    first_passes_after_restart(&h, 30).await;

    assert_no_ferrvault_request(&h);
    let audit = h.kube.audit();
    let writes: Vec<_> = audit.iter().filter(|e| is_write(e)).collect();
    assert!(writes.is_empty(), "no Kubernetes write: {:?}", described(writes));
    let gets: Vec<_> = audit
        .iter()
        .filter(|e| e.verb == "get" && e.name != "ferrvault-operator-content-hash-key")
        .collect();
    assert!(
        gets.is_empty(),
        "nothing read but the watches' lists (and the content-hash key): {:?}",
        described(gets)
    );
    assert!(
        h.metric(r#"ferrvault_secret_last_sync_timestamp_seconds{namespace="default",name="app-00"}"#)
            .is_some(),
        "the last-sync series is back from status"
    );
    assert_eq!(
        h.metric(r#"ferrvault_connection_ready{namespace="default",name="conn"}"#),
        Some(1.0),
        "the connection's gauge is back from status"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_object_should_sync_before_the_secret_list_completes_and_be_due_nothing_after_it() {
    let mut h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.stop_operator().await;
    // A start in a cluster of many Secrets: the list of their metadata takes its time.
    h.kube.faults().hang(Some("list"), Some("secrets"));
    h.kube.clear_audit();
    h.start_operator().await;
    h.create_secret("app", refreshed("conn", "prod", "1h")).await;
    let app = ["app".to_owned()];
    synced_after(&h, &app, Timestamp::UNIX_EPOCH).await;
    let target = h
        .secrets()
        .get("app")
        .await
        .expect("the target Secret is written");
    assert!(
        target.data.is_some_and(|data| !data.is_empty()),
        "with the vault's values"
    );
    let listed = |h: &Harness| {
        h.kube
            .audit()
            .iter()
            .any(|e| e.verb == "list" && e.resource == "secrets" && e.code == 200)
    };
    assert!(!listed(&h), "synced while the Secret list was still held");

    // What it recorded must be what the store shows once listed: neither the passes the list
    // enqueues nor a restart's reveal again.
    h.fv.reset_stats();
    h.kube.faults().unhang();
    h.eventually("the Secret list completed", || async { listed(&h).then_some(()) })
        .await;
    h.stop_operator().await;
    h.start_operator().await;
    first_passes_after_restart(&h, 1).await;
    assert_no_ferrvault_request(&h);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_object_should_sync_while_its_own_namespaces_backlog_waits_for_the_secret_list() {
    let mut h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // More synced objects than the namespace's share of the harness's 4 workers (3).
    let backlog = names("app", 6);
    for name in &backlog {
        h.create_secret(name, refreshed("conn", "prod", "1h")).await;
    }
    let synced = synced_after(&h, &backlog, Timestamp::UNIX_EPOCH).await;
    h.stop_operator().await;
    // Created while the operator was down: its start lists it, never synced.
    h.create_secret("waiting", refreshed("conn", "prod", "1h")).await;
    h.kube.faults().hang(Some("list"), Some("secrets"));
    h.start_operator().await;

    // The backlog's passes could only wait for that list; they must not hold the workers.
    h.create_secret("fresh", refreshed("conn", "prod", "1h")).await;
    let new = ["waiting".to_owned(), "fresh".to_owned()];
    synced_after(&h, &new, Timestamp::UNIX_EPOCH).await;
    let timeouts = r#"controller_runtime_reconcile_timeouts_total{controller="ferrvaultsecret"}"#;
    assert_eq!(
        h.metric(timeouts),
        Some(0.0),
        "no pass had to time out to free a worker"
    );
    let depth = r#"workqueue_depth{controller="ferrvaultsecret",name="ferrvaultsecret",priority=""}"#;
    // The connection's listing may queue the new objects again behind the backlog: at least 6.
    h.eventually(
        "the whole backlog waits in the queue, none of it on a worker",
        || async {
            h.metric(depth)
                .is_some_and(|waiting| waiting >= 6.0)
                .then_some(())
        },
    )
    .await;

    h.fv.reset_stats();
    h.kube.faults().unhang();
    first_passes_after_restart(&h, 6).await;
    assert_no_ferrvault_request(&h);
    assert_eq!(
        synced_after(&h, &backlog, Timestamp::UNIX_EPOCH).await,
        synced,
        "nothing was due"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_sync_should_create_its_target_without_reading_it() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("warm-up", refreshed("conn", "prod", "1h")).await;
    synced_after(&h, &["warm-up".to_owned()], Timestamp::UNIX_EPOCH).await;

    h.kube.clear_audit();
    let apps = names("app", 5);
    for name in &apps {
        h.create_secret(name, refreshed("conn", "prod", "1h")).await;
    }
    synced_after(&h, &apps, Timestamp::UNIX_EPOCH).await;
    let audit = h.kube.audit();
    let of_targets = |verb: &str| -> Vec<&AuditEntry> {
        audit
            .iter()
            .filter(|e| e.verb == verb && e.resource == "secrets" && apps.contains(&e.name))
            .collect()
    };
    assert!(
        of_targets("get").is_empty(),
        "the listed store shows no such Secret: {:?}",
        described(of_targets("get"))
    );
    // Only the operator creates Secrets here (a create names no object in the audit).
    let creates: Vec<_> = audit
        .iter()
        .filter(|e| e.verb == "create" && e.resource == "secrets")
        .collect();
    assert_eq!(
        creates.len(),
        apps.len(),
        "one create each: {:?}",
        described(creates)
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_changed_while_the_operator_was_down_should_be_synced_after_the_restart() {
    let mut h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.connection("blobs-conn", "blobs-token", OTHER_TOKEN).await;
    for name in ["edited", "deleted", "untouched"] {
        h.create_secret(name, refreshed("conn", "prod", "1h")).await;
    }
    h.create_secret("rotated", refreshed("blobs-conn", "blobs", "1h"))
        .await;
    let all: Vec<String> = ["edited", "deleted", "untouched", "rotated"]
        .map(str::to_owned)
        .to_vec();
    synced_after(&h, &all, Timestamp::UNIX_EPOCH).await;
    let good = h.secrets().get("edited").await.unwrap();

    h.stop_operator().await;
    let mut tampered = good.clone();
    tampered.data = Some(BTreeMap::from([(
        "API_KEY".to_owned(),
        ByteString(b"tampered".to_vec()),
    )]));
    h.secrets()
        .replace("edited", &PostParams::default(), &tampered)
        .await
        .unwrap();
    h.secrets()
        .delete("deleted", &DeleteParams::default())
        .await
        .unwrap();
    // A rotation to the same token keeps the test's FerrVault answering; the Secret changes.
    h.put_secret("blobs-token", &[("token", OTHER_TOKEN), ("rotated", "yes")])
        .await;
    h.fv.reset_stats();
    h.kube.clear_audit();
    h.start_operator().await;

    h.wait_target_for("healed after the edit", "edited", |s| s.data == good.data)
        .await;
    h.wait_target_for("recreated after the delete", "deleted", |s| s.data == good.data)
        .await;
    h.eventually("a reveal through the rotated token", || async {
        (h.fv.stats().total.vaults.get("blobs").copied().unwrap_or(0) >= 1).then_some(())
    })
    .await;
    h.eventually("the untouched object's first pass", || async {
        (reconciles(&h, "ferrvaultsecret", "requeue_after") >= 4.0).then_some(())
    })
    .await;
    let untouched: Vec<_> = h
        .kube
        .audit()
        .into_iter()
        .filter(|e| is_write(e) && e.name == "untouched")
        .collect();
    assert!(
        untouched.is_empty(),
        "nothing written for the object nothing changed for: {:?}",
        described(&untouched)
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_secrets_of_one_vault_should_cost_one_ferrvault_request_per_wave() {
    const K: usize = 29;
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let apps = names("app", K);
    for name in &apps {
        h.create_secret(name, refreshed("conn", "prod", "10s")).await;
    }
    let created = synced_after(&h, &apps, Timestamp::UNIX_EPOCH).await;
    assert_eq!(h.reveals(), 1, "{K} new FerrVaultSecrets: one reveal");

    synced_after(&h, &apps, latest(&created)).await;
    assert_eq!(h.reveals(), 2, "their first refresh: one more reveal");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_refresh_should_cost_one_status_write_and_no_read_per_object() {
    const K: usize = 10;
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let apps = names("app", K);
    for name in &apps {
        h.create_secret(name, refreshed("conn", "prod", "4s")).await;
    }
    let created = synced_after(&h, &apps, Timestamp::UNIX_EPOCH).await;
    // One refresh first: from then on the objects refresh together, one wave per interval.
    let first = synced_after(&h, &apps, latest(&created)).await;
    h.kube.clear_audit();
    let reveals = h.reveals();

    synced_after(&h, &apps, latest(&first)).await;
    let audit = h.kube.audit();
    let gets: Vec<_> = audit.iter().filter(|e| e.verb == "get").collect();
    assert!(gets.is_empty(), "no GET: {:?}", described(gets));
    let writes: Vec<_> = audit.iter().filter(|e| is_write(e)).collect();
    assert!(
        writes
            .iter()
            .all(|e| e.resource == "ferrvaultsecrets" && e.subresource == "status"),
        "status writes only: {:?}",
        described(writes.iter().copied())
    );
    for name in &apps {
        let mine = writes.iter().filter(|e| &e.name == name).count();
        assert_eq!(mine, 1, "{name}: one status write for its refresh");
    }
    assert_eq!(h.reveals(), reveals + 1, "one reveal for the wave");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_synced_before_the_first_probe_should_cost_one_request_and_one_write_per_wave() {
    const K: usize = 10;
    const REFRESH: Duration = Duration::from_secs(10);
    let mut settings = test_settings();
    // The connection's first probe is held until every object synced: its one attempt must
    // outlast that.
    settings.ferrvault.attempt_timeout = Duration::from_secs(8);
    let h = Harness::start_with(settings).await;
    h.fv.faults()
        .set(Endpoint::Healthz, FaultSpec::default().with_hang());
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    h.create_connection("conn", connection_spec(&h.fv.url(), "conn-token"))
        .await;
    let apps = names("app", K);
    let every = format!("{}s", REFRESH.as_secs());
    for name in &apps {
        h.create_secret(name, refreshed("conn", "prod", &every)).await;
    }
    let first = synced_after(&h, &apps, Timestamp::UNIX_EPOCH).await;
    let conn = h.fvc().get("conn").await.unwrap();
    assert!(
        ready(conn.status.as_ref().map(|s| s.conditions.as_slice())).is_none(),
        "every object synced before its connection's first probe answered"
    );
    h.kube.clear_audit();
    let reveals = h.reveals();

    h.fv.faults().clear(Endpoint::Healthz);
    h.wait_connection_reason("conn", "Reachable").await;
    // Each object's refresh: due at least the interval less the wave spread after its sync,
    // `lastSyncedAt` being whole seconds.
    let earliest = REFRESH.mul_f64(1.0 - WAVE_SPREAD) - Duration::from_secs(1);
    synced_when(&h, &apps, |name, at| {
        Duration::try_from(at.duration_since(first[name])).is_ok_and(|since| since >= earliest)
    })
    .await;
    assert_eq!(
        h.reveals(),
        reveals + 1,
        "one reveal for the wave: the probe finding the connection reachable resyncs nothing"
    );
    let audit = h.kube.audit();
    for name in &apps {
        let mine: Vec<_> = audit
            .iter()
            .filter(|e| is_write(e) && e.resource == "ferrvaultsecrets" && &e.name == name)
            .collect();
        assert_eq!(
            mine.len(),
            1,
            "{name}: one status write: {:?}",
            described(mine.iter().copied())
        );
    }
    h.finish().await;
}
