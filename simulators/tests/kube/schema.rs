//! Custom resources against their CRD schema through kube-rs and raw HTTP: the real 422
//! shapes for value errors and CEL rules, pruning of unknown fields under each
//! `fieldValidation`, defaults on write and on read, ratcheting of unchanged invalid values,
//! transition rules and list-map keys.

use crate::kube_sim_support::{gadget, install_gadget_crd, refusal, sim};
use kube::{
    Api,
    api::{DynamicObject, Patch, PatchParams, PostParams},
    core::Status,
};
use serde_json::{Value, json};

fn causes(status: &Status) -> Vec<(String, String, String)> {
    status
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| (c.reason.clone(), c.field.clone(), c.message.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn cause(reason: &str, field: &str, message: &str) -> (String, String, String) {
    (reason.into(), field.into(), message.into())
}

async fn create(api: &Api<DynamicObject>, name: &str, spec: Value) -> Result<DynamicObject, kube::Error> {
    api.create(&PostParams::default(), &gadget(name, spec)).await
}

#[tokio::test]
async fn value_errors_should_be_refused_with_the_real_status_and_rules_left_unchecked() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    let status = refusal(create(&api, "bad", json!({ "url": 42, "mode": "cloud", "replicas": 11 })).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let details = status.details.clone().expect("details");
    assert_eq!(
        (
            details.group.as_str(),
            details.kind.as_str(),
            details.name.as_str()
        ),
        ("sim.ferrvault.dev", "Gadget", "bad")
    );
    assert_eq!(
        causes(&status),
        [
            cause(
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ),
            cause(
                "FieldValueTypeInvalid",
                "spec.url",
                r#"Invalid value: "integer": spec.url in body must be of type string: "integer""#
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                r#"Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#
            ),
        ]
    );
    assert_eq!(
        status.message,
        r#"Gadget.sim.ferrvault.dev "bad" is invalid: [spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10, spec.url: Invalid value: "integer": spec.url in body must be of type string: "integer", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#
    );
    let status = refusal(create(&api, "missing", json!({ "mode": "other" })).await);
    assert_eq!(
        causes(&status)[..2],
        [
            cause(
                "FieldValueNotSupported",
                "spec.mode",
                r#"Unsupported value: "other": supported values: "ferrvault", "cloud""#
            ),
            cause("FieldValueRequired", "spec.url", "Required value"),
        ]
    );
    assert!(
        api.get_opt("bad").await.expect("get_opt").is_none(),
        "nothing stored"
    );
}

#[tokio::test]
async fn cel_rules_should_be_evaluated_on_the_server() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    let status = refusal(create(&api, "cloudy", json!({ "url": "https://x", "mode": "cloud" })).await);
    assert_eq!(
        status.message,
        r#"Gadget.sim.ferrvault.dev "cloudy" is invalid: spec: Invalid value: "object": organization is required when mode is cloud"#
    );
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec",
            r#"Invalid value: "object": organization is required when mode is cloud"#
        )]
    );
    create(
        &api,
        "cloudy",
        json!({ "url": "https://x", "mode": "cloud", "organization": "acme", "name": "first" }),
    )
    .await
    .expect("valid in cloud mode");
    let status = refusal(
        api.patch(
            "cloudy",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "name": "second" } })),
        )
        .await,
    );
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.name",
            r#"Invalid value: "string": name is immutable"#
        )]
    );
}

#[tokio::test]
async fn unknown_fields_and_non_nullable_nulls_should_be_pruned_and_defaults_applied() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    let created = create(
        &api,
        "pruned",
        json!({
            "url": "https://x", "bogus": 1, "replicas": null, "organization": null,
            "extra": { "free": { "form": true } }
        }),
    )
    .await
    .expect("unknown fields are dropped, not refused, by default");
    let expected = json!({
        "url": "https://x", "mode": "ferrvault", "organization": null,
        "extra": { "free": { "form": true } }
    });
    assert_eq!(created.data["spec"], expected);
    assert_eq!(api.get("pruned").await.expect("get").data["spec"], expected);
}

/// POSTs a Gadget with an unknown field under `fieldValidation` (None: absent).
async fn post_with_unknown_field(url: &str, field_validation: Option<&str>) -> reqwest::Response {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let query = field_validation.map_or_else(String::new, |v| format!("?fieldValidation={v}"));
    let name = format!("g-{}", field_validation.unwrap_or("default").to_lowercase());
    reqwest::Client::new()
        .post(format!(
            "{url}/apis/sim.ferrvault.dev/v1/namespaces/default/gadgets{query}"
        ))
        .json(&json!({
            "apiVersion": "sim.ferrvault.dev/v1", "kind": "Gadget",
            "metadata": { "name": name },
            "spec": { "url": "https://x", "bogus": 1 }
        }))
        .send()
        .await
        .expect("request")
}

fn warnings(r: &reqwest::Response) -> Vec<String> {
    r.headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii").to_owned())
        .collect()
}

