//! A connection's client certificate (`clientCertSecretRef`, issue 38 point 6) is a credential,
//! under the token's rules. The confused deputy: a tenant names another principal's TLS Secret
//! kept in its namespace (an ingress's, another team's client identity) so the operator would
//! present it, and points `url` at its own listener; with `--require-credential-opt-in` that
//! Secret is `CredentialNotOptedIn` and nothing is sent. A FerrVaultSecret may not overwrite a
//! Secret a connection presents. And sizes: a `tls.crt` or `tls.key` over its bound is refused
//! unparsed, naming the bound, while the operator stays within the bounds yardstick and another
//! tenant keeps syncing.

use ferrvault_sim::testkit::tls::TestPki;
use serde_json::json;

use crate::harness::{
    ATTACKER, ATTACKER_TOKEN, Answer, Launch, Listener, World, aimed_at,
    bounds::{Baseline, victim_keeps_syncing},
    finish, victim_syncs,
};

/// How many connections each oversized Secret is named by.
const HOSTILE: usize = 8;

/// A connection spec to `url` with the attacker's opted-in token `own-token`, presenting the
/// client certificate of Secret `cert`.
fn presenting(url: &str, cert: &str) -> serde_json::Value {
    json!({
        "url": url,
        "tokenSecretRef": { "name": "own-token", "key": "token" },
        "clientCertSecretRef": { "name": cert },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn another_principals_tls_secret_should_never_be_presented_unless_it_opted_in() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let operator = Launch::new()
        .insecure_http()
        .require_credential_opt_in()
        .start(&world);
    let identity = TestPki::new("another-teams-ca").client("another-team");
    let before = world
        .others_secret(
            ATTACKER,
            json!({
                "metadata": { "name": "ingress-tls" },
                "type": "kubernetes.io/tls",
                "stringData": { "tls.crt": identity.cert_pem, "tls.key": identity.key_pem },
            }),
        )
        .await;
    let attacker = world.attacker();
    attacker
        .put_credential("own-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .connection("deputy", presenting(listener.url(), "ingress-tls"))
        .await;
    let refused = attacker.wait_connection("deputy", "CredentialNotOptedIn").await;
    assert!(
        refused.message.starts_with("client certificate Secret")
            && refused.message.contains("tenant-evil/ingress-tls")
            && refused.message.contains("nothing was sent"),
        "{}",
        refused.message
    );

    // Positive control: the attacker's own opted-in identity is used.
    let own = TestPki::new("attackers-ca").client("attacker");
    attacker
        .put_credential(
            "own-cert",
            &[("tls.crt", &own.cert_pem), ("tls.key", &own.key_pem)],
        )
        .await;
    let control = Listener::start(Answer::Ok).await;
    attacker
        .connection("own", presenting(control.url(), "own-cert"))
        .await;
    attacker.wait_connection("own", "Reachable").await;
    // A Secret a connection presents is never a FerrVaultSecret's target.
    attacker
        .ferrvault_secret("overwrite", aimed_at("own", "own-cert"))
        .await;
    attacker
        .wait_secret("overwrite", "TargetIsConnectionSecret")
        .await;

    listener.assert_untouched("the attacker's listener");
    world.assert_unchanged(&before).await;
    finish(&world, &operator, &[&identity.key_pem, &own.key_pem]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_client_certificate_or_key_should_be_refused_unparsed_naming_its_bound() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let mut operator = Launch::new().insecure_http().start(&world);
    victim_syncs(&world, &world.fv.url()).await;
    let baseline = Baseline::take(&operator);

    let identity = TestPki::new("attackers-ca").client("attacker");
    // 900 KiB of certificates (the API server's Secret bound is 1 MiB), and a 60 KiB key.
    let chain = identity.cert_pem.repeat(900 * 1024 / identity.cert_pem.len());
    let key = identity.key_pem.repeat(60 * 1024 / identity.key_pem.len());
    let attacker = world.attacker();
    attacker
        .put_secret("own-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .put_secret(
            "long-chain",
            &[("tls.crt", &chain), ("tls.key", &identity.key_pem)],
        )
        .await;
    attacker
        .put_secret("long-key", &[("tls.crt", &identity.cert_pem), ("tls.key", &key)])
        .await;
    for i in 0..HOSTILE {
        attacker
            .connection(&format!("chain-{i}"), presenting(listener.url(), "long-chain"))
            .await;
        attacker
            .connection(&format!("key-{i}"), presenting(listener.url(), "long-key"))
            .await;
    }

    victim_keeps_syncing(&world, "during-attack").await;
    for i in 0..HOSTILE {
        attacker
            .wait_connection_saying(
                &format!("chain-{i}"),
                "ClientCertificateUnreadable",
                "over the bound of 64 KiB",
            )
            .await;
        attacker
            .wait_connection_saying(
                &format!("key-{i}"),
                "ClientCertificateUnreadable",
                "over the bound of 16 KiB",
            )
            .await;
    }
    listener.assert_untouched("the attacker's listener");
    baseline.assert_held(&mut operator).await;
    finish(&world, &operator, &[&identity.key_pem]).await;
}
