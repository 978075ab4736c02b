//! Signed change hints (`POST /hooks/ferrvault`, issue 38 point 4) from the side of whoever can
//! reach the endpoint: a hint only makes FerrVaultSecrets due, so the worst a forged, replayed,
//! stale, oversized or flooding hint may cost is a 401, 413 or 429, never a reveal; and a
//! holder of the key gets a changed value in seconds, one reveal per credential, whatever the
//! number of hints, and learns nothing of which vaults exist.
//!
//! Every count is FerrVault's own (the simulator's reveals per token); the key and the bodies
//! are among the needles of the final leak scan.

use std::time::Duration;

use ferrvault_sim::testkit::{http::client, poll_until};
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::harness::{
    ATTACKER, Launch, Operator, PLATFORM_TOKEN, PLAYGROUND_VAULT, VICTIM, VICTIM_VAULT, World,
    attacker_connection, attacker_syncs,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    rbac::OPERATOR_NAMESPACE,
    victim_syncs,
};

/// The hint key, in the operator's namespace as `--hint-secret-name`'s default names it.
const HINT_KEY: &str = "TENANTCHECK-hint-key-5b0c93e2a17f44d8";
/// The Secret `--hint-secret-name` names by default.
const HINT_SECRET: &str = "ferrvault-operator-hint-key";
/// Marks every hint body, so the leak scan finds any body that reached a log or a metric.
const BODY_MARK: &str = "HINTBODY";
/// The rotated value of the victim's `DB_URL`.
const ROTATED: &str = "postgres://victim:TENANTCHECK-victim-rotated@db:5432/app";

/// A hint as the sender builds it: body, timestamp, and the signature header it computes.
struct SignedHint {
    body: Vec<u8>,
    timestamp: String,
    signature: String,
}

