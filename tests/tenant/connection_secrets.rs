//! A target that is a FerrVaultConnection's token or CA Secret: written from a vault the attacker
//! controls, it would decide which credential a connection sends and which CA it trusts. The
//! attacker aims FerrVaultSecrets, through its hostile FerrVault, at the token Secret and the CA
//! bundle Secret of the namespace's connection `fv-tls`, and at the token Secret connection
//! `later` names but nobody created yet. Nothing is written or planted, nothing revealed, and
//! `fv-tls` keeps its own credential and CA.

use serde_json::json;

use crate::harness::{
    ATTACKER, ATTACKER_TOKEN, Answer, Launch, Listener, PLAYGROUND_VAULT, World, aimed_at,
    attacker_connection, attacker_syncs, finish, not_the_attackers, tls_front::TlsFront, victim_syncs,
};

/// What the attacker's FerrVault reveals: a token and a CA of its choosing.
const PLANTED_TOKEN: &str = "fvsat_planted_by_the_attacker";
const PLANTED_CA: &str = "-----BEGIN CERTIFICATE-----\nplanted\n-----END CERTIFICATE-----\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_connections_token_or_ca_secret_should_never_be_written_or_planted() {
    let world = World::start().await;
    let vault = Listener::start(Answer::vault(&[("token", PLANTED_TOKEN), ("ca.crt", PLANTED_CA)])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    // The namespace's connection over TLS: its token and its CA from Secrets.
    let ca = String::from_utf8(TlsFront::CA_PEM.to_vec()).expect("PEM is text");
    attacker
        .put_secret("fv-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker.put_secret("fv-ca", &[("ca.crt", &ca)]).await;
    attacker
        .connection(
            "fv-tls",
            json!({
                "url": world.fv_https.url(),
                "tokenSecretRef": { "name": "fv-token", "key": "token" },
                "caBundleSecretRef": { "name": "fv-ca", "key": "ca.crt" },
            }),
        )
        .await;
    attacker
        .connection(
            "later",
            json!({ "url": world.fv.url(), "tokenSecretRef": { "name": "later-token", "key": "token" } }),
        )
        .await;
    attacker.wait_connection("fv-tls", "Reachable").await;
    let token = world.secret(ATTACKER, "fv-token").await;
    let ca_bundle = world.secret(ATTACKER, "fv-ca").await;
    attacker_connection(&world, "hostile", vault.url()).await;

    for (name, target) in [
        ("steal-token", "fv-token"),
        ("steal-ca", "fv-ca"),
        ("plant-token", "later-token"),
    ] {
        attacker.ferrvault_secret(name, aimed_at("hostile", target)).await;
    }
    let refused = attacker
        .wait_secret("steal-token", "TargetIsConnectionSecret")
        .await;
    assert_eq!(
        (refused.status.as_str(), refused.message.as_str()),
        (
            "False",
            r#"Secret fv-token is the token Secret of FerrVaultConnection "fv-tls": a FerrVaultSecret never writes a connection's credentials"#
        )
    );
    let refused = attacker.wait_secret("steal-ca", "TargetIsConnectionSecret").await;
    assert_eq!(
        refused.message,
        r#"Secret fv-ca is the CA bundle Secret of FerrVaultConnection "fv-tls": a FerrVaultSecret never writes a connection's credentials"#
    );
    let refused = attacker
        .wait_secret("plant-token", "TargetIsConnectionSecret")
        .await;
    assert!(
        refused
            .message
            .contains(r#"token Secret of FerrVaultConnection "later""#),
        "{}",
        refused.message
    );
    assert_eq!(vault.reveals(), 0, "a refused target costs no FerrVault request");
    assert_eq!(
        attacker.target("later-token").await,
        None,
        "a connection's missing token Secret is not planted"
    );

    // Positive controls: `fv-tls` still syncs with its own token and CA, and the hostile
    // FerrVault does write a Secret no connection reads.
    let through_tls = json!({ "connectionRef": { "name": "fv-tls" }, "vault": PLAYGROUND_VAULT });
    attacker.ferrvault_secret("app", through_tls).await;
    attacker.wait_secret("app", "Synced").await;
    assert_eq!(
        attacker.target("app").await.expect("app's target")["GREETING"],
        b"hello"
    );
    let own = attacker_syncs(&world, "hostile", "mine").await;
    assert_eq!(own["token"], PLANTED_TOKEN.as_bytes());
    victim_syncs(&world, &world.fv.url()).await;
    world.assert_unchanged(&token).await;
    world.assert_unchanged(&ca_bundle).await;
    vault.assert_nothing_of("the attacker's FerrVault", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
