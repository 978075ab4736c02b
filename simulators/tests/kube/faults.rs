//! Fault injection and the audit log through the Rust handle: injected 429/503 with
//! Retry-After, lost responses (applied writes answered 500/504) and the full history that
//! shows them, hung requests, freezes, latency, and caller identities.

use crate::kube_sim_support::{refusal, sim, within};
use ferrvault_sim::kube::store::EventType;
use k8s_openapi::api::{coordination::v1::Lease, core::v1::Secret};
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::json;
use std::time::Duration;

async fn lease(api: &Api<Lease>, name: &str) {
    let l: Lease = serde_json::from_value(json!({"metadata": {"name": name}})).expect("lease");
    api.create(&PostParams::default(), &l)
        .await
        .expect("lease created");
}

#[tokio::test]
async fn injected_failures_should_hit_only_the_selected_verb_and_resource() {
    let sim = sim().await;
    // kube 5 clients retry 429/503 on their own; this one must see the injected errors.
    let mut config = sim.config();
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let secrets: Api<Secret> = Api::namespaced(client, "default");
    sim.faults().fail(Some("list"), Some("secrets"), 1.0, 429);
    let err = secrets
        .list(&ListParams::default())
        .await
        .expect_err("list must fail");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 429 && s.reason == "TooManyRequests"),
        "{err:?}"
    );
    assert!(
        secrets
            .get_opt("missing")
            .await
            .expect("get is not affected")
            .is_none()
    );
    sim.faults().clear();
    secrets.list(&ListParams::default()).await.expect("cleared");
    sim.faults().fail(None, None, 1.0, 503);
    let err = secrets.get_opt("x").await.expect_err("everything fails");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 503), "{err:?}");
}

#[tokio::test]
async fn default_kube_clients_should_ride_out_an_injected_429_by_retrying() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    sim.faults().fail(Some("list"), Some("secrets"), 1.0, 429);
    let faults = sim.faults();
    let list = tokio::spawn(async move { secrets.list(&ListParams::default()).await });
    crate::kube_sim_support::eventually("the client has been refused at least once", || async {
        sim.audit()
            .iter()
            .any(|e| e.verb == "list" && e.code == 429)
            .then_some(())
    })
    .await;
    faults.clear();
    within("the retried list", list)
        .await
        .expect("task")
        .expect("retry succeeds after Retry-After");
}

#[tokio::test]
async fn hung_requests_should_wait_until_released() {
    let sim = sim().await;
    let leases: Api<Lease> = Api::namespaced(sim.client(), "default");
    lease(&leases, "l").await;
    sim.faults().hang(Some("patch"), Some("leases"));
    let api = leases.clone();
    let mut write = tokio::spawn(async move {
        api.patch(
            "l",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"holderIdentity": "a"}})),
        )
        .await
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut write)
            .await
            .is_err(),
        "the patch must hang"
    );
    leases
        .get("l")
        .await
        .expect("reads still work while patches hang");
    sim.faults().unhang();
    let done = within("the released patch", write)
        .await
        .expect("task")
        .expect("patch");
    assert_eq!(done.spec.and_then(|s| s.holder_identity).as_deref(), Some("a"));
}

#[tokio::test]
async fn frozen_server_should_answer_nothing_until_thawed() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    sim.faults().freeze();
    let api = secrets.clone();
    let mut read = tokio::spawn(async move { api.list(&ListParams::default()).await });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut read)
            .await
            .is_err(),
        "frozen server must not answer"
    );
    sim.faults().thaw();
    within("the list after thaw", read)
        .await
        .expect("task")
        .expect("list");
}

#[tokio::test]
async fn latency_should_delay_every_request() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    sim.faults().set_latency(Duration::from_millis(250));
    let start = tokio::time::Instant::now();
    secrets.get_opt("x").await.expect("get");
    assert!(tokio::time::Instant::now() - start >= Duration::from_millis(250));
}

#[tokio::test]
async fn audit_should_name_each_writer_and_record_reads() {
    let sim = sim().await;
    let a: Api<Lease> = Api::namespaced(sim.client_as("leader-a"), "default");
    let b: Api<Lease> = Api::namespaced(sim.client_as("leader-b"), "default");
    lease(&a, "lock").await;
    b.patch(
        "lock",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"holderIdentity": "b"}})),
    )
    .await
    .expect("patch");
    a.get("lock").await.expect("get");
    let audit = sim.audit();
    let lease_calls: Vec<(String, String, u16)> = audit
        .iter()
        .filter(|e| e.resource == "leases")
        .map(|e| (e.identity.clone(), e.verb.clone(), e.code))
        .collect();
    assert_eq!(
        lease_calls,
        [
            ("leader-a".into(), "create".into(), 201),
            ("leader-b".into(), "patch".into(), 200),
            ("leader-a".into(), "get".into(), 200)
        ]
    );
    let create = audit.iter().find(|e| e.verb == "create").expect("create entry");
    assert_eq!(
        (
            create.group.as_str(),
            create.namespace.as_str(),
            create.name.as_str()
        ),
        ("coordination.k8s.io", "default", "")
    );
    let debug = format!("{audit:?}");
    assert!(!debug.contains("sim-"), "tokens never appear in the audit log");
}

