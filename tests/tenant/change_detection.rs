//! A hostile FerrVault answering `list` (issue 38, "Bad input"): a connection with
//! `changeDetection: {mode: Versions}` pointed at the attacker's server, whose `list` names
//! 20,000 secrets (over the decoder's 10,000) changed at the start of year 9999. The answer is
//! refused while it is decoded, the connection says so (`ChangeDetection=False`/
//! `ResponseTooLarge`), its FerrVaultSecret still syncs by polling, the operator's memory stays
//! within the yardstick and another tenant keeps syncing.

use serde_json::json;

use crate::harness::{
    ATTACKER_TOKEN, Answer, Launch, Listener, World, aimed_at,
    bounds::{Baseline, victim_keeps_syncing},
    finish,
    listener::{Generated, LIST_PATH},
    victim_syncs,
};

#[tokio::test(flavor = "multi_thread")]
async fn a_list_of_20_000_future_dated_names_should_be_refused_as_response_too_large() {
    let world = World::start().await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let vault = Listener::start(Answer::listing(&[("DB_URL", "evil")], Generated::listing(20_000))).await;
    let attacker = world.attacker();
    attacker
        .put_secret("hostile-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .connection(
            "hostile",
            json!({
                "url": vault.url(),
                "tokenSecretRef": { "name": "hostile-token", "key": "token" },
                "changeDetection": { "mode": "Versions", "interval": "5s" },
            }),
        )
        .await;
    attacker
        .ferrvault_secret("evil", aimed_at("hostile", "evil"))
        .await;

    victim_keeps_syncing(&world, "during-attack").await;
    let refused = attacker
        .wait_connection_condition("hostile", "ChangeDetection", "ResponseTooLarge")
        .await;
    attacker.wait_secret("evil", "Synced").await;
    baseline.assert_held(&mut operator).await;
    assert_eq!(refused.status, "False");
    assert!(refused.message.contains("10,000 names"), "{}", refused.message);
    let asked = String::from_utf8_lossy(&vault.received())
        .matches(&format!("GET {LIST_PATH} "))
        .count();
    assert!(asked >= 1, "the hostile list was asked");
    finish(&world, &operator, &[]).await;
}
