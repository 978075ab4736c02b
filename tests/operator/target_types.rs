//! End-to-end: target types Kubernetes turns into credentials are refused by the reconciler too
//! (for objects that bypassed the CRD's CEL rule, see `tests/crds/cel.rs` for admission), a
//! Secret Kubernetes already acts on is never written, and a changed `spec.target.type` replaces
//! the owned target (a Secret's type is immutable) instead of being ignored.

use crate::operator_support::*;
use ferrvault_operator::api::{
    FerrVaultSecret, REFUSED_TARGET_TYPES, SecretTarget, names::ADOPTABLE_BY_ANNOTATION,
};
use k8s_openapi::{ByteString, api::core::v1::Secret};
use kube::{
    ResourceExt,
    api::{ObjectMeta, Patch, PatchParams, PostParams},
};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_target_type_stored_without_validation_should_be_refused_by_the_reconciler() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    for (name, type_) in ["sa-token", "bootstrap"].into_iter().zip(REFUSED_TARGET_TYPES) {
        // As if written straight into etcd, or under a CRD version without the rule.
        h.create_raw::<FerrVaultSecret>(
            name,
            json!({"connectionRef": {"name": "conn"}, "vault": "prod", "target": {"type": type_}}),
        )
        .await;
        let condition = h
            .wait_raw_reason::<FerrVaultSecret>(name, "TargetTypeRefused")
            .await;
        assert_eq!(
            condition.message,
            format!(
                "target type {type_} is refused: Kubernetes turns Secrets of this type into cluster \
                 credentials; {name} not written"
            )
        );
        assert!(
            h.secrets().get_opt(name).await.unwrap().is_none(),
            "{type_} not created"
        );
    }
    assert_eq!(h.reveals(), 0, "refused before any reveal");
    h.finish().await;
}

/// Creates Secret `name` of `type_` with `annotations`, handed over to FerrVaultSecret `name`.
async fn existing(h: &Harness, name: &str, type_: &str, annotations: &[(&str, &str)]) -> Secret {
    let mut all: std::collections::BTreeMap<String, String> = annotations
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    all.insert(ADOPTABLE_BY_ANNOTATION.into(), name.into());
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: Some(all),
            ..ObjectMeta::default()
        },
        type_: Some(type_.into()),
        data: Some([("token".to_owned(), ByteString(b"minted".to_vec()))].into()),
        ..Secret::default()
    };
    h.secrets()
        .create(&PostParams::default(), &secret)
        .await
        .expect("create Secret")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_kubernetes_acts_on_should_never_be_written_even_when_handed_over() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    let account = ("kubernetes.io/service-account.name", "default");
    let minted = existing(&h, "sa-token", "kubernetes.io/service-account-token", &[account]).await;
    let marked = existing(&h, "marked", "Opaque", &[account]).await;
    for (victim, marker) in [
        (&minted, "kubernetes.io/service-account-token"),
        (&marked, "kubernetes.io/service-account.name"),
    ] {
        let name = victim.name_any();
        h.create_secret(&name, secret_spec("conn", "prod")).await;
        let cr = h.wait_secret_reason(&name, "TargetTypeRefused").await;
        assert_eq!(
            ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))
                .unwrap()
                .message,
            format!(
                "Secret {name} carries {marker}, which Kubernetes acts on (ServiceAccount or bootstrap tokens): \
                 never written"
            )
        );
        assert_eq!(&h.secrets().get(&name).await.unwrap(), victim, "unchanged");
    }
    assert_eq!(h.reveals(), 0);
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_target_type_should_replace_the_owned_target() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", PROD_TOKEN).await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    let cr = h.wait_secret_reason("app", "Synced").await;
    let labelled = json!({"metadata": {"labels": {"team": "shop"}}});
    let before = h
        .secrets()
        .patch("app", &PatchParams::default(), &Patch::Merge(&labelled))
        .await
        .unwrap();
    assert_eq!(before.type_.as_deref(), Some("Opaque"));
    h.kube.clear_audit();

    let target = SecretTarget {
        name: None,
        type_: Some("example.com/app-config".into()),
        ..SecretTarget::default()
    };
    let patch = json!({"spec": {"target": target}});
    h.fvs()
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let after = h
        .wait_target_for("of the new type", "app", |s| {
            s.type_.as_deref() == Some("example.com/app-config")
        })
        .await;
    assert_ne!(
        after.uid(),
        before.uid(),
        "a new Secret: a type cannot be updated"
    );
    assert_eq!(data_of(&after), data_of(&before), "the same content");
    assert_eq!(after.labels(), before.labels(), "other metadata carried over");
    assert!(controlled_by(&after, &cr));
    h.eventually("Synced for the new generation", || async {
        let cr = h.fvs().get("app").await.ok()?;
        let status = cr.status?;
        (status.observed_generation == cr.metadata.generation
            && ready(Some(&status.conditions))?.reason == "Synced")
            .then_some(())
    })
    .await;
    // Deleted (only the version read) and created again; never an update of the type. (A create
    // is audited without a name: it posts to the collection; no other Secret is created here.)
    let writes: Vec<String> = h
        .kube
        .audit()
        .into_iter()
        .filter(|e| e.resource == "secrets" && (e.name == "app" || e.verb == "create") && e.verb != "get")
        .map(|e| format!("{} {}", e.verb, e.code))
        .collect();
    assert_eq!(writes[..2], ["delete 200", "create 201"], "{writes:?}");
    assert!(!writes.iter().any(|w| w.starts_with("update")), "{writes:?}");
    h.finish().await;
}
