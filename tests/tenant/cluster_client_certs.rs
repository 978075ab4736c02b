//! A ClusterFerrVaultConnection's client certificate (`clientCertSecretRef`, issue 38 point 6)
//! against a FerrVault serving HTTPS and requiring a client certificate: with the platform's
//! certificate (a Secret beside its token, named with its namespace) a FerrVaultSecret of an
//! allowed namespace syncs through it, with one reveal. (Without a certificate the server refuses
//! the handshake: see `tests/operator/client_certs.rs` for the refusals' reasons.)

use ferrvault_sim::testkit::tls::TestPki;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, api::PostParams};
use serde_json::json;

use crate::{
    cluster_connections::{platform_connection_with, platform_reveals, through_platform},
    harness::{Launch, VICTIM, VICTIM_DB_URL, World, rbac::OPERATOR_NAMESPACE},
};

/// Creates Secret `name` holding `data` in the operator's namespace, as the platform team.
async fn platform_secret(world: &World, name: &str, data: serde_json::Value) {
    let secret: Secret = serde_json::from_value(json!({ "metadata": { "name": name }, "stringData": data }))
        .expect("a Secret");
    Api::<Secret>::namespaced(world.admin.clone(), OPERATOR_NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .expect("the platform's Secret");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_connection_should_present_its_client_certificate_to_a_server_that_requires_one() {
    let server_ca = TestPki::new("ferrvault-ca");
    let server = server_ca.server();
    let client_ca = TestPki::new("client-ca");
    let config = World::ferrvault_config()
        .tls(&server.cert_pem, &server.key_pem)
        .require_client_cert(&client_ca.ca_pem());
    let world = World::start_with(config).await;
    let _operator = Launch::new().start(&world);
    platform_secret(&world, "platform-ca", json!({ "ca.crt": server_ca.ca_pem() })).await;
    let client = client_ca.client("ferrvault-operator");
    platform_secret(
        &world,
        "platform-client",
        json!({ "tls.crt": client.cert_pem, "tls.key": client.key_pem }),
    )
    .await;
    let trusted = json!({
        "caBundleSecretRef": { "namespace": OPERATOR_NAMESPACE, "name": "platform-ca", "key": "ca.crt" },
        "clientCertSecretRef": { "namespace": OPERATOR_NAMESPACE, "name": "platform-client" },
    });
    platform_connection_with(&world, json!({ "names": [VICTIM] }), trusted).await;

    let victim = world.victim();
    victim.ferrvault_secret("via-platform", through_platform()).await;
    victim.wait_secret("via-platform", "Synced").await;
    assert_eq!(
        victim.target("via-platform").await.expect("the target")["DB_URL"],
        VICTIM_DB_URL.as_bytes()
    );
    assert_eq!(platform_reveals(&world), 1);
}
