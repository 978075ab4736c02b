//! End-to-end: pausing and resuming a FerrVaultConnection re-syncs none of its FerrVaultSecrets
//! (issue 36 point 2), counted by the FerrVault simulator (reveals) and the sync-trigger
//! counter, while a real edit of the connection still re-syncs every one; and a connection whose
//! status an operator without `status.inputGeneration` wrote (an upgrade) re-syncs nothing either.

use std::time::Duration;

use crate::{
    operator_support::*,
    refresh_control::{idle, syncs_started, trigger_count, wait_status},
};
use ferrvault_operator::api::FerrVaultConnection;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

/// The dependants of connection `conn` in these tests.
const DEPENDANTS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// Merges `patch` into FerrVaultConnection `conn`; returns its generation after it.
async fn patch_conn(h: &Harness, patch: serde_json::Value) -> Option<i64> {
    h.fvc()
        .patch("conn", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("patch the connection")
        .metadata
        .generation
}

/// Creates every one of [`DEPENDANTS`] through `conn` and waits until each synced and the queue
/// is idle.
async fn synced_dependants(h: &Harness) {
    for name in DEPENDANTS {
        h.create_secret(name, secret_spec("conn", "prod")).await;
    }
    for name in DEPENDANTS {
        h.wait_secret_reason(name, "Synced").await;
    }
    idle(h).await;
}

/// Waits until every dependant's `Suspended` condition is present (`suspended`) or gone.
async fn dependants_suspended(h: &Harness, suspended: bool) {
    for name in DEPENDANTS {
        wait_status(h, name, &format!("suspended: {suspended}"), |s| {
            let condition = condition(&s.conditions, "Suspended");
            if suspended {
                condition.is_some_and(|c| c.reason == "ConnectionSuspended")
            } else {
                condition.is_none()
            }
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_a_connection_should_resync_none_of_its_dependants_while_an_edit_resyncs_each() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    synced_dependants(&h).await;

    patch_conn(&h, json!({ "spec": { "suspend": true } })).await;
    dependants_suspended(&h, true).await;
    idle(&h).await;
    let (reveals, syncs) = (h.reveals(), syncs_started(&h));
    let resumed = patch_conn(&h, json!({ "spec": { "suspend": false } })).await;
    h.eventually("the connection probed again after the resume", || async {
        let status = h.fvc().get("conn").await.ok()?.status?;
        let ready = ready(Some(&status.conditions))?;
        (ready.observed_generation == resumed && condition(&status.conditions, "Suspended").is_none())
            .then_some(())
    })
    .await;
    dependants_suspended(&h, false).await;
    idle(&h).await;
    assert_eq!(h.reveals() - reveals, 0, "no FerrVault request on resume");
    assert_eq!(syncs_started(&h) - syncs, 0.0, "no dependant synced on resume");

    // A real edit (organization: ignored in ferrvault mode, but a field they read): each syncs.
    let inputs_syncs = trigger_count(&h, "inputs");
    let edited = patch_conn(&h, json!({ "spec": { "organization": "acme" } })).await;
    let marker = format!("/{}/", edited.unwrap_or_default());
    for name in DEPENDANTS {
        wait_status(&h, name, "synced with the edited connection", |s| {
            s.observed_inputs.as_deref().is_some_and(|i| i.contains(&marker))
        })
        .await;
    }
    idle(&h).await;
    assert_eq!(
        trigger_count(&h, "inputs") - inputs_syncs,
        DEPENDANTS.len() as f64,
        "every dependant synced once for the edit"
    );
    assert!(h.reveals() > reveals, "the edit read FerrVault");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_status_without_an_input_generation_should_resync_no_dependant() {
    let mut settings = test_settings();
    // Probed every second: its first status write after the upgrade comes soon.
    settings.connection_probe_interval = Duration::from_secs(1);
    let mut h = Harness::start_with(settings).await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    // Edited once before its dependants exist: they record generation 2.
    let generation = patch_conn(&h, json!({ "spec": { "organization": "acme" } })).await;
    h.eventually("the connection probed at generation 2", || async {
        let status = h.fvc().get("conn").await.ok()?.status?;
        (ready(Some(&status.conditions))?.observed_generation == generation).then_some(())
    })
    .await;
    synced_dependants(&h).await;

    // The status as an operator without these fields left it.
    h.stop_operator().await;
    let connections: Api<FerrVaultConnection> = h.fvc();
    connections
        .patch_status(
            "conn",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "inputDigest": null, "inputGeneration": null } })),
        )
        .await
        .expect("clear the new status fields");
    let reveals = h.reveals();

    // The upgraded operator judges every dependant before and after the connection's first
    // status write records its input generation.
    for round in ["before its first status write", "after it"] {
        h.start_operator().await;
        if round == "after it" {
            h.eventually("the connection's input generation recorded", || async {
                let status = h.fvc().get("conn").await.ok()?.status?;
                (status.input_generation == generation).then_some(())
            })
            .await;
        }
        h.eventually("every dependant judged", || async {
            (h.secret_reconciles() >= DEPENDANTS.len() as f64).then_some(())
        })
        .await;
        idle(&h).await;
        assert_eq!(h.reveals() - reveals, 0, "{round}: no FerrVault request");
        assert_eq!(syncs_started(&h), 0.0, "{round}: no dependant synced");
        h.stop_operator().await;
    }
    h.start_operator().await;
    h.finish().await;
}
