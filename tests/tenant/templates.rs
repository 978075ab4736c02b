//! A template that multiplies (issue 36 point 7): a hostile FerrVault answers one 256 KiB value
//! and the attacker's `target.template` repeats it 1,200 times in one key (a 7,200-character
//! template, within every spec bound, so admitted): 300 MiB if rendered. The output's size is
//! computed from the template and the value's length before anything is built, and refused
//! (`SecretTooLarge`); the operator's memory does not grow, the victim keeps syncing.
//!
//! Positive control: the same FerrVault and value through a template within the bound syncs.

use serde_json::{Value, json};

use crate::harness::{
    Answer, Launch, Listener, PLAYGROUND_VAULT, World, attacker_connection,
    bounds::{Baseline, victim_keeps_syncing},
    finish, not_the_attackers, victim_syncs,
};

/// The hostile value's length: 256 KiB.
const VALUE_LEN: usize = 256 * 1024;

/// How often the template repeats it: 1,200 × 256 KiB = 300 MiB.
const REPEATS: usize = 1200;

/// A FerrVaultSecret spec through the attacker's hostile connection writing only `template`.
fn templated(template: Value) -> Value {
    json!({
        "connectionRef": { "name": "hostile" },
        "vault": PLAYGROUND_VAULT,
        "target": { "template": { "data": template, "mergePolicy": "Replace" } },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multiplying_template_should_be_refused_before_it_is_built() {
    let world = World::start().await;
    let big = "x".repeat(VALUE_LEN);
    let vault = Listener::start(Answer::vault(&[("BIG", &big)])).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);
    let attacker = world.attacker();
    attacker_connection(&world, "hostile", vault.url()).await;

    let evil = templated(json!({ "OUT": "${BIG}".repeat(REPEATS) }));
    attacker.ferrvault_secret("evil", evil).await;
    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker.wait_secret("evil", "SecretTooLarge").await;
    baseline.assert_held(&mut operator).await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            format!(
                "target.template: output of up to {} bytes could be over the 1048576-byte limit of a \
                 Secret; not built",
                "OUT".len() + REPEATS * VALUE_LEN
            )
            .as_str()
        )
    );
    assert_eq!(attacker.target("evil").await, None, "nothing written");

    // Positive control: the same value, rendered once (and escaped: `urlquery` may triple it,
    // still within the limit), syncs.
    let fits = templated(json!({ "OUT": "[${BIG|trim|urlquery}]" }));
    attacker.ferrvault_secret("fits", fits).await;
    attacker.wait_secret("fits", "Synced").await;
    let written = attacker.target("fits").await.expect("the target exists");
    assert_eq!(written["OUT"].len(), VALUE_LEN + 2);
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
