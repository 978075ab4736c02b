//! End-to-end: `changeDetection: {mode: Versions}` (issue 38 point 3), counted by the FerrVault
//! simulator: a rotated value reaches its target within the interval (+1 s) with one reveal; one
//! `list` per interval however many FerrVaultSecrets use the connection, and no reveal for a
//! change of a name they do not select; a server without `list` makes the connection poll,
//! reported once and not asked again (a restart included).

use std::time::Duration;

use ferrvault_operator::api::{
    ChangeDetection, ChangeDetectionMode, FerrVaultConnection, FerrVaultSecret, SecretSelector,
};
use ferrvault_sim::ferrvault::{Endpoint, Unserved};
use tokio::time::Instant;

use crate::operator_support::*;

/// The interval the tests follow versions at: the schema's floor.
const INTERVAL: Duration = Duration::from_secs(5);

/// `GET /operator/secrets/list` calls the simulator counted.
fn lists(h: &Harness) -> u64 {
    h.fv.stats().total.endpoints.get("list").copied().unwrap_or(0)
}

/// A token Secret and connection `conn` following versions every [`INTERVAL`]; returns once its
/// `ChangeDetection` condition has `reason`.
async fn versions_connection(h: &Harness, conn: &str, reason: &str) -> FerrVaultConnection {
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    let mut spec = connection_spec(&h.fv.url(), "conn-token");
    spec.change_detection = Some(ChangeDetection {
        mode: ChangeDetectionMode::Versions,
        interval: Some("5s".into()),
    });
    h.create_connection(conn, spec).await;
    h.eventually(&format!("ChangeDetection with reason {reason}"), || async {
        let c = h.fvc().get(conn).await.ok()?;
        (condition(&c.status.as_ref()?.conditions, "ChangeDetection")?.reason == reason).then_some(c)
    })
    .await
}

