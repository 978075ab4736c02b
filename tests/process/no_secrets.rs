//! No secret value or token in anything the operator process shows: every HTTP endpoint, its
//! logs at debug level, the status of its resources and its Events — read while the demo's
//! resources are synced. The same run holds the outputs docs/operations.md shows to what the process shows.

use std::{process::Command, time::Duration};

use crate::process_support::{Spawned, binary, get, promtool_check_metrics, wait_for_200};
use base64::Engine;
use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::{ferrvault::FerrVaultSim, kube::KubeSim, testkit::poll_until};
use ferrvault_testkit::sample_world::{self, NAMESPACE, VAULT_SECRETS};
use k8s_openapi::api::{core::v1::Secret, events::v1::Event};
use kube::{Api, api::ListParams};

/// Everything that must never be shown: tokens, vault values, their base64 form (as in a
/// Secret's `data`) and what the transforms make of them.
fn needles(manifests: &[serde_json::Value]) -> Vec<String> {
    let mut needles = sample_world::sample_tokens(manifests);
    for (_, value) in VAULT_SECRETS {
        needles.push(value.to_owned());
        needles.push(base64::engine::general_purpose::STANDARD.encode(value));
    }
    needles.extend(["demo-cert".to_owned(), "db.demo.svc".to_owned()]);
    needles
}

async fn all_ready(client: &kube::Client) -> bool {
    type Conditions = Option<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>>;
    let is_true = |conditions: &Conditions, kind: &str| {
        conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == kind && c.status == "True")
    };
    let ready = |conditions: Conditions| is_true(&conditions, "Ready");
    // A suspended sample is settled once it says so.
    let settled = |conditions: Conditions| is_true(&conditions, "Suspended") || ready(conditions);
    let samples = sample_world::manifests().expect("samples parse");
    let secrets: Api<FerrVaultSecret> = Api::namespaced(client.clone(), NAMESPACE);
    let connections: Api<FerrVaultConnection> = Api::namespaced(client.clone(), NAMESPACE);
    let (Ok(secrets), Ok(connections)) = (
        secrets.list(&ListParams::default()).await,
        connections.list(&ListParams::default()).await,
    ) else {
        return false;
    };
    secrets.items.len() == sample_world::secrets_in_namespace(&samples)
        && connections.items.len() == 2
        && secrets
            .into_iter()
            .all(|s| settled(s.status.map(|s| s.conditions)))
        && connections
            .into_iter()
            .all(|c| ready(c.status.map(|s| s.conditions)))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_synced_run_should_show_no_secret_in_endpoints_logs_statuses_or_events_and_match_the_documented_outputs()
 {
    let mut manifests = sample_world::manifests().expect("samples parse");
    let ferrvault = FerrVaultSim::start(sample_world::ferrvault_config(&manifests))
        .await
        .expect("FerrVault simulator starts");
    let kube = KubeSim::start().await.expect("Kubernetes simulator starts");
    sample_world::point_connections_at(&mut manifests, &ferrvault.url());
    let client = kube.client();
    sample_world::apply(&client, &manifests)
        .await
        .expect("samples applied");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    kube.write_kubeconfig(&kubeconfig).expect("kubeconfig");

    let mut command = Command::new(binary());
    // The FerrVault simulator speaks plain http, on loopback (refused by default).
    command.args([
        "run",
        "--log-level=debug",
        "--log-format=json",
        "--allow-insecure-http",
        "--ferrvault-allowed-cidrs=127.0.0.1/32",
    ]);
    command.args([
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--admin-bind-address=127.0.0.1:0",
    ]);
    command.arg("--kubeconfig").arg(&kubeconfig);
    let mut operator = Spawned::start(command);
    let at = operator.addresses();
    let admin = at.admin.expect("admin enabled");

    poll_until("the samples all Ready", Duration::from_secs(60), || async {
        if all_ready(&client).await {
            Ok(())
        } else {
            Err(operator.output())
        }
    })
    .await;
    let target: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let synced = target.get("app-config").await.expect("target Secret written");
    assert!(
        synced.data.is_some_and(|data| data.contains_key("APP_API_KEY")),
        "the values did reach the target, so the scan below is meaningful"
    );

    // Readiness is re-evaluated every probe period, so it may trail a fast first sync by one.
    wait_for_200(&format!("http://{}/readyz", at.probes), Duration::from_secs(30)).await;
    let mut shown = Vec::new();
    for url in [
        format!("http://{}/metrics", at.metrics),
        format!("http://{}/healthz?verbose", at.probes),
        format!("http://{}/readyz?verbose", at.probes),
        format!("http://{admin}/debug/actors"),
        format!("http://{admin}/debug/actors?format=text"),
        format!("http://{admin}/debug/queue"),
    ] {
        let (status, body) = get(&url).await;
        assert_eq!(status, 200, "{url}");
        shown.push((url, body));
    }
    let secrets: Api<FerrVaultSecret> = Api::namespaced(client.clone(), NAMESPACE);
    let connections: Api<FerrVaultConnection> = Api::namespaced(client.clone(), NAMESPACE);
    let events: Api<Event> = Api::namespaced(client.clone(), NAMESPACE);
    let lp = ListParams::default();
    shown.push((
        "FerrVaultSecret statuses".into(),
        serde_json::to_string(&secrets.list(&lp).await.expect("list").items).expect("json"),
    ));
    shown.push((
        "FerrVaultConnection statuses".into(),
        serde_json::to_string(&connections.list(&lp).await.expect("list").items).expect("json"),
    ));
    // The sync recorded Events, so the scan covers them (written after the status, in the
    // background: they may trail Ready).
    let events = poll_until("the sync's Events", Duration::from_secs(30), || async {
        let items = events.list(&lp).await.expect("list events").items;
        if items.is_empty() {
            Err("no Event yet".to_owned())
        } else {
            Ok(items)
        }
    })
    .await;
    shown.push(("Events".into(), serde_json::to_string(&events).expect("json")));

    operator.sigterm();
    let exit = operator.wait_exit(Duration::from_secs(30));
    assert_eq!(exit.code(), Some(0), "{}", operator.output());
    shown.push(("logs (debug)".into(), operator.output()));

    let (_, scrape) = &shown[0];
    if let Err(complaint) = promtool_check_metrics(scrape) {
        panic!("promtool check metrics on a synced run's scrape:\n{complaint}");
    }
    documented_outputs_should_match(&shown);
    debug_queue_should_show_keys_and_limiters(&shown);

    for needle in needles(&manifests) {
        for (source, text) in &shown {
            assert!(
                !text.contains(&needle),
                "{source} shows a secret (a sample value or token; not printed here)"
            );
        }
    }
}

