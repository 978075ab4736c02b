//! End-to-end: Events are emitted for what changed and are not flooded; the leak scan that
//! ends every operator test really finds a value that leaked.

use crate::operator_support::*;
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_failures_should_emit_one_sync_failed_event_not_one_per_pass() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.fv.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into(); // failures retry within min(refresh, 5m)
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Unreachable").await;
    h.eventually("three failed reconciles", || async {
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="Unreachable"}"#)
            .filter(|n| *n >= 3.0)
    })
    .await;
    let failed = h.events_for("app", "SyncFailed").await;
    assert_eq!(failed.len(), 1, "one Event for one ongoing failure");
    let event = &failed[0];
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert!(event.note.as_deref().unwrap().starts_with("Unreachable: "));
    assert_eq!(event.reporting_controller.as_deref(), Some("ferrvault-operator"));
    let writes = h
        .kube
        .audit()
        .iter()
        .filter(|e| e.resource == "events" && e.verb != "get" && e.verb != "list")
        .count();
    assert_eq!(writes, 1, "no Event write per retry");

    // Recovery is news: one Synced Event.
    h.fv.faults().clear(Endpoint::Reveal);
    h.wait_secret_reason("app", "Synced").await;
    h.eventually("a Synced event", || async {
        (h.events_for("app", "Synced").await.len() == 1).then_some(())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_recurring_after_another_should_fold_into_its_first_event() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    h.create_secret("app", spec).await;
    let synced_notes = || async {
        let mut notes: Vec<(String, i32)> = h
            .events_for("app", "Synced")
            .await
            .into_iter()
            .map(|e| (e.note.unwrap_or_default(), e.series.map_or(1, |s| s.count)))
            .collect();
        notes.sort();
        notes
    };
    let first = h
        .eventually("a Synced event for the first content", || async {
            let notes = synced_notes().await;
            (notes.len() == 1).then(|| notes[0].0.clone())
        })
        .await;

    h.fv.put_secret("prod", "DB_URL", "postgres://app:LEAKCHECK-other@db2:5432/shop");
    h.eventually("a second Synced event, for the new content", || async {
        (synced_notes().await.len() == 2).then_some(())
    })
    .await;
    h.fv.put_secret("prod", "DB_URL", DB_URL);
    let folded = h
        .eventually("the first content's Event counted twice", || async {
            let notes = synced_notes().await;
            notes
                .iter()
                .any(|(note, count)| *note == first && *count == 2)
                .then_some(notes)
        })
        .await;
    assert_eq!(
        folded.len(),
        2,
        "folded into the Event already written, not a third: {folded:?}"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[should_panic(expected = "leaked into logs")]
async fn leak_scan_should_catch_a_secret_value_in_the_logs() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.wait_connection_reason("conn", "Reachable").await;
    tracing::info!(value = DB_URL, "planted on purpose to prove the scan works");
    h.finish().await;
}

/// Issue 39: the `Synced` Event is written after the status, in the background. With every
/// Event create held by the Kubernetes simulator (its `hang` fault), the object still reaches
/// Ready, and the Event arrives once the sink answers, stamped no earlier than the Ready
/// transition. Awaited before the status (as before), the held create would cost the pass the
/// sink's 5 s deadline, so Ready would come at least 4 s after the Event's time, and the Event
/// would be given up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_should_not_wait_for_a_slow_event_sink() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.kube.faults().hang(Some("create"), Some("events"));
    h.create_secret("app", secret_spec("conn", "prod")).await;
    let cr = h.wait_secret_reason("app", "Synced").await;
    h.kube.faults().unhang();
    let ready_since = ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .expect("a Ready condition")
        .last_transition_time
        .0;
    let event = h
        .eventually("the Synced Event, once the sink answers", || async {
            h.events_for("app", "Synced").await.into_iter().next()
        })
        .await;
    let written_at = event.event_time.expect("an eventTime").0;
    assert!(
        written_at.as_second() >= ready_since.as_second(),
        "the Event ({written_at}) was published before Ready ({ready_since}): Ready waited for it"
    );
    h.finish().await;
}
