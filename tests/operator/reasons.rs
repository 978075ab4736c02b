//! End-to-end: every Ready=False reason of a FerrVaultSecret, each reached the way a user
//! reaches it, with the target left as it was, a SyncFailed Event and the error counted.

use crate::operator_support::*;
use ferrvault_operator::api::{SecretSelector, SecretTarget, Transform, TransformType};
use ferrvault_sim::ferrvault::{Endpoint, FaultSpec};
use kube::api::{Patch, PatchParams};
use serde_json::json;

fn names(keys: &[&str]) -> Option<SecretSelector> {
    Some(SecretSelector {
        names: keys.iter().map(|k| (*k).to_owned()).collect(),
    })
}

/// Creates `app` from `spec`, waits for `reason`, and checks the Event and the error counter.
async fn expect_reason(
    h: &Harness,
    spec: ferrvault_operator::api::FerrVaultSecretSpec,
    reason: &str,
) -> String {
    h.create_secret("app", spec).await;
    let cr = h.wait_secret_reason("app", reason).await;
    let condition = ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .clone();
    assert_eq!(condition.status, "False");
    h.eventually(&format!("a SyncFailed event for {reason}"), || async {
        let events = h.events_for("app", "SyncFailed").await;
        events
            .iter()
            .any(|e| e.note.as_deref().is_some_and(|n| n.starts_with(reason)))
            .then_some(())
    })
    .await;
    let counted = h.metric(&format!(
        r#"ferrvault_secret_sync_errors_total{{reason="{reason}"}}"#
    ));
    assert!(counted.is_some_and(|n| n >= 1.0), "{reason} counted");
    condition.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_connection_should_report_connection_not_found() {
    let h = Harness::start().await;
    let message = expect_reason(&h, secret_spec("nope", "prod"), "ConnectionNotFound").await;
    assert!(message.starts_with(r#"FerrVaultConnection "nope""#), "{message}");
    assert!(
        h.secrets().get_opt("app").await.unwrap().is_none(),
        "no target written"
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_or_blank_token_should_report_token_unreadable() {
    let h = Harness::start().await;
    h.create_connection("conn", connection_spec(&h.fv.url(), "absent-token"))
        .await;
    expect_reason(&h, secret_spec("conn", "prod"), "TokenUnreadable").await;
    // A blank value is as unreadable as a missing Secret (and then the rotation resyncs).
    h.put_secret("absent-token", &[("token", "  \n")]).await;
    h.eventually("blank token reported", || async {
        let cr = h.fvs().get("app").await.ok()?;
        let message = ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))?
            .message
            .clone();
        message.contains("empty value").then_some(())
    })
    .await;
    assert_eq!(h.reveals(), 0, "no reveal without a token");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_url_or_token_should_report_invalid_connection() {
    let h = Harness::start().await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    // Admitted by the CRD's `^https?://` pattern, refused by the client (a query string).
    h.create_connection(
        "conn",
        connection_spec("https://files.example/?page=1", "conn-token"),
    )
    .await;
    expect_reason(&h, secret_spec("conn", "prod"), "InvalidConnection").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloud_mode_without_project_should_report_missing_cloud_scope_without_calling_ferrvault() {
    let h = Harness::start().await;
    h.put_secret("org-token", &[("token", ORG_TOKEN)]).await;
    let mut spec = connection_spec(&h.fv.url(), "org-token");
    spec.mode = ferrvault_operator::api::ConnectionMode::Cloud;
    spec.organization = Some("acme".into());
    h.create_connection("conn", spec).await;
    let message = expect_reason(&h, secret_spec("conn", "prod"), "MissingCloudScope").await;
    assert!(message.starts_with("mode cloud needs organization"), "{message}");
    assert_eq!(h.reveals(), 0, "no API call");
    // With the project the same object syncs through the cloud endpoint.
    let patch = json!({"spec": {"project": "shop"}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.wait_secret_reason("app", "Synced").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_token_should_report_auth_failed() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", "fvsat_LEAKCHECK_unknown")
        .await;
    expect_reason(&h, secret_spec("conn", "prod"), "AuthFailed").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_vault_should_report_vault_not_found() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    expect_reason(&h, secret_spec("conn", "nope"), "VaultNotFound").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_server_should_report_unreachable_and_keep_the_last_good_target() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let good = h.secrets().get("app").await.unwrap();
    h.fv.faults().set(
        Endpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    let cr = h.wait_secret_reason("app", "Unreachable").await;
    assert!(
        cr.status.unwrap().last_synced_at.is_some(),
        "last good sync kept in status"
    );
    assert_eq!(data_of(&h.secrets().get("app").await.unwrap()), data_of(&good));
    h.fv.faults().clear(Endpoint::Reveal);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_transform_should_report_transform_error_and_write_nothing() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.transforms = vec![Transform {
        type_: TransformType::Rename,
        value: None,
        from: Some("DB_URL".into()),
        to: Some("API_KEY".into()),
        key: None,
        keys: vec![],
    }];
    let message = expect_reason(&h, spec, "TransformError").await;
    assert_eq!(
        message,
        r#"transforms[0] (rename): destination key "API_KEY" already exists"#
    );
    assert!(h.secrets().get_opt("app").await.unwrap().is_none());
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connections_token_secret_as_target_should_be_refused_and_keep_the_token() {
    // The Go operator wrote the token Secret (unowned) when the vault had the token key, and
    // refused with TokenKeyMissing otherwise; now a connection's Secret is never a target.
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let token_before = h.secrets().get("conn-token").await.unwrap();
    let mut spec = secret_spec("conn", "prod");
    spec.target = Some(SecretTarget {
        name: Some("conn-token".into()),
        type_: None,
        ..SecretTarget::default()
    });
    let message = expect_reason(&h, spec, "TargetIsConnectionSecret").await;
    assert_eq!(
        message,
        r#"Secret conn-token is the token Secret of FerrVaultConnection "conn": a FerrVaultSecret never writes a connection's credentials"#
    );
    assert_eq!(h.secrets().get("conn-token").await.unwrap(), token_before);
    assert_eq!(h.reveals(), 0, "refused before any reveal");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_secret_should_stay_refused_even_when_the_vault_holds_the_token_key() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN), ("ca.crt", "keep-me")])
        .await;
    let token_before = h.secrets().get("conn-token").await.unwrap();
    // The vault holds the connection's (rotated) token itself: still not a reason to write it.
    h.fv.put_secret("prod", "token", PROD_TOKEN);
    let mut spec = secret_spec("conn", "prod");
    spec.target = Some(SecretTarget {
        name: Some("conn-token".into()),
        type_: None,
        ..SecretTarget::default()
    });
    expect_reason(&h, spec, "TargetIsConnectionSecret").await;
    assert_eq!(
        h.secrets().get("conn-token").await.unwrap(),
        token_before,
        "the token Secret byte-for-byte as it was"
    );
    assert_eq!(h.reveals(), 0);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_keys_should_leave_an_existing_target_untouched() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.selector = names(&["DB_URL"]);
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;
    let before = h.secrets().get("app").await.unwrap();

    let patch = json!({"spec": {"selector": {"names": ["DB_URL", "NOPE"]}}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let cr = h.wait_secret_reason("app", "MissingKeys").await;
    let status = cr.status.unwrap();
    assert_eq!(status.missing_keys, vec!["NOPE"]);
    assert_eq!(status.observed_generation, cr.metadata.generation);
    assert_eq!(
        ready(Some(&status.conditions)).unwrap().message,
        "missing in FerrVault: [NOPE]: app left unchanged"
    );
    let after = h.secrets().get("app").await.unwrap();
    assert_eq!(after.metadata.resource_version, before.metadata.resource_version);
    assert!(
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="MissingKeys"}"#)
            .is_some_and(|n| n >= 1.0)
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_keys_should_still_create_a_new_target_with_what_was_found() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.selector = names(&["DB_URL", "NOPE"]);
    h.create_secret("app", spec).await;
    let cr = h.wait_secret_reason("app", "MissingKeys").await;
    assert_eq!(
        ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
            .unwrap()
            .message,
        "missing in FerrVault: [NOPE]"
    );
    let target = h.secrets().get("app").await.unwrap();
    assert_eq!(data_of(&target).keys().collect::<Vec<_>>(), vec!["DB_URL"]);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_target_should_report_secret_read_failed() {
    let h = Harness::start().await;
    h.create_connection("conn", h.oidc_connection_spec()).await;
    h.kube.faults().fail(Some("get"), Some("secrets"), 1.0, 500);
    let mut spec = secret_spec("conn", "prod");
    spec.project = Some("shop".into());
    expect_reason(&h, spec, "SecretReadFailed").await;
    h.kube.faults().clear();
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_controlled_by_another_controller_should_report_target_controlled_by_other() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.put_secret("app", &[("MINE", "x")]).await;
    let owned = json!({"metadata": {"ownerReferences": [h.controller_ref_to_new_deployment("other").await]}});
    h.secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&owned))
        .await
        .unwrap();
    let message = expect_reason(&h, secret_spec("conn", "prod"), "TargetControlledByOther").await;
    assert_eq!(
        message,
        r#"Secret app is controlled by Deployment "other": not written"#
    );
    assert_eq!(h.reveals(), 0, "refused before any reveal");
    assert_eq!(
        data_of(&h.secrets().get("app").await.unwrap())
            .keys()
            .collect::<Vec<_>>(),
        vec!["MINE"]
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_over_one_mebibyte_should_report_secret_too_large_and_not_be_written() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.fv.put_secret("prod", "HUGE", &"x".repeat(1024 * 1024 + 1));
    let message = expect_reason(&h, secret_spec("conn", "prod"), "SecretTooLarge").await;
    assert!(
        message.contains("over the 1048576-byte limit of a Secret")
            && message.ends_with("app left unchanged"),
        "{message}"
    );
    assert!(h.secrets().get_opt("app").await.unwrap().is_none());
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_refresh_interval_should_be_reported_not_replaced_by_the_default() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1x".into();
    expect_reason(&h, spec, "InvalidRefreshInterval").await;
    assert_eq!(h.reveals(), 0);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limited_reveal_should_write_no_status_and_back_off() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    let synced = h.wait_secret_reason("app", "Synced").await;
    h.fv.set_rate_limit("prod-sat", 0.001, 1);
    // Spend the one token left, so the next reveal is throttled.
    let drain = reqwest::Client::new()
        .post(format!("{}/operator/secrets/reveal", h.fv.url()))
        .bearer_auth(PROD_TOKEN)
        .json(&json!({"vault": "prod"}))
        .send()
        .await
        .expect("drain request");
    assert!(drain.status().is_success() || drain.status().as_u16() == 429);
    let patch = json!({"spec": {"selector": {"names": ["DB_URL"]}}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.eventually("a RateLimited sync error", || async {
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="RateLimited"}"#)
            .filter(|n| *n >= 1.0)
    })
    .await;
    assert!(h.fv.stats().total.rate_limited >= 1, "the server answered 429");
    let status = h.fvs().get("app").await.unwrap().status.unwrap();
    let before = synced.status.unwrap();
    assert_eq!(status, before, "a 429 wrote no status");
    h.finish().await;
}
