//! Scenario 8 of issue 7: objects that bypass schema validation. The API server refuses them
//! (422) as a real one does, so they are written straight into storage (the simulator's test
//! control `store_bypassing_admission`), as objects stored under an older or missing CRD
//! schema exist in a real cluster. Each gets a clear `Ready=False` reason, nothing panics, the
//! operator's own writes to them pass (ratcheting: their invalid fields are left unchanged),
//! and well-formed objects next to them still sync.

use std::time::{Duration, Instant};

use crate::scenario_support::{
    cluster::{CONNECTION, Cluster, TOKEN_SECRET, ferrvault_config, unlimited},
    finish,
    operator::OperatorProcess,
    poll_until,
};
use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use kube::api::DeleteParams;
use serde_json::{Value, json};

const HUGE_TOKEN: &str = "fvsat_LEAKCHECK_huge_token";
/// The huge selector's own vault and token: a reveal of a vault that another object reads in
/// full may share that request (single-flight asks for everything) and then end in
/// `MissingKeys`, also a clear reason but not the oversized-request path this case is about.
const SELECTOR_TOKEN: &str = "fvsat_LEAKCHECK_selector_token";
const BIG_VALUE_PREFIX: &str = "LEAKCHECK-oversized-value-";
/// A string where an object belongs (`spec.connectionRef`): distinctive, so the leak scan
/// proves the InvalidSpec message names the field without quoting what was found there.
const MISTYPED_STRING: &str = "LEAKCHECK-connectionref-as-a-string";
/// A FerrVaultConnection with `spec.url: 42`.
const BROKEN_CONNECTION: &str = "url-number";

