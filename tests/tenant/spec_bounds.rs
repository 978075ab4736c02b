//! Sizes a tenant chooses (issue 34, point 2): what it writes into its specs and what its
//! FerrVault answers must not multiply into the shared operator's memory.
//!
//! - A 900,000-character `prefix` over 1,000 revealed keys (about 900 MB if built): refused at
//!   admission by the CRD's `maxLength`, and, written into storage past the schema, refused by
//!   the reconciler (`InvalidSpec`) before anything is revealed.
//! - A `jsonExpand` of a value whose long nested key names repeat under every leaf (200 MB if
//!   built, from a 120 KB answer): within every spec bound, so admitted; stopped at a Secret's
//!   1 MiB while it expands (`SecretTooLarge` naming the step).
//!
//! Each runs with the bounds yardstick ([`Baseline`], [`victim_keeps_syncing`]) and a positive
//! control: the same hostile FerrVault within the bounds syncs.

use ferrvault_operator::api::bounds::MAX_SECRET_KEY;
use serde_json::{Value, json};

use crate::harness::{
    ATTACKER, Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish, not_the_attackers, victim_syncs,
};

/// How many keys the hostile FerrVault reveals for the prefix attack.
const KEYS: usize = 1000;

/// The issue's prefix: 900,000 characters, over [`KEYS`] keys about 900 MB.
const PREFIX_LEN: usize = 900_000;

/// A FerrVaultSecret spec through the attacker's hostile connection with `transforms`.
fn hostile_spec(transforms: Value) -> Value {
    json!({
        "connectionRef": { "name": "hostile" },
        "vault": PLAYGROUND_VAULT,
        "transforms": transforms,
    })
}

/// `count` revealed keys `K0000`… with a short value each.
fn many_values(count: usize) -> Vec<(String, String)> {
    (0..count).map(|i| (format!("K{i:04}"), "v".to_owned())).collect()
}

fn borrowed(values: &[(String, String)]) -> Vec<(&str, &str)> {
    values.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_900_kb_prefix_over_many_keys_should_be_refused_at_admission_and_by_the_reconciler() {
    let world = World::start().await;
    let values = many_values(KEYS);
    let vault = Listener::start(Answer::vault(&borrowed(&values))).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    let evil = hostile_spec(json!([{ "type": "prefix", "value": "P".repeat(PREFIX_LEN) }]));
    let refusal = attacker
        .try_ferrvault_secret("evil", evil.clone())
        .await
        .expect_err("refused at admission");
    // The API server's words: the schema's error, then that the CEL rules did not run.
    let expected = format!(
        "FerrVaultSecret.ferrvault.com \"evil\" is invalid: [spec.transforms[0].value: Too long: may not \
         be more than {MAX_SECRET_KEY} bytes, <nil>: Invalid value: \"null\": some validation rules were \
         not checked because the object was invalid; correct the existing errors to complete validation]"
    );
    assert!(
        matches!(&refusal, kube::Error::Api(status) if status.code == 422 && status.message == expected),
        "refused by the CRD's maxLength: {refusal}"
    );
    // As an object stored before the schema had its bounds: straight into storage.
    world.store_unadmitted(ATTACKER, "evil", evil);
    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker.wait_secret("evil", "InvalidSpec").await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            "spec.transforms[0].value: longer than 253 characters (the CRD's maxLength); fix the object \
             (it bypassed the CRD schema)"
        )
    );
    assert_eq!(
        vault.reveals(),
        0,
        "nothing is revealed for a spec over its bounds"
    );
    assert_eq!(attacker.target("evil").await, None, "nothing written");
    baseline.assert_held(&mut operator).await;

    // Positive control: a prefix making the longest keys a Secret may have, over the same keys,
    // syncs.
    let longest = "P".repeat(MAX_SECRET_KEY - "K0000".len());
    let fits = hostile_spec(json!([{ "type": "prefix", "value": longest }]));
    attacker.ferrvault_secret("fits", fits).await;
    attacker.wait_secret("fits", "Synced").await;
    let written = attacker.target("fits").await.expect("the target exists");
    assert_eq!(written.len(), KEYS);
    assert!(written.keys().all(|key| key.starts_with(&longest)));
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}

/// A JSON object whose `levels` nested keys of `key_len` characters sit above `leaves` leaves:
/// every leaf's flattened name repeats all of them.
fn multiplying_json(levels: u8, key_len: usize, leaves: usize) -> String {
    let members: Vec<String> = (0..leaves).map(|i| format!(r#""l{i}":1"#)).collect();
    let mut json = format!("{{{}}}", members.join(","));
    for level in 0..levels {
        let key = char::from(b'a' + level).to_string().repeat(key_len);
        json = format!(r#"{{"{key}":{json}}}"#);
    }
    json
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multiplying_json_expand_from_a_hostile_ferrvault_should_stop_at_the_secret_limit() {
    let world = World::start().await;
    // Ten levels of 10,000-character keys over 2,000 leaves: 100 KB names, 200 MB if built.
    let config = multiplying_json(10, 10_000, 2000);
    let small = r#"{"host":"h","port":5432}"#;
    let vault = Listener::start(Answer::vault(&[("CONFIG", &config), ("SMALL", small)])).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    let evil = hostile_spec(json!([{ "type": "jsonExpand", "key": "CONFIG" }]));
    attacker.ferrvault_secret("evil", evil).await;
    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker.wait_secret("evil", "SecretTooLarge").await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            "transforms[0] (jsonExpand): output over the 1048576-byte limit of a Secret"
        )
    );
    assert_eq!(attacker.target("evil").await, None, "nothing written");
    baseline.assert_held(&mut operator).await;

    // Positive control: the same FerrVault, expanding its ordinary JSON value, syncs.
    let fits = hostile_spec(json!([{ "type": "jsonExpand", "key": "SMALL" }]));
    attacker.ferrvault_secret("fits", fits).await;
    attacker.wait_secret("fits", "Synced").await;
    let written = attacker.target("fits").await.expect("the target exists");
    assert_eq!(written["SMALL_HOST"], b"h");
    assert_eq!(written["SMALL_PORT"], b"5432");
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
