//! Plain `http://` as an attack vector: a tenant's URL that would carry tokens and values in
//! clear. Without `--allow-insecure-http` (the chart's default) it is refused before any
//! request; the legitimate path is https (here with the tenant's own CA bundle).

use serde_json::json;

use crate::harness::{
    ATTACKER_TOKEN, Answer, Launch, Listener, ORG, PLAYGROUND_VAULT, PROJECT, VICTIM_VAULT, World, finish,
    victim_syncs,
};

#[tokio::test(flavor = "multi_thread")]
async fn an_http_url_without_the_opt_in_should_be_refused_before_anything_is_sent() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let operator = Launch::new().start(&world);
    let attacker = world.attacker();
    attacker.put_secret("token", &[("token", ATTACKER_TOKEN)]).await;
    attacker
        .connection(
            "clear",
            json!({ "url": listener.url(), "tokenSecretRef": { "name": "token", "key": "token" } }),
        )
        .await;
    attacker.sync("clear", "clear", PLAYGROUND_VAULT, None).await;

    let refused = attacker.wait_connection("clear", "InsecureUrl").await;
    assert!(
        refused.message.contains("--allow-insecure-http") && refused.message.contains("nothing was sent"),
        "{}",
        refused.message
    );
    attacker.wait_secret("clear", "InsecureUrl").await;
    listener.assert_untouched("the plain-http listener");
    // Only an edit fixes the spec: no retry timer on either object.
    operator
        .wait_no_timer("ferrvaultconnection:tenant-evil/clear")
        .await;
    operator.wait_no_timer("ferrvaultsecret:tenant-evil/clear").await;

    // An operator without a cluster identity refuses to lend one.
    attacker
        .connection(
            "borrow",
            json!({ "mode": "cloud", "url": world.fv_https.url(), "organization": ORG, "oidc": {} }),
        )
        .await;
    attacker
        .sync("borrowed", "borrow", VICTIM_VAULT, Some(PROJECT))
        .await;
    let refused = attacker
        .wait_connection("borrow", "ClusterIdentityUnavailable")
        .await;
    assert!(
        refused.message.contains("--oidc-cluster-id"),
        "{}",
        refused.message
    );
    attacker
        .wait_secret("borrowed", "ClusterIdentityUnavailable")
        .await;

    // Positive control: https with the tenant's CA bundle syncs without the opt-in.
    victim_syncs(&world, world.fv_https.url()).await;
    finish(&world, &operator, &[]).await;
}
