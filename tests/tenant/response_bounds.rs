//! A hostile FerrVault answering with size (issue 34, point 1): the tenant controls `spec.url`,
//! so its server decides how much the operator reads. Error bodies of 8 MiB on the probe and the
//! reveal, a reveal of 250,000 keys, a reveal listing 250,000 or 4,000 missing names: the
//! operator reads no error body past 64 KiB, refuses an answer over its bounds with
//! `ResponseTooLarge` naming the bound, and shows a long missing list as its first 100 names and
//! a count, while its memory stays within the bounds yardstick and another tenant keeps syncing.
//! Forty connections each answering a 1.2 MB value, again every second: what the operator keeps
//! of their answers for the rest of their waves stays within its budget.

use std::time::Duration;

use ferrvault_operator::api::{FerrVaultSecret, FerrVaultSecretStatus};
use ferrvault_sim::testkit::poll_until;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Api;
use serde_json::json;

use crate::harness::{
    ATTACKER, ATTACKER_TOKEN, Answer, Launch, Listener, ORG, PROJECT, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    listener::Generated,
    tenant::SHOWS_WITHIN,
    victim_syncs,
};

/// How many hostile connections (or vaults) an attack uses at once.
const HOSTILE: usize = 4;

/// How long an attack that runs for a number of rounds may take, on a loaded machine.
const ATTACK_LASTS_WITHIN: Duration = Duration::from_secs(60);

/// FerrVaultSecret `name` of the attacker's, reading all of `vault` through `connection`.
fn reading(connection: &str, vault: &str, name: &str) -> serde_json::Value {
    json!({
        "connectionRef": { "name": connection },
        "vault": vault,
        "target": { "name": name },
    })
}

/// The Ready=False reasons a FerrVault answer can lead to: the one each attack expects, and the
/// ones it ends in when a bound is missing (a key flood then fails as `SecretTooLarge`, a flood
/// of missing names as `MissingKeys`).
const ANSWERED: [&str; 4] = ["ResponseTooLarge", "MissingKeys", "SecretTooLarge", "Unreachable"];