/// FerrVaultSecret `name` reading `DB_URL` of `prod` through `conn`, refreshed only every 24 h
/// (the safety net): every pass after its first is change detection's.
async fn app(h: &Harness, name: &str, conn: &str) -> FerrVaultSecret {
    let mut spec = secret_spec(conn, "prod");
    spec.selector = Some(SecretSelector {
        names: vec!["DB_URL".into()],
    });
    spec.refresh_interval = "24h".into();
    h.create_secret(name, spec).await;
    h.eventually(&format!("{name} synced with its source version"), || async {
        let cr = h.fvs().get(name).await.ok()?;
        cr.status.as_ref()?.observed_source_version.as_ref()?;
        Some(cr)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_value_should_reach_its_target_within_the_interval_with_one_reveal() {
    let h = Harness::start().await;
    versions_connection(&h, "conn", "VersionsFollowed").await;
    app(&h, "app", "conn").await;
    let (reveals, listed) = (h.reveals(), lists(&h));
    let rotated_at = Instant::now();
    assert!(h.fv.put_secret("prod", "DB_URL", "postgres://rotated"));
    h.wait_target_for("the rotated value", "app", |s| {
        s.data
            .as_ref()
            .and_then(|d| d.get("DB_URL"))
            .map(|v| v.0.as_slice())
            == Some(b"postgres://rotated")
    })
    .await;
    let took = rotated_at.elapsed();
    assert!(took <= INTERVAL + Duration::from_secs(1), "took {took:?}");
    assert_eq!(h.reveals() - reveals, 1, "exactly one reveal for one rotation");
    let polls = lists(&h) - listed;
    assert!(polls <= 2, "{polls} lists in {took:?}: one per interval");
    let synced = h.wait_secret_reason("app", "Synced").await;
    assert!(synced.status.unwrap().observed_source_version.is_some());
    h.eventually("the source trigger counted", || async {
        let series = r#"ferrvault_secret_sync_trigger_total{trigger="source"}"#;
        (h.metric(series) == Some(1.0)).then_some(())
    })
    .await;
    h.eventually("a change-to-sync sample", || async {
        (h.metric("ferrvault_change_to_sync_seconds_count") == Some(1.0)).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_objects_should_add_no_list_calls_and_no_reveals_for_a_name_they_do_not_select() {
    /// As many as sync in a few seconds in process; the poller's cost does not depend on it.
    const OBJECTS: usize = 100;
    let h = Harness::start().await;
    versions_connection(&h, "conn", "VersionsFollowed").await;
    for i in 0..OBJECTS {
        let mut spec = secret_spec("conn", "prod");
        spec.selector = Some(SecretSelector {
            names: vec!["DB_URL".into()],
        });
        spec.refresh_interval = "24h".into();
        h.create_secret(&format!("app-{i}"), spec).await;
    }
    h.eventually("every object synced with its source version", || async {
        let list = h.fvs().list(&Default::default()).await.ok()?;
        let synced = list
            .items
            .iter()
            .filter(|cr| {
                cr.status
                    .as_ref()
                    .is_some_and(|s| s.observed_source_version.is_some())
            })
            .count();
        (synced == OBJECTS).then_some(())
    })
    .await;
    let (reveals, listed, from) = (h.reveals(), lists(&h), Instant::now());
    // A name none of them selects changes: the poller sees it, nobody reveals.
    assert!(h.fv.put_secret("prod", "API_KEY", "sk_live_LEAKCHECK_rotated"));
    h.eventually("three more lists", || async {
        (lists(&h) >= listed + 3).then_some(())
    })
    .await;
    let took = from.elapsed();
    // Three lists need two whole intervals between them (ticks are never made up in a burst).
    assert!(
        took >= INTERVAL * 2 - Duration::from_millis(500),
        "3 lists in {took:?}"
    );
    assert_eq!(
        h.reveals(),
        reveals,
        "no selected version moved: nothing revealed"
    );
    let changed = r#"ferrvault_change_polls_total{result="changed"}"#;
    assert!(
        h.metric(changed) >= Some(2.0),
        "the first answer and the rotation"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_list_should_make_the_connection_poll_and_not_be_asked_again() {
    let h = Harness::start_with_fv(
        test_settings(),
        sim_config().unserved(Endpoint::List, Unserved::NotFound),
    )
    .await;
    let conn = versions_connection(&h, "conn", "Unsupported").await;
    let detection = condition(&conn.status.as_ref().unwrap().conditions, "ChangeDetection").unwrap();
    assert_eq!(detection.status, "False");
    assert_eq!(lists(&h), 1);
    // Its FerrVaultSecrets still sync, by polling.
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let reveals = h.reveals();
    h.eventually("two timed refreshes", || async {
        (h.reveals() >= reveals + 2).then_some(())
    })
    .await;
    // A token Secret change makes the connection's next pass probe again, at the same generation.
    h.put_secret("conn-token", &[("token", PROD_TOKEN), ("rotated", "1")])
        .await;
    h.eventually("a second probe", || async {
        (h.fv.stats().total.endpoints.get("healthz").copied().unwrap_or(0) >= 2).then_some(())
    })
    .await;
    // Longer than an interval: a poller still running would have asked again by then.
    let reveals = h.reveals();
    h.eventually("six more timed refreshes", || async {
        (h.reveals() >= reveals + 6).then_some(())
    })
    .await;
    assert_eq!(lists(&h), 1, "list is not asked again at this generation");
    assert_eq!(
        h.metric(r#"ferrvault_change_polls_total{result="unsupported"}"#),
        Some(1.0)
    );
    // Nor after a restart: the status says so.
    let mut h = h;
    h.restart_operator().await;
    let reveals = h.reveals();
    h.eventually("six timed refreshes after the restart", || async {
        (h.reveals() >= reveals + 6).then_some(())
    })
    .await;
    assert_eq!(lists(&h), 1, "list is not asked again after a restart");
    h.finish().await;
}
