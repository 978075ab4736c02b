//! Fields a real server refuses to change, through kube-rs and kubectl: a Secret's `type`,
//! and the content and flag of `immutable: true` Secrets and ConfigMaps (their metadata stays
//! editable, deleting them stays possible).

use crate::{
    kube_sim_support::{refusal, sim},
    kubectl_support::Kubectl,
};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use serde_json::json;

fn causes(status: &kube::core::Status) -> Vec<(String, String, String)> {
    status.details.as_ref().map_or_else(Vec::new, |d| {
        d.causes
            .iter()
            .map(|c| (c.reason.clone(), c.field.clone(), c.message.clone()))
            .collect()
    })
}

#[tokio::test]
async fn a_secret_type_should_be_immutable() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let tls: Secret = serde_json::from_value(
        json!({ "metadata": { "name": "cert" }, "type": "kubernetes.io/tls",
        "stringData": { "tls.crt": "c", "tls.key": "k" } }),
    )
    .expect("secret");
    let created = secrets
        .create(&PostParams::default(), &tls)
        .await
        .expect("create");
    let mut opaque = created.clone();
    opaque.type_ = Some("Opaque".into());
    let status = refusal(secrets.replace("cert", &PostParams::default(), &opaque).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        r#"Secret "cert" is invalid: type: Invalid value: "Opaque": field is immutable"#
    );
    assert_eq!(
        causes(&status),
        [(
            "FieldValueInvalid".into(),
            "type".into(),
            r#"Invalid value: "Opaque": field is immutable"#.into()
        )]
    );
    let mut untyped = created.clone();
    untyped.type_ = None;
    let status = refusal(secrets.replace("cert", &PostParams::default(), &untyped).await);
    assert_eq!(
        causes(&status)[0].1,
        "type",
        "a Secret sent without type is Opaque, which is a change"
    );
    secrets
        .patch(
            "cert",
            &PatchParams::default(),
            &Patch::Merge(
                json!({ "metadata": { "labels": { "a": "b" } }, "stringData": { "tls.key": "k2" } }),
            ),
        )
        .await
        .expect("content and metadata of a mutable Secret change freely");
}

#[tokio::test]
async fn an_immutable_secret_should_keep_its_content_and_flag() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let locked: Secret = serde_json::from_value(
        json!({ "metadata": { "name": "locked" }, "immutable": true, "stringData": { "k": "v" } }),
    )
    .expect("secret");
    secrets
        .create(&PostParams::default(), &locked)
        .await
        .expect("create");
    let pp = PatchParams::default();
    let status = refusal(
        secrets
            .patch(
                "locked",
                &pp,
                &Patch::Merge(json!({ "immutable": false, "stringData": { "k": "w" } })),
            )
            .await,
    );
    let locked_message = "Forbidden: field is immutable when `immutable` is set";
    assert_eq!(
        causes(&status),
        [
            (
                "FieldValueForbidden".into(),
                "immutable".into(),
                locked_message.into()
            ),
            ("FieldValueForbidden".into(), "data".into(), locked_message.into()),
        ]
    );
    assert_eq!(
        status.message,
        "Secret \"locked\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
    );
    secrets
        .patch(
            "locked",
            &pp,
            &Patch::Merge(json!({ "metadata": { "labels": { "a": "b" } } })),
        )
        .await
        .expect("metadata stays editable");
    secrets
        .delete("locked", &DeleteParams::default())
        .await
        .expect("deleting is the way out");
}

#[tokio::test]
async fn kubectl_should_show_why_an_immutable_config_map_refuses_an_edit() {
    let sim = sim().await;
    let kubectl = Kubectl::new(&sim);
    kubectl
        .ok(&["create", "configmap", "settings", "--from-literal=level=1"])
        .await;
    kubectl
        .ok(&["patch", "configmap", "settings", "-p", r#"{"immutable":true}"#])
        .await;
    let stderr = kubectl
        .fails(&[
            "patch",
            "configmap",
            "settings",
            "-p",
            r#"{"data":{"level":"2"}}"#,
        ])
        .await;
    assert!(
        stderr.contains(
            r#"The ConfigMap "settings" is invalid: data: Forbidden: field is immutable when `immutable` is set"#
        ),
        "{stderr}"
    );
    let level = kubectl
        .ok(&["get", "configmap", "settings", "-o", "jsonpath={.data.level}"])
        .await;
    assert_eq!(level, "1");
}
