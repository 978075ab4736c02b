//! `explain`: the operator's rule applied to the status and to what the cluster shows now, and
//! Secrets read as metadata only.

use std::collections::BTreeMap;

use ferrvault_operator::{
    api::FerrVaultConnection,
    rules::{ContentHashKey, secret_inputs_by},
};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt, api::DeleteParams};
use serde_json::{Value, json};

use crate::support::{Cluster, NS, Relay, ready, synced_status};

/// Values that must never reach the plugin (the relay's bytes are searched for them).
const TOKEN: &str = "LEAKCHECK-token-value";
const DB_URL: &str = "postgres://app:LEAKCHECK-db-pass@db/shop";

/// `app` synced ten minutes ago through connection `prod`, its status written as the operator
/// writes it (inputs from the operator's own function, with a key of the test's).
async fn synced_app(cluster: &Cluster) -> Timestamp {
    cluster.create_connection(NS, "prod", "prod-token", TOKEN).await;
    cluster.create_fvs(NS, "app", "prod", json!({})).await;
    let target = cluster.put_secret(NS, "app", &[("DB_URL", DB_URL)]).await;
    let connection: FerrVaultConnection = Api::namespaced(cluster.client.clone(), NS)
        .get("prod")
        .await
        .expect("the connection");
    let token: Secret = cluster
        .secrets(NS)
        .get("prod-token")
        .await
        .expect("the token Secret");
    let versions = BTreeMap::from([("prod-token".to_owned(), token.resource_version())]);
    let key = ContentHashKey::from_bytes(&[7; ContentHashKey::LEN]).expect("a key");
    let inputs = secret_inputs_by(&connection, &|name| versions.get(name).cloned().flatten(), &key);
    let at = Timestamp::from_second(Timestamp::now().as_second() - 600).expect("a timestamp");
    let version = target.resource_version().expect("a version");
    cluster
        .write_status(NS, "app", synced_status(at, &version, &inputs))
        .await;
    at
}