#[tokio::test]
async fn debug_output_should_reveal_neither_tokens_nor_secret_values() {
    let sim = sim().await;
    let token = sim.register_identity("someone");
    let secrets: Api<Secret> = Api::namespaced(sim.client(), "default");
    let s: Secret = serde_json::from_value(
        json!({"metadata": {"name": "s"}, "stringData": {"password": "hunter2-value"}}),
    )
    .expect("secret");
    secrets.create(&PostParams::default(), &s).await.expect("create");
    let dump = format!("{sim:?} {:?}", sim.faults());
    assert!(!dump.contains(&token), "token leaked: {dump}");
    assert!(
        !dump.contains("hunter2") && !dump.contains("aHVudGVyMi12YWx1ZQ"),
        "secret value leaked: {dump}"
    );
}

/// A client that reports injected 5xx instead of retrying them.
fn no_retry_client(sim: &ferrvault_sim::kube::KubeSim) -> kube::Client {
    let mut config = sim.config();
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

fn secret(name: &str, value: &str) -> Secret {
    serde_json::from_value(json!({"metadata": {"name": name}, "stringData": {"k": value}})).expect("secret")
}

#[tokio::test]
async fn a_lost_response_should_fail_the_request_after_its_write_is_applied() {
    let sim = sim().await;
    sim.keep_history("", "secrets");
    let secrets: Api<Secret> = Api::namespaced(no_retry_client(&sim), "default");
    let created = secrets
        .create(&PostParams::default(), &secret("s", "1"))
        .await
        .expect("create");
    sim.faults()
        .lose_responses(Some("update"), Some("secrets"), 1.0, 500);
    let mut changed = created.clone();
    changed.string_data = Some([("k".to_owned(), "2".to_owned())].into());
    let err = secrets
        .replace("s", &PostParams::default(), &changed)
        .await
        .expect_err("the answer is lost");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 500 && s.reason == "InternalError"),
        "{err:?}"
    );
    sim.faults().clear();
    let stored = secrets.get("s").await.expect("get");
    assert_eq!(
        stored.data.expect("data")["k"].0,
        b"2".to_vec(),
        "the write was applied"
    );
    let retried = refusal(secrets.replace("s", &PostParams::default(), &changed).await);
    assert_eq!(
        retried.reason, "Conflict",
        "a retry of the lost update finds its own write"
    );
    let versions: Vec<(EventType, Option<String>)> = sim
        .history("", "secrets")
        .into_iter()
        .map(|r| (r.event, r.object["data"]["k"].as_str().map(str::to_owned)))
        .collect();
    assert_eq!(
        versions,
        [
            (EventType::Added, Some("MQ==".to_owned())),
            (EventType::Modified, Some("Mg==".to_owned())),
        ]
    );
}

#[tokio::test]
async fn a_lost_create_answered_504_should_leave_the_object_created() {
    let sim = sim().await;
    let secrets: Api<Secret> = Api::namespaced(no_retry_client(&sim), "default");
    sim.faults().lose_responses(Some("create"), None, 1.0, 504);
    let status = refusal(secrets.create(&PostParams::default(), &secret("t", "1")).await);
    assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
    sim.faults().clear();
    assert!(secrets.get_opt("t").await.expect("get_opt").is_some(), "created");
    let again = refusal(secrets.create(&PostParams::default(), &secret("t", "1")).await);
    assert_eq!(
        again.reason, "AlreadyExists",
        "a retried create finds its own object"
    );
    let entry = sim
        .audit()
        .into_iter()
        .find(|e| e.verb == "create" && e.name.is_empty() && e.resource == "secrets")
        .expect("audited");
    assert_eq!(entry.code, 504, "the audit shows what the client saw");
}

#[tokio::test]
async fn lost_responses_should_be_configurable_over_http() {
    let sim = sim().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let body =
        json!({"lostResponses": [{"verb": "patch", "resource": "secrets", "fraction": 1.0, "code": 500}]});
    let r = reqwest::Client::new()
        .put(format!("{}/_sim/faults", sim.url()))
        .json(&body)
        .send()
        .await
        .expect("put faults");
    assert_eq!(r.status(), 200);
    assert_eq!(sim.faults().config().lost_responses[0].code, 500);
    let secrets: Api<Secret> = Api::namespaced(no_retry_client(&sim), "default");
    secrets
        .create(&PostParams::default(), &secret("u", "1"))
        .await
        .expect("creates are not affected");
    let err = secrets
        .patch(
            "u",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .expect_err("lost");
    assert!(matches!(&err, kube::Error::Api(s) if s.code == 500), "{err:?}");
    sim.faults().clear();
    assert_eq!(
        secrets
            .get("u")
            .await
            .expect("get")
            .metadata
            .labels
            .expect("labels")["a"],
        "b"
    );
}
