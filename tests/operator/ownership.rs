//! End-to-end, as a tenant would try it: a FerrVaultSecret aimed at a Secret it does not own is
//! refused with its own reason before any FerrVault request, the victim is left byte-for-byte as
//! it was (the whole object, `resourceVersion` included), other FerrVaultSecrets keep syncing,
//! and a refusal is retried when the objects involved change, not on a timer.
//!
//! The attacker reads vault `blobs` through its own connection (token label `blobs-sat`), the
//! bystander vault `prod` (`prod-sat`), so the FerrVault simulator's per-token counters tell
//! whose requests were spent.

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecretSpec, SecretKeyRef, SecretTarget, names::ADOPTABLE_BY_ANNOTATION,
};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use serde_json::json;

/// The attacker's token label in the FerrVault simulator.
const ATTACKER: &str = "blobs-sat";

/// The reveals FerrVault counted for [`ATTACKER`]'s token: what a refused target must not cost
/// (its connection's probe asks `GET /operator/me` with the token, which is not the target's).
fn attacker_reveals(h: &Harness) -> u64 {
    reveals(h, ATTACKER)
}

/// The reveals FerrVault counted for the token labelled `token`.
fn reveals(h: &Harness, token: &str) -> u64 {
    h.fv.token_stats(token)
        .endpoints
        .get("reveal")
        .copied()
        .unwrap_or(0)
}

/// The attacker's connection (`attacker`, token Secret `attacker-token`).
async fn attacker_connection(h: &Harness) {
    h.connection("attacker", "attacker-token", OTHER_TOKEN).await;
}

/// A FerrVaultSecret `spec` of the attacker writing into Secret `target`.
fn aimed_at(target: &str) -> FerrVaultSecretSpec {
    let mut spec = secret_spec("attacker", "blobs");
    spec.target = Some(SecretTarget {
        name: Some(target.into()),
        type_: None,
        ..SecretTarget::default()
    });
    spec
}

/// A Secret `name` someone else owns: its data, then `metadata` merged in.
async fn victim(h: &Harness, name: &str, metadata: serde_json::Value) -> Secret {
    h.put_secret(name, &[("password", "victim-value")]).await;
    h.secrets()
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": metadata })),
        )
        .await
        .expect("victim metadata")
}

