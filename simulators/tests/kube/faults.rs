//! Fault injection and the audit log through the Rust handle: injected 429/503 with
//! Retry-After, hung requests, freezes, latency, and caller identities.

use crate::kube_sim_support::{sim, within};
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
