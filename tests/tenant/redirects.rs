//! Redirects as an attack vector: a FerrVault URL answering `307` to a second host. Followed, a
//! reveal would carry its bearer there, and the OIDC exchange (a 307 keeps the method and the
//! body) would re-POST the operator's projected token there. No call follows a redirect.

use serde_json::json;

use crate::harness::{
    ATTACKER_TOKEN, Answer, CLUSTER_TOKEN_PREFIX, Launch, Listener, ORG, PLAYGROUND_VAULT, PROJECT, SA_TOKEN,
    VICTIM_DB_URL, VICTIM_TOKEN, VICTIM_VAULT, World, finish, victim_syncs,
    victim_syncs_with_the_cluster_identity,
};

/// The second host, recording, and a first host redirecting everything to it.
async fn redirect_pair() -> (Listener, Listener) {
    let second = Listener::start(Answer::Ok).await;
    let first = Listener::start(Answer::RedirectTo(second.url().to_owned())).await;
    (first, second)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reveal_answered_with_a_redirect_should_fail_and_the_second_host_should_receive_nothing() {
    let world = World::start().await;
    let (redirector, second) = redirect_pair().await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker.put_secret("token", &[("token", ATTACKER_TOKEN)]).await;
    attacker
        .connection(
            "bounce",
            json!({ "url": redirector.url(), "tokenSecretRef": { "name": "token", "key": "token" } }),
        )
        .await;
    attacker.sync("bounced", "bounce", PLAYGROUND_VAULT, None).await;

    let refused = attacker.wait_secret("bounced", "Redirected").await;
    assert!(
        refused.message.contains("reveal with 307") && refused.message.contains("never followed"),
        "{}",
        refused.message
    );
    let probe = attacker.wait_connection("bounce", "Redirected").await;
    assert!(
        probe.message.contains("health probe with 307"),
        "{}",
        probe.message
    );
    second.assert_untouched("the host the redirect named");
    assert!(
        redirector.connections() > 0,
        "the reveal did reach the redirecting URL"
    );
    // The server's answer failed, not the spec: retried on the failure timer.
    operator.wait_timer("ferrvaultsecret:tenant-evil/bounced").await;
    redirector.assert_nothing_of(
        "the redirecting URL",
        &[SA_TOKEN, CLUSTER_TOKEN_PREFIX, VICTIM_TOKEN, VICTIM_DB_URL],
    );

    // Positive control: the same tenant's token at the real FerrVault syncs, and so does the victim.
    attacker
        .connection(
            "direct",
            json!({ "url": world.fv.url(), "tokenSecretRef": { "name": "token", "key": "token" } }),
        )
        .await;
    attacker.sync("direct", "direct", PLAYGROUND_VAULT, None).await;
    attacker.wait_secret("direct", "Synced").await;
    victim_syncs(&world, &world.fv.url()).await;
    finish(&world, &operator, &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oidc_exchange_answered_with_a_redirect_should_not_resend_the_projected_token() {
    let world = World::start().await;
    let (redirector, second) = redirect_pair().await;
    // The redirecting URL is trusted: it stands for a FerrVault (or a proxy in front of it)
    // that redirects, the case where following would hand the token to whoever it names.
    let operator = Launch::new()
        .insecure_http()
        .cluster_identity(
            &world.projected_token_path(),
            &[redirector.url(), &world.fv.url()],
        )
        .start(&world);
    let attacker = world.attacker();
    attacker
        .connection(
            "bounce",
            json!({ "mode": "cloud", "url": redirector.url(), "organization": ORG, "oidc": {} }),
        )
        .await;
    attacker
        .sync("bounced", "bounce", VICTIM_VAULT, Some(PROJECT))
        .await;

    let refused = attacker.wait_connection("bounce", "Redirected").await;
    assert!(
        refused.message.contains("OIDC exchange with 307"),
        "{}",
        refused.message
    );
    attacker.wait_secret("bounced", "Redirected").await;
    second.assert_untouched("the host the redirect named");
    assert!(
        String::from_utf8_lossy(&redirector.received()).contains("/api/v1/clusters/oidc-exchange"),
        "the exchange did reach the redirecting (trusted) URL"
    );

    // Positive control: the exchange at the real FerrVault works and the victim syncs.
    victim_syncs_with_the_cluster_identity(&world, &world.fv.url()).await;
    finish(&world, &operator, &[]).await;
}