/// A bystander that must keep syncing while the attacker is refused.
async fn bystander_syncs(h: &Harness) {
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("bystander", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("bystander", "Synced").await;
    h.wait_target("bystander", |s| data_of(s).contains_key("DB_URL"))
        .await;
}

/// Asserts the refusal the user sees and that nothing was spent or written; returns the message.
async fn refused(h: &Harness, name: &str, reason: &str, victim: &Secret) -> String {
    let cr = h.wait_secret_reason(name, reason).await;
    let condition = ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
        .unwrap()
        .clone();
    assert_eq!(condition.status, "False");
    assert_eq!(
        attacker_reveals(h),
        0,
        "no FerrVault request for a refused target"
    );
    let now = h
        .secrets()
        .get(&victim.metadata.name.clone().unwrap())
        .await
        .unwrap();
    assert_eq!(&now, victim, "the victim Secret byte-for-byte unchanged");
    condition.message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_controlled_by_another_owner_should_never_be_written_even_when_it_opts_in() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    let controlled = victim(
        &h,
        "db",
        json!({
            "ownerReferences": [h.controller_ref_to_new_deployment("db").await],
            // The opt-in never overrides a controller.
            "annotations": { ADOPTABLE_BY_ANNOTATION: "steal" },
        }),
    )
    .await;
    h.create_secret("steal", aimed_at("db")).await;
    bystander_syncs(&h).await;
    let message = refused(&h, "steal", "TargetControlledByOther", &controlled).await;
    assert_eq!(
        message,
        r#"Secret db is controlled by Deployment "db": not written"#
    );
    h.eventually("the refusal counted", || async {
        h.metric(r#"ferrvault_secret_sync_errors_total{reason="TargetControlledByOther"}"#)
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connections_token_or_ca_secret_should_never_be_written() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    bystander_syncs(&h).await;
    // The bystander's connection also trusts a CA bundle from a Secret, and another connection
    // names a token Secret that does not exist yet.
    let ca = victim(
        &h,
        "conn-ca",
        json!({ "annotations": { ADOPTABLE_BY_ANNOTATION: "steal-ca" } }),
    )
    .await;
    let patch = json!({"spec": {"caBundleSecretRef": {"name": "conn-ca", "key": "ca.crt"}}});
    h.fvc()
        .patch("conn", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.create_connection("later", connection_spec(&h.fv.url(), "later-token"))
        .await;
    let token = h.secrets().get("conn-token").await.unwrap();

    h.create_secret("steal-token", aimed_at("conn-token")).await;
    h.create_secret("steal-ca", aimed_at("conn-ca")).await;
    h.create_secret("plant-token", aimed_at("later-token")).await;
    let message = refused(&h, "steal-token", "TargetIsConnectionSecret", &token).await;
    assert_eq!(
        message,
        r#"Secret conn-token is the token Secret of FerrVaultConnection "conn": a FerrVaultSecret never writes a connection's credentials"#
    );
    let message = refused(&h, "steal-ca", "TargetIsConnectionSecret", &ca).await;
    assert!(message.contains("the CA bundle Secret of"), "{message}");
    h.wait_secret_reason("plant-token", "TargetIsConnectionSecret")
        .await;
    assert!(
        h.secrets().get_opt("later-token").await.unwrap().is_none(),
        "a connection's missing token Secret is not planted either"
    );
    assert_eq!(attacker_reveals(&h), 0);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_existing_secret_should_be_taken_over_only_when_it_names_the_ferrvault_secret() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    let unowned = victim(&h, "shared", json!({ "labels": { "team": "shop" } })).await;
    h.create_secret("app", aimed_at("shared")).await;
    let message = refused(&h, "app", "TargetNotOwned", &unowned).await;
    assert_eq!(
        message,
        "Secret shared exists and is not controlled by this FerrVaultSecret: not written; to hand it over, \
         annotate the Secret with ferrvault.com/adoptable-by=app"
    );

    // An opt-in for another FerrVaultSecret does not count.
    let reconciles = h.secret_reconciles();
    let for_another = h
        .secrets()
        .patch(
            "shared",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": { ADOPTABLE_BY_ANNOTATION: "other" }}})),
        )
        .await
        .unwrap();
    h.eventually("the annotation change looked at", || async {
        (h.secret_reconciles() > reconciles).then_some(())
    })
    .await;
    refused(&h, "app", "TargetNotOwned", &for_another).await;

    // The Secret's owner hands it to `app`: it is taken over at once.
    h.secrets()
        .patch(
            "shared",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": { ADOPTABLE_BY_ANNOTATION: "app" }}})),
        )
        .await
        .unwrap();
    let cr = h.wait_secret_reason("app", "Synced").await;
    let adopted = h.secrets().get("shared").await.unwrap();
    assert!(
        controlled_by(&adopted, &cr),
        "controlled by the FerrVaultSecret now"
    );
    assert_eq!(
        data_of(&adopted).keys().collect::<Vec<_>>(),
        vec!["CERT", "CONFIG"],
        "content replaced"
    );
    assert_eq!(adopted.metadata.labels, unowned.metadata.labels, "labels kept");
    assert!(attacker_reveals(&h) >= 1);
    h.finish().await;
}

/// Requests the operator made for Secret `name` (reads and writes) so far.
fn target_requests(h: &Harness, name: &str) -> usize {
    h.kube
        .audit()
        .iter()
        .filter(|e| e.resource == "secrets" && e.name == name)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_target_should_be_retried_when_its_owner_lets_go_not_on_a_timer() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    let controlled = victim(
        &h,
        "db",
        json!({"ownerReferences": [h.controller_ref_to_new_deployment("db").await]}),
    )
    .await;
    let mut spec = aimed_at("db");
    spec.refresh_interval = "1s".into(); // a timer, if there were one, would fire every second
    h.create_secret("app", spec).await;
    refused(&h, "app", "TargetControlledByOther", &controlled).await;

    // Nothing changes while a bystander refreshes three times: no pass, no request.
    let (before, reconciles) = (target_requests(&h, "db"), h.secret_reconciles());
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut ticking = secret_spec("conn", "prod");
    ticking.refresh_interval = "1s".into();
    h.create_secret("bystander", ticking).await;
    // The simulator counts a reveal while its pass runs, the metric once the pass ends: wait for
    // both, so the clock has run three finished bystander passes.
    h.eventually("three bystander refreshes, each pass finished", || async {
        (reveals(&h, "prod-sat") >= 3 && h.secret_reconciles() >= reconciles + 3.0).then_some(())
    })
    .await;
    assert_eq!(
        target_requests(&h, "db"),
        before,
        "the refused target was not looked at again"
    );
    assert_eq!(attacker_reveals(&h), 0);

    // The owner lets go and hands the Secret over: synced at once.
    let handover = json!({"metadata": {
        "ownerReferences": null,
        "annotations": { ADOPTABLE_BY_ANNOTATION: "app" },
    }});
    h.secrets()
        .patch("db", &PatchParams::default(), &Patch::Merge(&handover))
        .await
        .unwrap();
    h.wait_secret_reason("app", "Synced").await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_refused_for_a_connection_should_sync_once_the_connection_lets_go() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    // `conn` reads its token from `shared-token`, which the FerrVaultSecret created earlier.
    h.put_secret("own-token", &[("token", PROD_TOKEN)]).await;
    h.create_connection("conn", connection_spec(&h.fv.url(), "own-token"))
        .await;
    h.create_secret("app", aimed_at("shared-token")).await;
    h.wait_secret_reason("app", "Synced").await;
    let patch = json!({"spec": {"tokenSecretRef": {"name": "shared-token", "key": "CONFIG"}}});
    h.fvc()
        .patch("conn", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.wait_secret_reason("app", "TargetIsConnectionSecret").await;
    let frozen = h.secrets().get("shared-token").await.unwrap();
    let spent = attacker_reveals(&h);

    // The connection goes back to its own token Secret: the FerrVaultSecret syncs again.
    let back = SecretKeyRef {
        name: "own-token".into(),
        key: "token".into(),
    };
    let patch = json!({"spec": {"tokenSecretRef": back}});
    h.fvc()
        .patch("conn", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    h.wait_secret_reason("app", "Synced").await;
    assert!(attacker_reveals(&h) > spent, "revealed again");
    assert_eq!(
        data_of(&h.secrets().get("shared-token").await.unwrap()),
        data_of(&frozen),
        "same content, owned again"
    );
    h.finish().await;
}

/// A first sync trusts the listed Secret store's silence and creates its target without reading
/// it. A Secret created since the store last heard makes that create fail (409), and the retry
/// reads it and refuses it like any other: never an overwrite. That first attempt may reveal
/// with the attacker's own token; nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_the_store_has_not_seen_yet_should_be_refused_and_left_as_it_was() {
    let h = Harness::start().await;
    attacker_connection(&h).await;
    bystander_syncs(&h).await;
    // From now on the Secret watch hears nothing new: the store never sees the victim.
    h.kube.faults().hang(Some("watch"), Some("secrets"));
    h.kube.faults().drop_watches();
    let unseen = victim(&h, "unseen", json!({ "labels": { "team": "shop" } })).await;
    h.create_secret("app", aimed_at("unseen")).await;
    h.wait_secret_reason("app", "TargetNotOwned").await;
    assert_eq!(
        h.secrets().get("unseen").await.unwrap(),
        unseen,
        "the victim is left byte-for-byte as it was"
    );
    h.kube.faults().unhang();
    h.finish().await;
}
