//! End-to-end: the operator's Secret `delete` has one use (issue 34 point 8, `docs/security.md`
//! RBAC): replacing a target it controls whose type changes. A whole lifecycle of a
//! FerrVaultSecret (its target created, updated, given a new type, and the FerrVaultSecret
//! deleted) sends exactly that one `DELETE` of a Secret, as the Kubernetes simulator audits it;
//! the target of a deleted FerrVaultSecret goes through the garbage collector.

use crate::operator_support::*;
use ferrvault_operator::api::SecretTarget;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_lifecycle_should_delete_a_secret_only_to_change_its_type() {
    let h = Harness::start().await;
    h.kube.clear_audit();
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let mut spec = secret_spec("conn", "prod");
    spec.refresh_interval = "1s".into();
    h.create_secret("app", spec).await;
    h.wait_secret_reason("app", "Synced").await;

    // Updated: new content upstream.
    let rotated = "postgres://app:LEAKCHECK-db-pass@db2:5432/shop";
    h.fv.put_secret("prod", "DB_URL", rotated);
    h.wait_target_for("the new content", "app", |s| {
        data_of(s).get("DB_URL").map(Vec::as_slice) == Some(rotated.as_bytes())
    })
    .await;

    // A new type: replaced (deleted, created again).
    let target = SecretTarget {
        name: None,
        type_: Some("example.com/app-config".into()),
        ..SecretTarget::default()
    };
    h.fvs()
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"target": target}})),
        )
        .await
        .unwrap();
    h.wait_target_for("of the new type", "app", |s| {
        s.type_.as_deref() == Some("example.com/app-config")
    })
    .await;

    // Deleted: the FerrVaultSecret goes, and its target with it, by the garbage collector.
    h.fvs().delete("app", &DeleteParams::default()).await.unwrap();
    h.eventually("the FerrVaultSecret and its target gone", || async {
        let gone = h.fvs().get_opt("app").await.ok()?.is_none();
        (gone && h.secrets().get_opt("app").await.ok()?.is_none()).then_some(())
    })
    .await;

    let deletes: Vec<String> = h
        .kube
        .audit()
        .into_iter()
        .filter(|e| e.resource == "secrets" && matches!(e.verb.as_str(), "delete" | "deletecollection"))
        .map(|e| format!("{} {} {}", e.verb, e.name, e.code))
        .collect();
    assert_eq!(
        deletes,
        ["delete app 200"],
        "one DELETE of a Secret: the retyped target's replacement"
    );
    h.finish().await;
}
