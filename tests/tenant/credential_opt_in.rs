//! The confused deputy: a tenant that may create FerrVaultConnections names, as its token or CA
//! bundle, a Secret of its namespace that belongs to another principal (a database password
//! another team's controller keeps there), and points `url` at its own listener. Without a
//! guard the operator reads that Secret with its own privileges and sends it as the bearer. With
//! `--require-credential-opt-in` only Secrets their owner opted in (label
//! `ferrvault.com/credential: "true"`, or a `ferrvault.com/` type) are credentials: the others
//! are `CredentialNotOptedIn` and nothing is sent; without the flag, behaviour is as before.

use serde_json::json;

use crate::harness::{
    ATTACKER, ATTACKER_TOKEN, Answer, Launch, Listener, PLAYGROUND_VAULT, World, aimed_at, finish,
    not_the_attackers, victim_syncs,
};

/// Another principal's password, kept in the attacker's namespace by someone else.
const OTHERS_PASSWORD: &str = "TENANTCHECK-others-db-password";

/// The administrator (standing for another team's controller) keeps a password Secret in the
/// attacker's namespace, without the opt-in label.
async fn others_password(world: &World) -> k8s_openapi::api::core::v1::Secret {
    world
        .others_secret(
            ATTACKER,
            json!({ "metadata": { "name": "db-credentials" }, "stringData": { "password": OTHERS_PASSWORD } }),
        )
        .await
}

/// A connection spec to `url` with the token at `token` (`secret/key`).
fn connection_to(url: &str, (secret, key): (&str, &str)) -> serde_json::Value {
    json!({ "url": url, "tokenSecretRef": { "name": secret, "key": key } })
}

#[tokio::test(flavor = "multi_thread")]
async fn another_principals_secret_should_not_be_sent_anywhere_unless_it_opted_in() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let operator = Launch::new()
        .insecure_http()
        .require_credential_opt_in()
        .start(&world);
    let before = others_password(&world).await;
    let attacker = world.attacker();
    // The confused deputy: another principal's password as the bearer, sent to the attacker.
    attacker
        .connection(
            "deputy",
            connection_to(listener.url(), ("db-credentials", "password")),
        )
        .await;
    attacker
        .ferrvault_secret("loot", aimed_at("deputy", "loot"))
        .await;
    // The same through the CA bundle, with an opted-in token of its own.
    attacker
        .put_credential("own-token", &[("token", ATTACKER_TOKEN)])
        .await;
    let mut with_ca = connection_to(listener.url(), ("own-token", "token"));
    with_ca["caBundleSecretRef"] = json!({ "name": "db-credentials", "key": "password" });
    attacker.connection("deputy-ca", with_ca).await;

    let refused = attacker.wait_connection("deputy", "CredentialNotOptedIn").await;
    assert_eq!(refused.status, "False");
    assert!(
        refused.message.contains("tenant-evil/db-credentials")
            && refused.message.contains("ferrvault.com/credential=true")
            && refused.message.contains("nothing was sent"),
        "names the Secret and the opt-in: {}",
        refused.message
    );
    attacker.wait_secret("loot", "CredentialNotOptedIn").await;
    operator.wait_no_timer("ferrvaultsecret:tenant-evil/loot").await;
    let refused = attacker
        .wait_connection("deputy-ca", "CredentialNotOptedIn")
        .await;
    assert!(
        refused.message.starts_with("CA bundle Secret"),
        "{}",
        refused.message
    );

    // Positive controls: an opted-in token (label) and a ferrvault.com/ typed one sync, and a
    // Secret labelled after its connection was refused is picked up by the watch, no timer.
    attacker
        .connection("own", connection_to(&world.fv.url(), ("own-token", "token")))
        .await;
    attacker
        .ferrvault_secret(
            "mine",
            json!({ "connectionRef": { "name": "own" }, "vault": PLAYGROUND_VAULT }),
        )
        .await;
    attacker.wait_secret("mine", "Synced").await;
    attacker
        .put_secret_as(
            "typed-token",
            json!({ "type": "ferrvault.com/token" }),
            &[("token", ATTACKER_TOKEN)],
        )
        .await;
    attacker
        .connection("typed", connection_to(&world.fv.url(), ("typed-token", "token")))
        .await;
    attacker.wait_connection("typed", "Reachable").await;
    attacker
        .put_secret("late-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .connection("late", connection_to(&world.fv.url(), ("late-token", "token")))
        .await;
    attacker.wait_connection("late", "CredentialNotOptedIn").await;
    attacker
        .label_secret("late-token", "ferrvault.com/credential", "true")
        .await;
    attacker.wait_connection("late", "Reachable").await;
    victim_syncs(&world, &world.fv.url()).await;

    listener.assert_untouched("the attacker's listener");
    world.assert_unchanged(&before).await;
    finish(&world, &operator, &[OTHERS_PASSWORD]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_flag_any_secret_of_the_namespace_should_stay_a_credential_as_before() {
    let world = World::start().await;
    let listener = Listener::start(Answer::vault(&[("GREETING", "from the listener")])).await;
    let operator = Launch::new().insecure_http().start(&world);
    let attacker = world.attacker();
    attacker
        .put_secret("plain-token", &[("token", ATTACKER_TOKEN)])
        .await;
    attacker
        .connection("plain", connection_to(listener.url(), ("plain-token", "token")))
        .await;
    attacker.wait_connection("plain", "Reachable").await;
    attacker
        .ferrvault_secret("to-listener", aimed_at("plain", "to-listener"))
        .await;
    attacker.wait_secret("to-listener", "Synced").await;
    assert!(
        String::from_utf8_lossy(&listener.received()).contains(ATTACKER_TOKEN),
        "an unlabelled Secret is still sent as the bearer"
    );
    attacker
        .connection("own", connection_to(&world.fv.url(), ("plain-token", "token")))
        .await;
    attacker
        .ferrvault_secret(
            "mine",
            json!({ "connectionRef": { "name": "own" }, "vault": PLAYGROUND_VAULT }),
        )
        .await;
    attacker.wait_secret("mine", "Synced").await;
    victim_syncs(&world, &world.fv.url()).await;
    listener.assert_nothing_of("the attacker's listener", &not_the_attackers());
    finish(&world, &operator, &[]).await;
}
