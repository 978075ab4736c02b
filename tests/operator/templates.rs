//! End-to-end: `target.template` (issue 36 point 7) against both simulators — a value built from
//! three keys, `Merge` versus `Replace`, a docker config usable as an `imagePullSecret`, and a
//! missing key refused with its key and column while the target stays as it was.

use std::collections::BTreeMap;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use ferrvault_operator::api::{
    DOCKER_CONFIG_KEY, DOCKER_CONFIG_TYPE, DockerConfigTemplate, SecretTarget, SecretTemplate,
    TemplateMergePolicy,
};
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::operator_support::*;

/// The DSN template of the issue, over three keys put into the `blobs` vault.
const DSN: &str = "postgres://${DB_USER}:${DB_PASS|urlquery}@${DB_HOST}:5432/app";

/// The three keys (the password needs escaping in a URL).
fn put_db_keys(h: &Harness) {
    for (key, value) in [
        ("DB_USER", "app"),
        ("DB_PASS", "p@ss/w rd"),
        ("DB_HOST", "db.internal"),
    ] {
        assert!(h.fv.put_secret("blobs", key, value), "the blobs vault exists");
    }
}

/// A spec reading `blobs` with `template`.
fn templated(template: SecretTemplate) -> ferrvault_operator::api::FerrVaultSecretSpec {
    let mut spec = secret_spec("conn", "blobs");
    spec.target = Some(SecretTarget {
        template: Some(template),
        ..SecretTarget::default()
    });
    spec
}

fn dsn_template(policy: Option<TemplateMergePolicy>) -> SecretTemplate {
    SecretTemplate {
        data: BTreeMap::from([("DSN".to_owned(), DSN.to_owned())]),
        merge_policy: policy,
        docker_config: None,
    }
}

/// Replaces `target.template` of FerrVaultSecret `name`.
async fn set_template(h: &Harness, name: &str, template: &SecretTemplate) {
    let patch = json!({ "spec": { "target": { "template": template } } });
    h.fvs()
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch the template");
}

fn keys(data: &BTreeMap<String, Vec<u8>>) -> Vec<&str> {
    data.keys().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_should_build_a_dsn_from_three_keys_beside_the_revealed_ones_then_alone_on_replace() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", OTHER_TOKEN).await;
    put_db_keys(&h);
    h.create_secret("app", templated(dsn_template(None))).await;
    h.wait_secret_reason("app", "Synced").await;
    let merged = data_of(&h.secrets().get("app").await.unwrap());
    assert_eq!(
        String::from_utf8_lossy(&merged["DSN"]),
        "postgres://app:p%40ss%2Fw%20rd@db.internal:5432/app"
    );
    assert_eq!(
        keys(&merged),
        ["CERT", "CONFIG", "DB_HOST", "DB_PASS", "DB_USER", "DSN"],
        "Merge (the default) keeps the revealed keys"
    );

    set_template(&h, "app", &dsn_template(Some(TemplateMergePolicy::Replace))).await;
    let replaced = h
        .wait_target_for("with only the template's key", "app", |s| {
            keys(&data_of(s)) == ["DSN"]
        })
        .await;
    assert_eq!(data_of(&replaced)["DSN"], merged["DSN"]);
    // The status is written after the target: the first pass's Synced is still there until then.
    let fvs = h.fvs();
    let status = h
        .eventually("a status listing only the template's key", || {
            let fvs = fvs.clone();
            async move {
                let status = fvs.get("app").await.ok()?.status?;
                (status.synced_keys == ["DSN"]).then_some(status)
            }
        })
        .await;
    assert_eq!(
        ready(Some(&status.conditions)).map(|c| c.reason.as_str()),
        Some("Synced")
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_docker_config_should_write_a_secret_usable_as_an_image_pull_secret() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", OTHER_TOKEN).await;
    put_db_keys(&h);
    let template = SecretTemplate {
        docker_config: Some(DockerConfigTemplate {
            server: "registry.example.com".into(),
            username_key: "DB_USER".into(),
            password_key: "DB_PASS".into(),
            email_key: None,
        }),
        merge_policy: Some(TemplateMergePolicy::Replace),
        ..SecretTemplate::default()
    };
    h.create_secret("pull", templated(template)).await;
    h.wait_secret_reason("pull", "Synced").await;
    let target = h.secrets().get("pull").await.unwrap();
    assert_eq!(target.type_.as_deref(), Some(DOCKER_CONFIG_TYPE));
    let data = data_of(&target);
    assert_eq!(keys(&data), [DOCKER_CONFIG_KEY]);
    let config: serde_json::Value = serde_json::from_slice(&data[DOCKER_CONFIG_KEY]).expect("JSON");
    // What the kubelet reads: auths.<server>.auth, base64 of user:password.
    assert_eq!(
        config,
        json!({ "auths": { "registry.example.com": {
            "username": "app",
            "password": "p@ss/w rd",
            "auth": STANDARD.encode("app:p@ss/w rd"),
        } } })
    );
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_should_be_a_template_error_naming_key_and_column_and_leave_the_target_untouched() {
    let h = Harness::start().await;
    h.connection("conn", "conn-token", OTHER_TOKEN).await;
    put_db_keys(&h);
    h.create_secret("app", templated(dsn_template(None))).await;
    h.wait_secret_reason("app", "Synced").await;
    let before = h.secrets().get("app").await.unwrap();

    let mut typo = dsn_template(None);
    typo.data.insert("DSN".into(), DSN.replace("DB_HOST", "DB_HOTS"));
    set_template(&h, "app", &typo).await;
    let cr = h.wait_secret_reason("app", "TemplateError").await;
    let ready = ready(cr.status.as_ref().map(|s| s.conditions.as_slice())).unwrap();
    assert_eq!(ready.status, "False");
    assert_eq!(
        ready.message,
        "target.template.data[\"DSN\"]: column 43: key \"DB_HOTS\" not found (a missing key is never \
         rendered as empty text; `${DB_HOTS|default \"x\"}` allows it)"
    );
    let after = h.secrets().get("app").await.unwrap();
    assert_eq!(
        after.metadata.resource_version, before.metadata.resource_version,
        "not written"
    );
    assert_eq!(data_of(&after), data_of(&before));
    h.finish().await;
}