async fn explain(cluster: &Cluster) -> Value {
    let run = cluster.plugin(&["explain", "app", "-o", "json"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
}

fn codes(explanation: &Value) -> Vec<&str> {
    explanation["because"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["code"].as_str().expect("a code"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_should_say_when_the_next_refresh_is_due_and_that_nothing_is_due_before() {
    let cluster = Cluster::start().await;
    let at = synced_app(&cluster).await;
    let explanation = explain(&cluster).await;
    assert_eq!(explanation["due"], "At", "{explanation}");
    assert_eq!(explanation["because"], json!([]));
    assert_eq!(explanation["unchecked"], json!([]));
    assert_eq!(explanation["interval"], "1h0m0s");
    let next: Timestamp = explanation["nextDueAt"]
        .as_str()
        .expect("when")
        .parse()
        .expect("RFC 3339");
    let after = next.duration_since(at);
    assert!(
        after >= SignedDuration::from_mins(54) && after <= SignedDuration::from_mins(66),
        "{after:?}"
    );

    let text = cluster.plugin(&["explain", "app"]).await;
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout
            .contains("Ready:         True (Synced): 1 key(s) synced\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(": nothing is due before then"),
        "{}",
        text.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_should_name_each_change_that_makes_a_sync_due() {
    let cluster = Cluster::start().await;
    synced_app(&cluster).await;

    cluster
        .put_secret(NS, "prod-token", &[("token", "LEAKCHECK-rotated")])
        .await;
    let explanation = explain(&cluster).await;
    assert_eq!(
        (explanation["due"].as_str(), codes(&explanation)),
        (Some("Now"), vec!["InputsChanged"])
    );
    let text = explanation["because"][0]["text"].as_str().expect("a sentence");
    assert!(
        text.starts_with("its inputs changed since the last sync: token "),
        "{text}"
    );

    let recorded = cluster.fvs(NS).get("app").await.expect("app");
    let recorded = recorded.data.pointer("/status/targetResourceVersion").cloned();
    cluster
        .put_secret(NS, "app", &[("DB_URL", "edited by hand")])
        .await;
    let explanation = explain(&cluster).await;
    assert_eq!(codes(&explanation), ["InputsChanged", "TargetChanged"]);
    let text = explanation["because"][1]["text"].as_str().expect("a sentence");
    assert!(
        text.contains(&format!(
            "resourceVersion {} → ",
            recorded
                .and_then(|v| v.as_str().map(str::to_owned))
                .expect("recorded")
        )),
        "{text}"
    );

    cluster
        .secrets(NS)
        .delete("app", &DeleteParams::default())
        .await
        .expect("deleted");
    let explanation = explain(&cluster).await;
    assert_eq!(
        explanation["because"][1]["text"],
        "the target Secret does not exist"
    );

    let force = json!({ "metadata": { "annotations": { "ferrvault.com/force-sync": "now" } } });
    cluster
        .fvs(NS)
        .patch("app", &Default::default(), &kube::api::Patch::Merge(&force))
        .await
        .expect("annotated");
    assert_eq!(codes(&explain(&cluster).await)[0], "ForceSync");

    let suspend = json!({ "spec": { "suspend": true } });
    cluster
        .fvs(NS)
        .patch("app", &Default::default(), &kube::api::Patch::Merge(&suspend))
        .await
        .expect("suspended");
    let explanation = explain(&cluster).await;
    assert_eq!(
        (explanation["due"].as_str(), explanation["suspended"].as_bool()),
        (Some("Suspended"), Some(true))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_should_say_why_an_object_is_not_ready() {
    let cluster = Cluster::start().await;
    cluster.create_connection(NS, "prod", "prod-token", TOKEN).await;
    cluster
        .create_fvs(NS, "app", "prod", json!({ "vault": "gone" }))
        .await;
    // A vault name is tenant input, and the operator's message quotes it.
    let failed = ready(
        "False",
        "VaultNotFound",
        "vault \"gone\u{1b}[31m\" not found",
        1,
        Timestamp::now(),
    );
    cluster
        .write_status(
            NS,
            "app",
            json!({ "conditions": [failed], "missingKeys": ["API_KEY"] }),
        )
        .await;

    let run = cluster.plugin(&["explain", "app"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    for line in [
        "Ready:         False (VaultNotFound): vault \"gone?[31m\" not found\n",
        "Missing keys:  API_KEY\n",
        "Last sync:     never\n",
        "Next sync:     now, because:\n  - it has never synced\n",
    ] {
        assert!(run.stdout.contains(line), "{line:?} in:\n{}", run.stdout);
    }
    assert!(
        !run.stdout.contains('\u{1b}'),
        "an escape sequence reached the terminal"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_should_exit_1_for_a_missing_object() {
    let cluster = Cluster::start().await;
    let run = cluster.plugin(&["explain", "ghost"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "Error from server (NotFound): ferrvaultsecrets.ferrvault.com \"ghost\" not found\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_and_status_should_never_receive_a_secret_value() {
    let cluster = Cluster::start().await;
    synced_app(&cluster).await;
    let relay = Relay::start(&cluster).await;
    let encoded = |value: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(value)
    };
    for args in [
        &["explain", "app"][..],
        &["status", "-o", "json"],
        &["sync", "app", "--no-wait"],
    ] {
        let run = crate::support::plugin_with(&relay.kubeconfig, args).await;
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
    }
    for value in [TOKEN, DB_URL] {
        assert!(
            !relay.received(encoded(value).as_bytes()) && !relay.received(value.as_bytes()),
            "the API server sent the plugin a Secret's value"
        );
    }
    // Positive control: a client reading a Secret whole through the relay is seen.
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&relay.kubeconfig).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    let client = kube::Client::try_from(config).expect("client");
    Api::<Secret>::namespaced(client, NS)
        .get("app")
        .await
        .expect("read whole");
    assert!(
        relay.received(encoded(DB_URL).as_bytes()),
        "the relay sees what a full read receives"
    );
}