/// The attacker's FerrVaultSecret `name`'s status once FerrVault's answer made it Ready=False
/// ([`ANSWERED`]), and that condition: the yardstick is held before the reason is checked, so an
/// attack that a missing bound lets through fails on memory rather than on a reason never shown.
async fn failed(world: &World, name: &str) -> (FerrVaultSecretStatus, Condition) {
    let api = Api::<FerrVaultSecret>::namespaced(world.admin.clone(), ATTACKER);
    poll_until(
        &format!("{ATTACKER}/{name} Ready=False"),
        SHOWS_WITHIN,
        || async {
            let status = api
                .get_status(name)
                .await
                .map_err(|e| e.to_string())?
                .status
                .unwrap_or_default();
            let ready = status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready" && c.status == "False" && ANSWERED.contains(&c.reason.as_str()))
                .cloned()
                .ok_or_else(|| format!("{:?}", status.conditions))?;
            Ok((status, ready))
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn error_bodies_of_8_mib_should_cost_the_operator_no_more_than_their_first_64_kib() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let attacker = world.attacker();
    let mut listeners = Vec::new();
    for i in 0..HOSTILE {
        // Half answer 500 (retried by the client: three bodies a call), half 400.
        let status = if i % 2 == 0 { 500 } else { 400 };
        let listener = Listener::start(Answer::Raw {
            status,
            body: Generated::zeros(8 << 20),
        })
        .await;
        attacker_connection(&world, &format!("hostile-{i}"), listener.url()).await;
        attacker
            .ferrvault_secret(
                &format!("evil-{i}"),
                reading(&format!("hostile-{i}"), "any", &format!("evil-{i}")),
            )
            .await;
        listeners.push(listener);
    }

    victim_keeps_syncing(&world, "during-attack").await;
    let mut shown = Vec::new();
    for i in 0..HOSTILE {
        let reveal = attacker.wait_secret(&format!("evil-{i}"), "Unreachable").await;
        let probe = attacker
            .wait_connection(&format!("hostile-{i}"), "Unreachable")
            .await;
        shown.push((reveal.message, probe.message));
    }
    baseline.assert_held(&mut operator).await;
    for (i, (reveal, probe)) in shown.iter().enumerate() {
        // The status text, nothing of the body.
        let expected = if i % 2 == 0 {
            "ferrvault server error 500 after 3 attempt(s): internal server error"
        } else {
            "ferrvault api error 400: bad request"
        };
        assert_eq!((reveal.as_str(), probe.as_str()), (expected, expected));
    }
    assert!(
        listeners.iter().all(|l| l.reveals() > 0),
        "every hostile FerrVault was asked"
    );
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cloud_reveal_of_250_000_keys_should_be_refused_as_response_too_large() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    // Cloud mode, `"K<i>":""` a key: 3 MB of JSON, within the 4 MiB body cap, so only the key
    // bound stops it.
    let vault = Listener::start(Answer::Reveal(Generated::secrets(250_000))).await;
    let attacker = world.attacker();
    attacker
        .put_secret("hostile-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .connection(
            "hostile",
            json!({
                "mode": "cloud",
                "url": vault.url(),
                "organization": ORG,
                "tokenSecretRef": { "name": "hostile-token", "key": "token" },
            }),
        )
        .await;
    // One vault each: no two of them share a request.
    for i in 0..HOSTILE {
        let mut spec = reading("hostile", &format!("vault-{i}"), &format!("flood-{i}"));
        spec["project"] = json!(PROJECT);
        attacker.ferrvault_secret(&format!("flood-{i}"), spec).await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    let mut refused = Vec::new();
    for i in 0..HOSTILE {
        refused.push(failed(&world, &format!("flood-{i}")).await.1);
    }
    baseline.assert_held(&mut operator).await;
    for (i, condition) in refused.iter().enumerate() {
        assert_eq!(
            (condition.reason.as_str(), condition.message.as_str()),
            (
                "ResponseTooLarge",
                "ferrvault answer refused, more than 4096 keys: over the operator's bound, nothing of it was \
                 used"
            )
        );
        assert!(
            attacker.target(&format!("flood-{i}")).await.is_none(),
            "nothing was written"
        );
    }
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_missing_list_should_show_its_first_hundred_names_and_a_count() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    // 250,000 names: over the key bound, refused. 4,000: within it, shown as 100 and a count.
    let flood = Listener::start(Answer::Reveal(Generated::missing(250_000))).await;
    let long = Listener::start(Answer::Reveal(Generated::missing(4_000))).await;
    let attacker = world.attacker();
    attacker_connection(&world, "flood", flood.url()).await;
    attacker_connection(&world, "long", long.url()).await;
    for i in 0..HOSTILE {
        attacker
            .ferrvault_secret(
                &format!("flood-{i}"),
                reading("flood", &format!("vault-{i}"), &format!("flood-{i}")),
            )
            .await;
    }
    attacker
        .ferrvault_secret("long", reading("long", "any", "long"))
        .await;

    victim_keeps_syncing(&world, "during-attack").await;
    let mut refused = Vec::new();
    for i in 0..HOSTILE {
        refused.push(failed(&world, &format!("flood-{i}")).await.1);
    }
    let (status, missing) = failed(&world, "long").await;
    baseline.assert_held(&mut operator).await;
    for condition in &refused {
        assert_eq!(condition.reason, "ResponseTooLarge", "{}", condition.message);
        assert!(
            condition.message.contains("more than 4096 keys"),
            "{}",
            condition.message
        );
    }
    assert_eq!(missing.reason, "MissingKeys");
    assert!(
        missing
            .message
            .starts_with("missing in FerrVault: [M000000 M000001 ")
            && missing.message.ends_with(" M000099] (and 3900 more)"),
        "{}",
        missing.message
    );
    assert_eq!(status.missing_keys.len(), 101, "{:?}", status.missing_keys);
    assert_eq!(
        (status.missing_keys[0].as_str(), status.missing_keys[100].as_str()),
        ("M000000", "(and 3900 more)")
    );
    assert_eq!(
        attacker
            .target("long")
            .await
            .and_then(|data| data.get("FOUND").cloned()),
        Some(b"found".to_vec()),
        "what was found is written, as with any missing key"
    );
    finish(&world, &operator, &[]).await;
}

/// How many of the attacker's connections answer a large value: one URL, a token each, so each
/// is a wave of its own (and is paced on its own).
const LARGE_ANSWERS: usize = 40;

/// The value each of them answers: over the 1 MiB a Secret may hold, so every pass fails and is
/// retried, and within the 2 MiB a reveal may decode, so the answer is used and may be kept for
/// its wave. (Answers of 2 MB cost the operator about 29 MiB on their way through the reveals in
/// flight, before anything is kept: too close to the yardstick to tell what the budget holds.)
const LARGE_VALUE_BYTES: usize = 1_200_000;

/// How many rounds of reveals the attack runs for (every connection once a round, about a
/// second apart): kept answers pile up while it goes on.
const ROUNDS: usize = 4;

#[tokio::test(flavor = "multi_thread")]
async fn forty_waves_answering_1_2_mb_should_keep_no_more_than_the_budget() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    // Forty waves answering 1.2 MB, retried every second: about 50 MB if every answer were kept.
    // One listener, so the attack costs answers, not forty HTTP clients.
    let vault = Listener::start(Answer::Reveal(Generated::value(LARGE_VALUE_BYTES))).await;
    let attacker = world.attacker();
    let names: Vec<String> = (0..LARGE_ANSWERS).map(|i| format!("large-{i}")).collect();
    for name in &names {
        let token = format!("{name}-token");
        attacker
            .put_secret(&token, &[("token", &format!("{ATTACKER_TOKEN}_{name}"))])
            .await;
        attacker
            .connection(
                name,
                json!({ "url": vault.url(), "tokenSecretRef": { "name": token, "key": "token" } }),
            )
            .await;
        let mut spec = reading(name, "any", name);
        spec["refreshInterval"] = json!("1s");
        attacker.ferrvault_secret(name, spec).await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    poll_until(
        &format!("{ROUNDS} rounds of reveals from the hostile FerrVault"),
        ATTACK_LASTS_WITHIN,
        || async {
            let reveals = vault.reveals();
            (reveals >= ROUNDS * LARGE_ANSWERS)
                .then_some(())
                .ok_or_else(|| format!("{reveals} reveals"))
        },
    )
    .await;
    let mut refused = Vec::new();
    for name in &names {
        refused.push(failed(&world, name).await.1);
    }
    baseline.assert_held(&mut operator).await;
    for condition in &refused {
        assert_eq!(condition.reason, "SecretTooLarge", "{}", condition.message);
    }
    finish(&world, &operator, &[]).await;
}