impl SignedHint {
    /// `body` signed with `key` at Unix second `at`.
    fn new(key: &str, body: serde_json::Value, at: i64) -> SignedHint {
        let body = serde_json::to_vec(&body).expect("JSON");
        let timestamp = at.to_string();
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes());
        let mut message = timestamp.as_bytes().to_vec();
        message.push(b'.');
        message.extend_from_slice(&body);
        let signature = format!("sha256={}", hex::encode(ring::hmac::sign(&key, &message)));
        SignedHint {
            body,
            timestamp,
            signature,
        }
    }

    /// A hint for `vault` (names `names` plus a marked nonce making each body unique), signed
    /// with the hint key now.
    fn now(vault: &str, names: &[&str], nonce: usize) -> SignedHint {
        let mut names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        names.push(format!("{BODY_MARK}-{nonce}"));
        SignedHint::new(HINT_KEY, json!({ "vault": vault, "names": names }), now())
    }

    /// Sends it to `url`: `(status, Retry-After)`.
    async fn send(&self, url: &str) -> (u16, Option<String>) {
        self.send_with(&client(), url).await
    }

    /// [`SignedHint::send`] through `client` (a flood shares one client and its connections).
    async fn send_with(&self, client: &reqwest::Client, url: &str) -> (u16, Option<String>) {
        let response = client
            .post(url)
            .header("x-ferrvault-timestamp", &self.timestamp)
            .header("x-ferrvault-signature", &self.signature)
            .body(self.body.clone())
            .send()
            .await
            .unwrap_or_else(|error| panic!("{url}: {error}"));
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        (response.status().as_u16(), retry_after)
    }
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// The world with the hint key stored, an operator with the endpoint, and the victim synced.
async fn hinted_world() -> (World, Operator) {
    let world = World::start().await;
    let key: Secret = serde_json::from_value(json!({
        "metadata": { "name": HINT_SECRET },
        "stringData": { "key": HINT_KEY },
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(world.admin.clone(), OPERATOR_NAMESPACE)
        .create(&PostParams::default(), &key)
        .await
        .expect("hint key stored");
    let operator = Launch::new().insecure_http().hints().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    // The key is read at start: a signed hint is accepted once the log says so.
    poll_until("the hint key loaded", Duration::from_secs(20), || async {
        if operator.log().contains("hint key loaded") {
            Ok(())
        } else {
            Err("not yet".to_owned())
        }
    })
    .await;
    (world, operator)
}

/// FerrVault's count of reveals by the token labelled `label`.
fn reveals(world: &World, label: &str) -> u64 {
    world
        .fv
        .token_stats(label)
        .endpoints
        .get("reveal")
        .copied()
        .unwrap_or_default()
}

/// `name`'s value in `metric{label}` of `/metrics`.
async fn metric(operator: &Operator, series: &str) -> f64 {
    let (_, body) =
        ferrvault_sim::testkit::http::get(&format!("http://{}/metrics", operator.at.metrics)).await;
    body.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_default()
}

/// Waits until `metric{label}` reaches `at_least`.
async fn wait_metric(operator: &Operator, series: &str, at_least: f64) {
    poll_until(
        &format!("{series} >= {at_least}"),
        Duration::from_secs(20),
        || async {
            let value = metric(operator, series).await;
            if value >= at_least {
                Ok(())
            } else {
                Err(format!("{value}"))
            }
        },
    )
    .await;
}

/// Waits until no key of any queue is ready, running or overdue (`/debug/queue`): every pass
/// enqueued so far has run.
async fn wait_queues_settled(operator: &Operator) {
    let admin = operator.at.admin.expect("the admin server is enabled");
    let url = format!("http://{admin}/debug/queue");
    poll_until("the queues settled", Duration::from_secs(20), || async {
        let (_, body) = ferrvault_sim::testkit::http::get(&url).await;
        let document: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
        let busy: Vec<String> = document["controllers"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["keys"].as_array().cloned().unwrap_or_default())
            .filter(|k| match k["state"].as_str() {
                Some("delayed") => k["due_in_secs"].as_f64().is_none_or(|due| due <= 0.0),
                Some("idle" | "held") => false,
                _ => true,
            })
            .map(|k| k["key"].to_string())
            .collect();
        if busy.is_empty() {
            Ok(())
        } else {
            Err(format!("{busy:?}"))
        }
    })
    .await;
}

const HINT_SYNCS: &str = "ferrvault_secret_sync_trigger_total{trigger=\"hint\"}";

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_hint_should_bring_a_changed_value_in_seconds_with_one_reveal() {
    let (world, mut operator) = hinted_world().await;
    let baseline = Baseline::take(&operator);
    let victim = world.tenant(VICTIM);
    let before = reveals(&world, "victim");
    assert!(world.fv.put_secret(VICTIM_VAULT, "DB_URL", ROTATED));

    let hint = SignedHint::now(VICTIM_VAULT, &["DB_URL"], 0);
    assert_eq!(hint.send(&operator.hint_url()).await.0, 202);
    // refreshInterval is 1h: only the hint can bring the value this soon.
    poll_until(
        "the rotated value in the target",
        Duration::from_secs(10),
        || async {
            let target = victim.target("db").await.unwrap_or_default();
            match target.get("DB_URL").map(Vec::as_slice) {
                Some(value) if value == ROTATED.as_bytes() => Ok(()),
                _ => Err("not yet".to_owned()),
            }
        },
    )
    .await;
    wait_metric(&operator, HINT_SYNCS, 1.0).await;
    assert_eq!(reveals(&world, "victim") - before, 1, "one reveal for the hint");
    let accepted = "ferrvault_hints_total{result=\"accepted\"}";
    wait_metric(&operator, accepted, 1.0).await;
    assert_eq!(metric(&operator, accepted).await, 1.0);

    victim_keeps_syncing(&world, "during-hints").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[HINT_KEY, BODY_MARK, &hint.signature]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_replayed_stale_oversized_and_unknown_hints_should_reveal_nothing() {
    let (world, mut operator) = hinted_world().await;
    let baseline = Baseline::take(&operator);
    let url = operator.hint_url();
    attacker_connection(&world, "playground", &world.fv.url()).await;
    attacker_syncs(&world, "playground", "control").await;

    // A valid hint, taken and synced, whose request is then replayed.
    let taken = SignedHint::now(VICTIM_VAULT, &["DB_URL"], 0);
    assert_eq!(taken.send(&url).await.0, 202);
    wait_metric(&operator, HINT_SYNCS, 1.0).await;
    let victim_before = reveals(&world, "victim");

    let other_key = SignedHint::new(
        "another-key-of-the-same-length-000",
        json!({ "vault": VICTIM_VAULT, "names": [format!("{BODY_MARK}-forged")] }),
        now(),
    );
    let mut tampered = SignedHint::now(VICTIM_VAULT, &["DB_URL"], 1);
    tampered.body = serde_json::to_vec(&json!({ "vault": VICTIM_VAULT })).expect("JSON");
    let unsigned = SignedHint {
        signature: String::new(),
        ..SignedHint::now(VICTIM_VAULT, &[], 2)
    };
    let stale = SignedHint::new(
        HINT_KEY,
        json!({ "vault": VICTIM_VAULT, "names": [format!("{BODY_MARK}-stale")] }),
        now() - 360,
    );
    let future = SignedHint::new(
        HINT_KEY,
        json!({ "vault": VICTIM_VAULT, "names": [format!("{BODY_MARK}-future")] }),
        now() + 360,
    );
    let names: Vec<String> = (0..3_000).map(|n| format!("{BODY_MARK}-{n:016}")).collect();
    let oversized = SignedHint::new(HINT_KEY, json!({ "vault": VICTIM_VAULT, "names": names }), now());
    assert!(oversized.body.len() > 65 * 1024, "{} bytes", oversized.body.len());
    for (case, hint, status) in [
        ("another key", &other_key, 401),
        ("a body changed after signing", &tampered, 401),
        ("no signature", &unsigned, 401),
        ("replayed", &taken, 401),
        ("stale", &stale, 401),
        ("from the future", &future, 401),
        ("65 KiB", &oversized, 413),
    ] {
        assert_eq!(hint.send(&url).await.0, status, "{case}");
    }
    // Signed, for vaults the cluster does not read: answered as any other, nothing marked.
    let unknown = SignedHint::new(HINT_KEY, json!({ "vault": "no-such-vault" }), now());
    assert_eq!(unknown.send(&url).await.0, 202, "an unknown vault");

    // The control: a valid hint for the attacker's vault, right after them (in the same window
    // as the unknown vault's, or a later one). Once it is synced and the queues are settled,
    // whatever the hints before it enqueued has run.
    let control = SignedHint::now(PLAYGROUND_VAULT, &[], 4);
    assert_eq!(control.send(&url).await.0, 202);
    wait_metric(&operator, HINT_SYNCS, 2.0).await;
    wait_queues_settled(&operator).await;
    assert_eq!(
        reveals(&world, "victim"),
        victim_before,
        "no reveal for a refused hint"
    );
    // `/metrics` is rendered at most once a second: wait for the counts, then check them exact.
    for (result, count) in [
        ("unauthorized", 3.0),
        ("replayed", 1.0),
        ("stale", 2.0),
        ("too_large", 1.0),
        ("accepted", 3.0),
    ] {
        let series = format!("ferrvault_hints_total{{result=\"{result}\"}}");
        wait_metric(&operator, &series, count).await;
        assert_eq!(metric(&operator, &series).await, count, "{result}");
    }
    assert_eq!(
        metric(&operator, HINT_SYNCS).await,
        2.0,
        "the taken hint's sync and the control's only"
    );
    let target = world
        .tenant(ATTACKER)
        .target("control")
        .await
        .expect("the control synced");
    assert!(!target.is_empty());

    victim_keeps_syncing(&world, "during-hints").await;
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[HINT_KEY, BODY_MARK, &taken.signature]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_hints_should_cost_one_reveal_per_credential_and_a_flood_429s() {
    let (world, mut operator) = hinted_world().await;
    let victim = world.tenant(VICTIM);
    // A second object on the victim's token, and a second credential reading the same vault.
    victim
        .ferrvault_secret(
            "db-copy",
            json!({ "connectionRef": { "name": "fv" }, "vault": VICTIM_VAULT,
                    "selector": { "names": ["DB_URL"] }, "target": { "name": "db-copy" } }),
        )
        .await;
    victim
        .put_credential("platform-token", &[("token", PLATFORM_TOKEN)])
        .await;
    victim
        .connection(
            "fv-platform",
            json!({ "url": world.fv.url(), "tokenSecretRef": { "name": "platform-token", "key": "token" } }),
        )
        .await;
    victim
        .ferrvault_secret(
            "db-platform",
            json!({ "connectionRef": { "name": "fv-platform" }, "vault": VICTIM_VAULT,
                    "selector": { "names": ["DB_URL"] }, "target": { "name": "db-platform" } }),
        )
        .await;
    for name in ["db-copy", "db-platform"] {
        victim.wait_secret(name, "Synced").await;
    }
    let baseline = Baseline::take(&operator);
    let before = (reveals(&world, "victim"), reveals(&world, "platform"));
    assert!(world.fv.put_secret(VICTIM_VAULT, "DB_URL", ROTATED));

    let url = operator.hint_url();
    let hints: Vec<SignedHint> = (0..1_000)
        .map(|n| SignedHint::now(VICTIM_VAULT, &["DB_URL"], n))
        .collect();
    let flood = client();
    let answers: Vec<(u16, Option<String>)> = stream::iter(&hints)
        .map(|hint| hint.send_with(&flood, &url))
        .buffer_unordered(32)
        .collect()
        .await;
    let accepted = answers.iter().filter(|(status, _)| *status == 202).count();
    let limited: Vec<&Option<String>> = answers
        .iter()
        .filter(|(status, _)| *status == 429)
        .map(|(_, retry_after)| retry_after)
        .collect();
    assert_eq!(
        accepted + limited.len(),
        1_000,
        "every hint taken or rate-limited"
    );
    assert!(
        accepted >= 1 && !limited.is_empty(),
        "{accepted} taken, {} limited",
        limited.len()
    );
    assert!(
        limited.iter().all(|retry_after| retry_after.is_some()),
        "every 429 says when to come back"
    );

    victim_keeps_syncing(&world, "during-hints").await;
    wait_metric(&operator, HINT_SYNCS, 3.0).await;
    for name in ["db", "db-copy", "db-platform"] {
        let target = victim.target(name).await.expect("the target exists");
        assert_eq!(
            target.get("DB_URL").map(Vec::as_slice),
            Some(ROTATED.as_bytes()),
            "{name} holds the rotated value"
        );
    }
    let after = (reveals(&world, "victim"), reveals(&world, "platform"));
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 1),
        "one reveal per credential for {accepted} hints taken"
    );
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[HINT_KEY, BODY_MARK, &hints[0].signature]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_standby_replica_should_answer_503_and_the_same_hint_should_be_taken_by_the_leader() {
    let (world, mut operator) = hinted_world().await;
    let mut standby = Launch::new()
        .insecure_http()
        .hints()
        .replica("standby")
        .start(&world);
    poll_until(
        "the second replica on standby",
        Duration::from_secs(20),
        || async {
            match standby.role().await.as_deref() {
                Some("standby") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        },
    )
    .await;
    let before = reveals(&world, "victim");
    assert!(world.fv.put_secret(VICTIM_VAULT, "DB_URL", ROTATED));

    // A standby's hint would be lost: it says so, and spends nothing of the hint.
    let hint = SignedHint::now(VICTIM_VAULT, &["DB_URL"], 0);
    let (status, retry_after) = hint.send(&standby.hint_url()).await;
    assert_eq!(status, 503, "a standby does not take hints");
    assert!(retry_after.is_some(), "it says when to retry");
    assert_eq!(
        hint.send(&operator.hint_url()).await.0,
        202,
        "the retry reaches the leader"
    );
    wait_metric(&operator, HINT_SYNCS, 1.0).await;
    assert_eq!(reveals(&world, "victim") - before, 1);

    assert!(standby.is_running() && operator.is_running());
    finish(&world, &operator, &[HINT_KEY, BODY_MARK, &hint.signature]).await;
}
