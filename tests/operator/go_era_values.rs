//! Values the Go CRD admitted and ours now admits too (issue 14) are reported as conditions,
//! as the Go operator reported them at runtime, never refused or left unexplained.

use crate::operator_support::*;
use ferrvault_operator::api::{Transform, TransformType};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_connection_name_should_report_connection_not_found() {
    let h = Harness::start().await;
    h.create_secret("app", secret_spec("", "prod")).await;
    let cr = h.wait_secret_reason("app", "ConnectionNotFound").await;
    let message = &ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .message;
    assert!(message.starts_with(r#"FerrVaultConnection """#), "{message}");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transform_missing_its_fields_should_report_transform_error_or_do_nothing_as_in_go() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.transforms = vec![Transform {
        from: Some("DB_URL".into()),
        ..Transform::of_type(TransformType::Rename)
    }];
    h.create_secret("app", spec).await;
    let cr = h.wait_secret_reason("app", "TransformError").await;
    assert_eq!(
        ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
            .unwrap()
            .message,
        "transforms[0] (rename): rename requires both `from` and `to`"
    );
    // A prefix without a value is a no-op, as in the Go operator.
    let mut spec = secret_spec("conn", "prod");
    spec.transforms = vec![Transform::of_type(TransformType::Prefix)];
    h.create_secret("plain", spec).await;
    h.wait_secret_reason("plain", "Synced").await;
    let written = data_of(&h.secrets().get("plain").await.unwrap());
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        ["API_KEY", "DB_URL"],
        "keys unprefixed"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_a_usable_credential_should_report_token_unreadable() {
    let h = Harness::start().await;
    let mut neither = connection_spec(&h.fv.url(), "unused");
    neither.token_secret_ref = None;
    h.create_connection("neither", neither).await;
    let c = h.wait_connection_reason("neither", "TokenUnreadable").await;
    assert_eq!(
        ready(c.status.as_ref().map(|s| s.conditions.as_slice()))
            .unwrap()
            .message,
        "set either tokenSecretRef or oidc"
    );
    h.create_connection("unnamed", connection_spec(&h.fv.url(), ""))
        .await;
    h.wait_connection_reason("unnamed", "TokenUnreadable").await;
    h.finish().await;
}
