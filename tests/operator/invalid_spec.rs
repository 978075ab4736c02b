//! End-to-end: custom resources that bypassed the CRD schema (a field of the wrong type). The API
//! refuses them, so they are written straight into storage (the simulator's test control
//! `store_bypassing_admission`), as objects stored under an older CRD schema exist. Each is
//! reported alone with `InvalidSpec`, its neighbours still sync, its deletion is not blocked
//! (the finalizer and status writes leave the invalid field unchanged, which a real server's
//! ratcheting admits), and an edit that fixes it brings it back.

use crate::operator_support::*;
use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret, names::SECRET_FINALIZER};
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_with_a_mistyped_field_should_report_invalid_spec_alone_and_stay_deletable() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_raw::<FerrVaultSecret>(
        "vault-number",
        json!({ "connectionRef": { "name": "conn" }, "vault": 42 }),
    )
    .await;
    h.create_raw::<FerrVaultSecret>(
        "connectionref-string",
        json!({ "connectionRef": "conn", "vault": "prod" }),
    )
    .await;
    h.create_secret("good", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("good", "Synced").await;

    let condition = h
        .wait_raw_reason::<FerrVaultSecret>("vault-number", "InvalidSpec")
        .await;
    assert_eq!(condition.status, "False");
    assert_eq!(
        condition.message,
        "spec.vault: invalid type, expected a string; fix the object (it bypassed the CRD schema)"
    );
    assert_eq!(condition.observed_generation, Some(1));
    let condition = h
        .wait_raw_reason::<FerrVaultSecret>("connectionref-string", "InvalidSpec")
        .await;
    assert!(
        condition
            .message
            .starts_with("spec.connectionRef: invalid type, expected struct ConnectionRef"),
        "{}",
        condition.message
    );
    assert!(!condition.message.contains("conn\""), "the value is not quoted");
    let events = h
        .eventually("an InvalidSpec Event for vault-number", || async {
            let events = h.events_for("vault-number", "InvalidSpec").await;
            (!events.is_empty()).then_some(events)
        })
        .await;
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    assert!(
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="InvalidSpec"}"#)
            .is_some_and(|n| n >= 2.0),
        "both invalid objects counted"
    );
    assert!(
        h.secrets().get_opt("vault-number").await.unwrap().is_none(),
        "no target written"
    );

    let raw = h.raw::<FerrVaultSecret>();
    let finalized = raw.get("connectionref-string").await.unwrap();
    assert!(
        finalized
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == SECRET_FINALIZER),
        "the invalid object got the finalizer like any other"
    );
    raw.delete("connectionref-string", &DeleteParams::default())
        .await
        .unwrap();
    h.eventually("the invalid FerrVaultSecret's deletion completes", || async {
        raw.get_opt("connectionref-string")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;

    let fix = json!({ "spec": { "vault": "prod" } });
    raw.patch("vault-number", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .unwrap();
    h.wait_secret_reason("vault-number", "Synced").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_with_a_mistyped_field_should_report_invalid_spec_and_its_secrets_invalid_connection() {
    let h = Harness::start().await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    h.create_raw::<FerrVaultConnection>(
        "broken",
        json!({ "url": 42, "tokenSecretRef": { "name": "conn-token", "key": "token" } }),
    )
    .await;
    let condition = h
        .wait_raw_reason::<FerrVaultConnection>("broken", "InvalidSpec")
        .await;
    assert_eq!(
        condition.message,
        "spec.url: invalid type, expected a string; fix the object (it bypassed the CRD schema)"
    );
    assert_eq!(
        h.metric(r#"ferrvault_connection_ready{namespace="default",name="broken"}"#),
        Some(0.0)
    );
    h.create_secret("app", secret_spec("broken", "prod")).await;
    let cr = h.wait_secret_reason("app", "InvalidConnection").await;
    let message = &ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .message;
    assert_eq!(
        message,
        r#"FerrVaultConnection "broken" has an invalid spec (spec.url: invalid type, expected a string); fix it (it bypassed the CRD schema)"#
    );
    assert_eq!(h.reveals(), 0, "no reveal through an invalid connection");

    let fix = json!({ "spec": { "url": h.fv.url() } });
    h.raw::<FerrVaultConnection>()
        .patch("broken", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .unwrap();
    h.wait_connection_reason("broken", "Reachable").await;
    h.wait_secret_reason("app", "Synced").await;
    h.finish().await;
}
