//! End-to-end: custom resources stored past the CRD schema's size bounds (issue 34), written
//! straight into storage as objects from before the bounds existed. Each is reported
//! `InvalidSpec` naming the field and the bound (never the value), nothing is revealed for it,
//! a FerrVaultSecret using such a connection is `InvalidConnection`, and an edit back within
//! the bounds brings both back.

use crate::operator_support::*;
use ferrvault_operator::api::{FerrVaultConnection, bounds::MAX_URL};
use kube::api::{Patch, PatchParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_a_bound_should_be_invalid_spec_and_its_secrets_invalid_connection() {
    let h = Harness::start().await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    let long_url = format!("{}/{}", h.fv.url(), "a".repeat(MAX_URL));
    h.create_raw::<FerrVaultConnection>(
        "long",
        json!({ "url": long_url, "tokenSecretRef": { "name": "conn-token", "key": "token" } }),
    )
    .await;
    let condition = h
        .wait_raw_reason::<FerrVaultConnection>("long", "InvalidSpec")
        .await;
    let problem = "spec.url: longer than 2048 characters (the CRD's maxLength)";
    assert_eq!(
        condition.message,
        format!("{problem}; fix the object (it bypassed the CRD schema)")
    );
    h.create_secret("app", secret_spec("long", "prod")).await;
    let cr = h.wait_secret_reason("app", "InvalidConnection").await;
    let message = &ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .message;
    assert_eq!(
        message,
        &format!(
            r#"FerrVaultConnection "long" has an invalid spec ({problem}); fix it (it bypassed the CRD schema)"#
        )
    );
    assert_eq!(h.reveals(), 0, "no reveal through a connection over its bounds");

    let fix = json!({ "spec": { "url": h.fv.url() } });
    h.raw::<FerrVaultConnection>()
        .patch("long", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .unwrap();
    h.wait_connection_reason("long", "Reachable").await;
    h.wait_secret_reason("app", "Synced").await;
    h.finish().await;
}
