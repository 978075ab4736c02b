//! The simulator over raw HTTP: the `/_sim` admin endpoints, Status bodies, Secret
//! decoding errors, discovery, pagination and field selectors.

use crate::kube_sim_support::{sim, within};
use ferrvault_sim::kube::{AuditEntry, KubeSim};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{ListParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::{Value, json};

fn http() -> reqwest::Client {
    // Another test in this process may have installed the provider first; either way one is installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn get_json(url: String) -> (u16, Value) {
    let r = http().get(url).send().await.expect("request");
    (r.status().as_u16(), r.json().await.expect("json body"))
}

#[tokio::test]
async fn admin_endpoints_should_set_faults_and_serve_the_audit_log() {
    let sim = sim().await;
    // kube 5 clients retry 503 on their own; this one must see the injected error.
    let mut config = sim.config();
    config.default_retry = false;
    let secrets: Api<Secret> = Api::namespaced(kube::Client::try_from(config).expect("client"), "default");
    let body = json!({"failures": [{"verb": "get", "resource": "secrets", "fraction": 1.0, "code": 503}]});
    let r = http()
        .put(format!("{}/_sim/faults", sim.url()))
        .json(&body)
        .send()
        .await
        .expect("put faults");
    assert_eq!(r.status(), 200);
    let err = secrets.get_opt("x").await.expect_err("injected 503");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 503), "{err:?}");
    let (_, config) = get_json(format!("{}/_sim/faults", sim.url())).await;
    assert_eq!(config["failures"][0]["code"], 503);
    http()
        .delete(format!("{}/_sim/faults", sim.url()))
        .send()
        .await
        .expect("clear");
    assert!(secrets.get_opt("x").await.expect("cleared").is_none());

    http()
        .post(format!("{}/_sim/faults/gone", sim.url()))
        .send()
        .await
        .expect("force gone");
    let mut stream = secrets
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    let ev = within("the forced 410", stream.next())
        .await
        .expect("event")
        .expect("decodes");
    assert!(
        matches!(&ev, WatchEvent::Error(s) if s.code == 410 && s.reason == "Expired"),
        "{ev:?}"
    );

    let r = http()
        .get(format!("{}/_sim/audit", sim.url()))
        .send()
        .await
        .expect("audit");
    let audit: Vec<AuditEntry> = r.json().await.expect("audit entries");
    assert!(
        audit
            .iter()
            .any(|e| e.verb == "get" && e.resource == "secrets" && e.code == 503),
        "{audit:?}"
    );
    assert!(
        audit.iter().any(|e| e.verb == "watch" && e.code == 200),
        "{audit:?}"
    );
}

#[tokio::test]
async fn unknown_bearer_tokens_should_be_audited_by_hash_only() {
    let sim = sim().await;
    let token = "super-secret-token-value";
    let r = http()
        .get(format!("{}/api/v1/namespaces/default/secrets", sim.url()))
        .bearer_auth(token)
        .send()
        .await
        .expect("list");
    assert_eq!(r.status(), 200);
    let entry = sim
        .audit()
        .into_iter()
        .find(|e| e.resource == "secrets")
        .expect("audited");
    assert!(
        entry.identity.starts_with("token:") && entry.identity.len() == "token:".len() + 8,
        "{}",
        entry.identity
    );
    assert!(!format!("{:?}", sim.audit()).contains(token));
}

#[tokio::test]
async fn secret_with_undecodable_data_should_be_refused_like_the_real_decoder() {
    let sim = sim().await;
    let body = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "data": {"k": "not base64!"}});
    let r = http()
        .post(format!("{}/api/v1/namespaces/default/secrets", sim.url()))
        .json(&body)
        .send()
        .await
        .expect("post");
    let code = r.status().as_u16();
    let status: Value = r.json().await.expect("Status body");
    // The real API server fails this in JSON decoding: 400 BadRequest, not 422.
    assert_eq!(
        (code, status["kind"].as_str(), status["reason"].as_str()),
        (400, Some("Status"), Some("BadRequest"))
    );
    assert!(
        status["message"]
            .as_str()
            .expect("message")
            .contains("illegal base64 data at input byte"),
        "{status}"
    );
}

#[tokio::test]
async fn discovery_should_describe_groups_versions_and_registered_crds() {
    let sim = sim().await;
    crate::kube_sim_support::install_widget_crd(&sim.client()).await;
    let (code, version) = get_json(format!("{}/version", sim.url())).await;
    assert_eq!((code, version["major"].as_str()), (200, Some("1")));
    let (_, groups) = get_json(format!("{}/apis", sim.url())).await;
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(
        names.contains(&"apps") && names.contains(&"sim.ferrvault.dev"),
        "{names:?}"
    );
    let (_, widgets) = get_json(format!("{}/apis/sim.ferrvault.dev/v1", sim.url())).await;
    let resources: Vec<&str> = widgets["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(resources, ["widgets", "widgets/status"]);
    let (code, status) = get_json(format!("{}/apis/nope.example/v1", sim.url())).await;
    assert_eq!((code, status["reason"].as_str()), (404, Some("NotFound")));
}

async fn secrets_named(sim: &KubeSim, count: usize) -> Api<Secret> {
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    for i in 0..count {
        let s: Secret =
            serde_json::from_value(json!({"metadata": {"name": format!("s{i:02}")}})).expect("secret");
        secrets.create(&PostParams::default(), &s).await.expect("create");
    }
    secrets
}

#[tokio::test]
async fn list_should_paginate_with_limit_and_continue() {
    let sim = sim().await;
    let secrets = secrets_named(&sim, 10).await;
    let mut lp = ListParams::default().limit(3);
    let mut pages = Vec::new();
    loop {
        let page = secrets.list(&lp).await.expect("page");
        pages.push(page.items.iter().map(|s| s.name_any()).collect::<Vec<_>>());
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => {
                assert!(page.metadata.remaining_item_count.is_some_and(|n| n > 0));
                lp = lp.continue_token(&c);
            }
            _ => break,
        }
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 3, 1]);
    assert_eq!(
        pages.concat(),
        (0..10).map(|i| format!("s{i:02}")).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn field_selectors_should_select_by_name_and_refuse_unknown_fields() {
    let sim = sim().await;
    let secrets = secrets_named(&sim, 3).await;
    let one = secrets
        .list(&ListParams::default().fields("metadata.name=s01"))
        .await
        .expect("list");
    assert_eq!(
        one.items.iter().map(|s| s.name_any()).collect::<Vec<_>>(),
        ["s01"]
    );
    let others = secrets
        .list(&ListParams::default().fields("metadata.name!=s01"))
        .await
        .expect("list");
    assert_eq!(others.items.len(), 2);
    let err = secrets
        .list(&ListParams::default().fields("spec.nope=1"))
        .await
        .expect_err("unsupported field");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 400), "{err:?}");
}
