//! The cluster identity pointed elsewhere: a tenant opting in (`oidc: {}`) with a `spec.url` it
//! controls, with its own CA bundle in front of a trusted name, in ferrvault mode (no namespace
//! header), or at the trusted URL from a namespace FerrVault does not grant. The operator's own
//! ServiceAccount token (the stand-in) is its `--oidc-token-path` here; it runs without
//! `--allow-insecure-http`, trusting only the HTTPS FerrVault, whose CA is a system root.

use serde_json::json;

use crate::harness::{
    Answer, Launch, Listener, ORG, PROJECT, VICTIM_VAULT, World, finish, tls_front::TlsFront,
    victim_syncs_with_the_cluster_identity,
};

#[tokio::test(flavor = "multi_thread")]
async fn opting_in_outside_the_trusted_urls_should_send_nothing_while_the_trusted_path_syncs() {
    let world = World::start().await;
    let listener = Listener::start(Answer::Ok).await;
    let trusted = world.fv_https.url().to_owned();
    let operator = Launch::new()
        .system_roots(&world.ca_file())
        .cluster_identity(&world.sa_token_path(), &[&trusted])
        .start(&world);
    let attacker = world.attacker();
    let cloud = |url: &str| json!({ "mode": "cloud", "url": url, "organization": ORG, "oidc": {} });

    // The attacker's own host (https, so only the trust check stands in the way).
    let own_host = listener.url().replace("http://", "https://");
    attacker.connection("own-host", cloud(&own_host)).await;
    // The trusted name, vouched for by a CA the attacker chose.
    let ca = String::from_utf8(TlsFront::CA_PEM.to_vec()).expect("PEM is text");
    attacker.put_secret("ca", &[("ca.crt", &ca)]).await;
    let mut with_ca = cloud(&trusted);
    with_ca["caBundleSecretRef"] = json!({ "name": "ca", "key": "ca.crt" });
    attacker.connection("own-ca", with_ca).await;
    // Ferrvault mode: the cluster token would travel without X-FerrVault-Namespace.
    attacker
        .connection("no-namespace", json!({ "url": trusted, "oidc": {} }))
        .await;
    // The trusted URL, legitimately: FerrVault scopes the cluster token to the namespace sent.
    attacker.connection("trusted", cloud(&trusted)).await;
    for name in ["own-host", "own-ca", "no-namespace", "trusted"] {
        attacker.sync(name, name, VICTIM_VAULT, Some(PROJECT)).await;
    }

    let refused = attacker.wait_connection("own-host", "UntrustedUrl").await;
    assert!(
        refused.message.contains("--oidc-trusted-urls"),
        "{}",
        refused.message
    );
    attacker.wait_secret("own-host", "UntrustedUrl").await;
    operator
        .wait_no_timer("ferrvaultsecret:tenant-evil/own-host")
        .await;
    let refused = attacker.wait_connection("own-ca", "UntrustedUrl").await;
    assert!(
        refused.message.contains("caBundleSecretRef"),
        "{}",
        refused.message
    );
    attacker.wait_secret("own-ca", "UntrustedUrl").await;
    let refused = attacker
        .wait_connection("no-namespace", "ClusterIdentityUnavailable")
        .await;
    assert!(refused.message.contains("mode cloud"), "{}", refused.message);
    attacker
        .wait_secret("no-namespace", "ClusterIdentityUnavailable")
        .await;
    // Exchanged and sent with `X-FerrVault-Namespace: tenant-evil`, which FerrVault refuses.
    let denied = attacker.wait_secret("trusted", "AuthFailed").await;
    assert!(
        denied.message.contains("namespace not allowed"),
        "{}",
        denied.message
    );
    assert_eq!(
        attacker.target("trusted").await,
        None,
        "no victim data for the attacker"
    );

    // Positive control: the victim's namespace, at the trusted URL, with the system roots only.
    victim_syncs_with_the_cluster_identity(&world, &trusted).await;
    listener.assert_untouched("the attacker's host");
    finish(&world, &operator, &[]).await;
}