/// The fenced block after `<!-- usage:NAME -->` in docs/operations.md, without `$ ` command lines.
fn documented_block(name: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
        .expect("docs/operations.md");
    let marker = format!("<!-- usage:{name} -->");
    let after = doc
        .split_once(&marker)
        .unwrap_or_else(|| panic!("docs/operations.md has no {marker}"))
        .1;
    let block = after
        .split("```")
        .nth(1)
        .unwrap_or_else(|| panic!("no code block after {marker}"));
    block
        .lines()
        .skip(1) // the fence's info string
        .filter(|line| !line.starts_with("$ ") && !line.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The outputs docs/operations.md shows (captured from the demo) against this run of the same samples:
/// every probe check, metric series name (and label set, where it names a sample resource) and
/// actor exists.
fn documented_outputs_should_match(shown: &[(String, String)]) {
    let body = |suffix: &str| {
        shown
            .iter()
            .find(|(url, _)| url.ends_with(suffix))
            .map(|(_, body)| body.as_str())
            .unwrap_or_else(|| panic!("{suffix} was scraped"))
    };
    let probes = format!("{}{}", body("/healthz?verbose"), body("/readyz?verbose"));
    for line in documented_block("healthz") {
        let check = line.split_once(':').map_or(line.as_str(), |(check, _)| check);
        assert!(
            probes.contains(check),
            "docs/operations.md shows {check:?}, the probes do not:\n{probes}"
        );
    }
    let scrape = body("/metrics");
    for line in documented_block("metrics") {
        let series = line.split_whitespace().next().expect("a sample");
        let name = series.split('{').next().expect("a name");
        assert!(
            scrape.lines().any(|l| l.starts_with(name)),
            "docs/operations.md shows metric {name}, /metrics does not have it"
        );
        if series.contains("namespace=\"demo\"") {
            assert!(
                scrape.contains(series),
                "docs/operations.md shows {series}, /metrics does not"
            );
        }
    }
    let tree = body("/debug/actors?format=text");
    for line in documented_block("actors") {
        let actor = line.split(" id=").next().expect("name and kind");
        assert!(
            tree.contains(actor),
            "docs/operations.md shows actor {actor:?}, the tree does not:\n{tree}"
        );
    }
}

/// `/debug/queue` after the sync: each sample key waits for its refresh, and the credential's
/// limiter is shown by fingerprint.
fn debug_queue_should_show_keys_and_limiters(shown: &[(String, String)]) {
    let (_, body) = shown
        .iter()
        .find(|(url, _)| url.ends_with("/debug/queue"))
        .expect("/debug/queue was read");
    let queue: serde_json::Value = serde_json::from_str(body).expect("JSON");
    let keys: Vec<serde_json::Value> = queue["controllers"]
        .as_array()
        .expect("controllers")
        .iter()
        .flat_map(|c| c["keys"].as_array().cloned().unwrap_or_default())
        .collect();
    let app = keys
        .iter()
        .find(|k| {
            k["key"]
                .as_str()
                .is_some_and(|key| key.ends_with("demo/app-config"))
        })
        .unwrap_or_else(|| panic!("no demo/app-config key in {queue:#}"));
    assert_eq!(app["state"], "delayed", "{app}");
    assert_eq!(app["attempts"], 0, "{app}");
    assert!(app["due_in_secs"].as_f64().is_some_and(|due| due > 0.0), "{app}");
    let limiters = queue["limiters"].as_array().expect("limiters");
    assert!(
        limiters
            .iter()
            .any(|l| l["credential"].as_str().is_some_and(|c| c.len() >= 8) && l["burst"] == 5),
        "{queue:#}"
    );
}
