//! End-to-end: a flood of failing passes costs at most what the Event correlator allows per
//! object (client-go's `EventCorrelator`, `src/reconcile/events/ledger.rs`): at most 25 Event
//! writes at once, and more than 10 different notes of one kind within 10 minutes combined into
//! one Event. Each pass is forced by an edit of the FerrVaultSecret (a new generation), so the
//! flood is as fast as the tenant can edit.

use std::collections::BTreeSet;

use crate::operator_support::*;
use ferrvault_operator::{COMBINED_PREFIX, REPORTING_CONTROLLER, api::SecretSelector};
use kube::api::{Patch, PatchParams};
use serde_json::json;

/// Passes forced on one object: well past the spam filter's burst.
const PASSES: usize = 40;
/// The spam filter's burst per object (client-go's `defaultSpamBurst`).
const SPAM_BURST: usize = 25;
/// Different notes of one kind written as Events of their own before the rest are combined
/// (client-go's `defaultAggregateMaxEvents`).
const AGGREGATE_AFTER: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_alternating_between_two_notes_should_write_at_most_the_spam_burst_of_events() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // Two notes in turn: each pass folds into the other note's Event, a write every pass.
    let missing = |pass: usize| {
        if pass.is_multiple_of(2) {
            "MISSING_A"
        } else {
            "MISSING_B"
        }
    };
    flood(&h, missing).await;

    let writes = event_writes(&h, "app");
    assert_eq!(
        writes, SPAM_BURST,
        "{PASSES} failing passes, 2 notes: the spam filter's burst of writes, no more"
    );
    let events = h.events_for("app", "SyncFailed").await;
    assert_eq!(events.len(), 2, "one Event per note");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_with_a_new_note_each_pass_should_be_combined_after_ten() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    flood(&h, |pass| format!("MISSING_{pass}")).await;

    let events = h.events_for("app", "SyncFailed").await;
    let notes: BTreeSet<String> = events.iter().filter_map(|e| e.note.clone()).collect();
    let combined: Vec<&String> = notes.iter().filter(|n| n.starts_with(COMBINED_PREFIX)).collect();
    assert_eq!(
        (events.len(), combined.len()),
        (AGGREGATE_AFTER + 1, 1),
        "{PASSES} different notes: {AGGREGATE_AFTER} Events of their own and one combined: {notes:#?}"
    );
    assert!(
        events
            .iter()
            .all(|e| e.reporting_controller.as_deref() == Some(REPORTING_CONTROLLER)),
        "every Event is the operator's"
    );
    assert_eq!(
        event_writes(&h, "app"),
        AGGREGATE_AFTER + 1,
        "later ones repeat the combined Event"
    );
    h.finish().await;
}

/// Creates FerrVaultSecret `app` asking FerrVault for a key it lacks (`MissingKeys`, nothing
/// written to the target), then edits the key [`PASSES`] times; after each edit, waits for the
/// pass that reports it.
async fn flood<S: AsRef<str>>(h: &Harness, missing: impl Fn(usize) -> S) {
    let mut spec = secret_spec("conn", "prod");
    spec.selector = Some(SecretSelector {
        names: vec![missing(0).as_ref().to_owned()],
    });
    h.create_secret("app", spec).await;
    wait_reported(h, missing(0).as_ref()).await;
    for pass in 1..=PASSES {
        let key = missing(pass);
        let patch = json!({ "spec": { "selector": { "names": [key.as_ref()] } } });
        h.fvs()
            .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("edit the FerrVaultSecret");
        wait_reported(h, key.as_ref()).await;
    }
}

/// Waits until `app`'s Ready condition reports `key` missing.
async fn wait_reported(h: &Harness, key: &str) {
    let fvs = h.fvs();
    h.eventually(&format!("MissingKeys naming {key}"), || {
        let fvs = fvs.clone();
        async move {
            let cr = fvs.get("app").await.ok()?;
            let ready = ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))?.clone();
            (ready.reason == "MissingKeys" && ready.message.contains(&format!("[{key}]"))).then_some(())
        }
    })
    .await;
}

/// Event writes about object `name`, from the API server's audit: creates (the only object
/// publishing Events in these tests is `name`; a create names no object) and patches of Events
/// named after it.
fn event_writes(h: &Harness, name: &str) -> usize {
    h.kube
        .audit()
        .iter()
        .filter(|e| {
            e.resource == "events"
                && matches!(e.verb.as_str(), "create" | "patch")
                && (200..300).contains(&e.code)
                && (e.verb == "create" || e.name.starts_with(&format!("{name}.")))
        })
        .count()
}