#[tokio::test]
async fn field_validation_should_decide_what_unknown_fields_do() {
    let sim = sim().await;
    install_gadget_crd(&sim.client()).await;
    let warned = post_with_unknown_field(&sim.url(), None).await;
    assert_eq!(warned.status(), 201);
    assert_eq!(warnings(&warned), [r#"299 - "unknown field \"spec.bogus\"""#]);
    let ignored = post_with_unknown_field(&sim.url(), Some("Ignore")).await;
    assert_eq!(ignored.status(), 201);
    assert!(warnings(&ignored).is_empty());
    let strict = post_with_unknown_field(&sim.url(), Some("Strict")).await;
    assert_eq!(strict.status(), 400);
    let body: Value = strict.json().await.expect("a Status");
    assert_eq!(body["reason"], "BadRequest");
    assert_eq!(
        body["message"],
        r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.bogus""#
    );
}

#[tokio::test]
async fn objects_stored_before_a_default_existed_should_be_read_with_it() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    sim.store_bypassing_admission(
        "sim.ferrvault.dev",
        "v1",
        "gadgets",
        json!({ "metadata": { "name": "old", "namespace": "default" }, "spec": { "url": "https://x" }, "status": {} }),
    )
    .expect("stored");
    let read = api.get("old").await.expect("get");
    assert_eq!(read.data["spec"]["mode"], "ferrvault");
    assert_eq!(read.data["status"]["observed"], 0);
    let listed = api.list(&Default::default()).await.expect("list");
    assert_eq!(listed.items[0].data["spec"]["mode"], "ferrvault");
    let relabelled = api
        .patch(
            "old",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "a": "b" } } })),
        )
        .await
        .expect("patch");
    assert_eq!(
        relabelled.metadata.generation,
        Some(1),
        "the default was already there when read: not a spec change"
    );
}

#[tokio::test]
async fn updates_should_not_be_refused_for_invalid_values_they_leave_unchanged() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    sim.store_bypassing_admission(
        "sim.ferrvault.dev",
        "v1",
        "gadgets",
        json!({ "metadata": { "name": "legacy", "namespace": "default" }, "spec": { "url": 42, "replicas": 99 } }),
    )
    .expect("an object the schema refuses, stored under an older one");
    api.patch(
        "legacy",
        &PatchParams::default(),
        &Patch::Merge(json!({ "metadata": { "finalizers": ["sim.ferrvault.dev/keep"] } })),
    )
    .await
    .expect("a metadata change leaves the invalid spec alone");
    api.patch_status(
        "legacy",
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": { "observed": 1 } })),
    )
    .await
    .expect("a status write leaves the invalid spec alone");
    api.patch(
        "legacy",
        &PatchParams::default(),
        &Patch::Merge(json!({ "spec": { "replicas": 5 } })),
    )
    .await
    .expect("fixing one field does not require fixing the others");
    let status = refusal(
        api.patch(
            "legacy",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": 11 } })),
        )
        .await,
    );
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.replicas",
            "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        )],
        "a changed field is validated, the unchanged invalid url is not"
    );
}

#[tokio::test]
async fn status_writes_should_be_validated_against_the_status_schema() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    create(&api, "st", json!({ "url": "https://x" }))
        .await
        .expect("create");
    let condition = |time: &str| json!({ "type": "Ready", "status": "True", "lastTransitionTime": time });
    let status = refusal(
        api.patch_status(
            "st",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "conditions": [condition("2026-01-02T03:04:05Z"), condition("2026-01-02T03:04:05Z")] } })),
        )
        .await,
    );
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueDuplicate",
            "status.conditions[1]",
            r#"Duplicate value: map[string]interface {}{"type":"Ready"}"#
        )]
    );
    let status = refusal(
        api.patch_status(
            "st",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "conditions": [condition("yesterday")] } })),
        )
        .await,
    );
    assert_eq!(
        causes(&status),
        [
            cause(
                "FieldValueTypeInvalid",
                "status.conditions[0].lastTransitionTime",
                r#"Invalid value: "yesterday": status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday""#
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                r#"Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#
            )
        ],
        "a format error blocks the CRD's rules"
    );
    let written = api
        .patch_status(
            "st",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "conditions": [condition("2026-01-02T03:04:05Z")] } })),
        )
        .await
        .expect("a valid status");
    assert_eq!(written.data["status"]["observed"], 0, "status defaults apply");
}

#[tokio::test]
async fn a_put_without_resource_version_should_be_refused_for_custom_resources() {
    let sim = sim().await;
    let api = install_gadget_crd(&sim.client()).await;
    let created = create(&api, "put", json!({ "url": "https://x" }))
        .await
        .expect("create");
    let mut unconditional = created.clone();
    unconditional.metadata.resource_version = None;
    let status = refusal(api.replace("put", &PostParams::default(), &unconditional).await);
    assert_eq!(
        status.message,
        r#"gadgets.sim.ferrvault.dev "put" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"#
    );
    let details = status.details.expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("sim.ferrvault.dev", "gadgets")
    );
    api.replace("put", &PostParams::default(), &created)
        .await
        .expect("with its resourceVersion");
}