#[tokio::test(flavor = "multi_thread")]
async fn objects_that_bypass_the_schema_should_each_get_a_clear_reason_without_disturbing_the_others() {
    let started = Instant::now();
    let big_value = format!("{BIG_VALUE_PREFIX}{}", "x".repeat(1024 * 1024 + 10));
    let cluster = Cluster::start(
        ferrvault_config(unlimited(), false)
            .vault("huge", [("BLOB", big_value.as_str())])
            .service_account_token(HUGE_TOKEN, "huge")
            .vault("selector", [("ONLY_KEY", "LEAKCHECK-selector-value")])
            .service_account_token(SELECTOR_TOKEN, "selector"),
    )
    .await;
    cluster.healthy_connection().await;
    cluster
        .create_secret("huge-token", &[("token", HUGE_TOKEN)])
        .await;
    cluster.connection("huge", "huge-token").await;
    cluster
        .create_secret("selector-token", &[("token", SELECTOR_TOKEN)])
        .await;
    cluster.connection("selector", "selector-token").await;
    cluster
        .create_raw::<FerrVaultConnection>(
            BROKEN_CONNECTION,
            json!({ "url": 42, "tokenSecretRef": { "name": TOKEN_SECRET, "key": "token" } }),
        )
        .await;
    let good = cluster.create_many("good", 3, CONNECTION).await;

    // Within the CRD's bounds (1,000 names of at most 253 characters, issue 34), yet a reveal
    // request over FerrVault's 64 KiB body limit.
    let huge_selector: Vec<String> = (0..1_000)
        .map(|i| format!("NO_SUCH_KEY_{i:05}_{}", "k".repeat(100)))
        .collect();
    let bad: [(&str, Value, &str); 9] = [
        (
            "interval-words",
            json!({ "refreshInterval": "every tuesday" }),
            "InvalidRefreshInterval",
        ),
        (
            "interval-overflow",
            json!({ "refreshInterval": "99999999999999h" }),
            "InvalidRefreshInterval",
        ),
        (
            "interval-number",
            json!({ "refreshInterval": 42 }),
            "InvalidRefreshInterval",
        ),
        (
            "transform-unknown",
            json!({ "transforms": [{ "type": "rot13" }] }),
            "TransformError",
        ),
        (
            "selector-huge",
            json!({ "connectionRef": { "name": "selector" }, "vault": "selector", "selector": { "names": huge_selector } }),
            "Unreachable",
        ),
        (
            "payload-oversized",
            json!({ "connectionRef": { "name": "huge" }, "vault": "huge" }),
            "SecretTooLarge",
        ),
        ("vault-number", json!({ "vault": 42 }), "InvalidSpec"),
        (
            "connectionref-string",
            json!({ "connectionRef": MISTYPED_STRING }),
            "InvalidSpec",
        ),
        (
            "connection-invalid",
            json!({ "connectionRef": { "name": BROKEN_CONNECTION } }),
            "InvalidConnection",
        ),
    ];
    for (name, overrides, _) in &bad {
        let mut spec =
            json!({ "connectionRef": { "name": CONNECTION }, "vault": "prod", "refreshInterval": "1h" });
        for (key, value) in overrides.as_object().expect("an object") {
            spec[key] = value.clone();
        }
        cluster.create_raw::<FerrVaultSecret>(name, spec).await;
    }

    let operator = OperatorProcess::launch(&cluster, "8-bad-input", "operator-0", &[]);
    cluster
        .wait_reason(&good, "True", "Synced", Duration::from_secs(60))
        .await;
    for (name, _, reason) in &bad {
        cluster
            .wait_reason(&[name.to_string()], "False", reason, Duration::from_secs(60))
            .await;
    }
    cluster
        .wait_connection_reason(
            &[BROKEN_CONNECTION.to_owned()],
            "False",
            "InvalidSpec",
            Duration::from_secs(60),
        )
        .await;
    let conditions = cluster.ready_conditions().await;
    for (name, _, _) in &bad {
        let condition = conditions[*name].clone().expect("a Ready condition");
        assert!(
            !condition.message.is_empty(),
            "{name}: the reason comes with a message"
        );
        eprintln!("scenario 8: {name}: {} — {}", condition.reason, condition.message);
    }
    assert!(
        cluster
            .secrets()
            .get_opt("payload-oversized")
            .await
            .expect("read")
            .is_none(),
        "no Secret is written for a payload over the 1 MiB limit"
    );
    for name in &good {
        cluster.assert_synced_target(name).await;
    }
    assert_eq!(
        conditions["vault-number"].as_ref().map(|c| c.message.as_str()),
        Some("spec.vault: invalid type, expected a string; fix the object (it bypassed the CRD schema)")
    );
    let message = conditions["connection-invalid"]
        .as_ref()
        .map(|c| c.message.clone());
    assert!(
        message.as_deref().is_some_and(|m| m.contains(&format!(
            "FerrVaultConnection \"{BROKEN_CONNECTION}\" has an invalid spec (spec.url: invalid type, expected a string)"
        ))),
        "{message:?}"
    );
    let connection = cluster.connection_ready_conditions().await[BROKEN_CONNECTION].clone();
    eprintln!("scenario 8: {BROKEN_CONNECTION} (connection): {connection:?}");

    let raw = cluster.raw_fvs();
    raw.delete("vault-number", &DeleteParams::default())
        .await
        .expect("delete an invalid FerrVaultSecret");
    poll_until(
        "the invalid FerrVaultSecret vault-number to be gone (finalizer removed)",
        Duration::from_secs(30),
        || async {
            match raw.get_opt("vault-number").await {
                Ok(None) => Ok(()),
                Ok(Some(object)) => Err(format!(
                    "still there, finalizers {:?}",
                    object.metadata.finalizers
                )),
                Err(e) => Err(e.to_string()),
            }
        },
    )
    .await;

    // `finish` also asserts that the log never says "panicked".
    let needles = [
        HUGE_TOKEN,
        SELECTOR_TOKEN,
        "LEAKCHECK-selector-value",
        BIG_VALUE_PREFIX,
        MISTYPED_STRING,
    ];
    finish("8-bad-input", started, &cluster, vec![operator], &needles).await;
}
