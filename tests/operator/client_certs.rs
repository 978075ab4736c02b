//! End-to-end: a connection's client certificate (`clientCertSecretRef`) and server pins
//! (`pinSha256`) against a FerrVault simulator serving HTTPS and requiring a client certificate
//! (issue 38 point 6): the right certificate syncs; none, a foreign one, a mismatched key or an
//! oversized one is reported with its reason; a matching pin syncs; a wrong one is refused before
//! anything is sent (0 reveals).

use ferrvault_operator::api::{FerrVaultConnectionSpec, SecretKeyRef, client_cert::ClientCertSecretRef};
use ferrvault_sim::testkit::tls::{CertAndKey, TestPki};
use rustls::pki_types::{CertificateDer, pem::PemObject};
use sha2::{Digest, Sha256};

use crate::operator_support::*;

/// The PKI of one test: the server's CA and certificate, and the CA the server requires client
/// certificates from, with a client certificate it signed.
struct Pki {
    server_ca: TestPki,
    server: CertAndKey,
    client_ca: TestPki,
    client: CertAndKey,
}

impl Pki {
    fn new() -> Self {
        let server_ca = TestPki::new("ferrvault-ca");
        let client_ca = TestPki::new("client-ca");
        Self {
            server: server_ca.server(),
            client: client_ca.client("ferrvault-operator"),
            server_ca,
            client_ca,
        }
    }

    /// The SHA-256 of the server's DER leaf certificate, in hex: what
    /// `openssl x509 -outform DER | openssl dgst -sha256` prints.
    fn server_pin(&self) -> String {
        let der = CertificateDer::from_pem_slice(self.server.cert_pem.as_bytes()).expect("a PEM certificate");
        hex::encode(Sha256::digest(der.as_ref()))
    }
}

/// The harness against a simulator serving HTTPS with `pki`'s server certificate and requiring a
/// client certificate from `pki`'s client CA; the token and the server's CA bundle are in place.
async fn start(pki: &Pki) -> Harness {
    let fv = sim_config()
        .tls(&pki.server.cert_pem, &pki.server.key_pem)
        .require_client_cert(&pki.client_ca.ca_pem());
    let h = Harness::start_with_fv(test_settings(), fv).await;
    h.put_secret("conn-token", &[("token", PROD_TOKEN)]).await;
    h.put_secret("server-ca", &[("ca.crt", &pki.server_ca.ca_pem())])
        .await;
    h
}

/// A connection to the simulator trusting its CA, presenting the client certificate of Secret
/// `cert` (if any) and pinning `pins` (if any).
fn spec(h: &Harness, cert: Option<&str>, pins: Option<Vec<String>>) -> FerrVaultConnectionSpec {
    let mut spec = connection_spec(&h.fv.url(), "conn-token");
    spec.ca_bundle_secret_ref = Some(SecretKeyRef {
        name: "server-ca".into(),
        key: "ca.crt".into(),
    });
    spec.client_cert_secret_ref = cert.map(|name| ClientCertSecretRef { name: name.into() });
    spec.pin_sha256 = pins;
    spec
}

async fn put_client_cert(h: &Harness, name: &str, cert: &CertAndKey) {
    h.put_secret(name, &[("tls.crt", &cert.cert_pem), ("tls.key", &cert.key_pem)])
        .await;
}

/// The connection's Ready message, checked free of any key material.
async fn refused(h: &Harness, name: &str, reason: &str) -> String {
    let conn = h.wait_connection_reason(name, reason).await;
    let message = ready(conn.status.as_ref().map(|s| s.conditions.as_slice()))
        .expect("a Ready condition")
        .message
        .clone();
    assert!(!message.contains("PRIVATE KEY"), "{message}");
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_with_a_client_certificate_should_sync_against_a_server_that_requires_one() {
    let pki = Pki::new();
    let h = start(&pki).await;
    put_client_cert(&h, "client-cert", &pki.client).await;
    h.create_connection("conn", spec(&h, Some("client-cert"), None))
        .await;
    h.wait_connection_reason("conn", "Reachable").await;
    h.create_secret("app", secret_spec("conn", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    h.wait_target("app", |s| {
        s.data
            .as_ref()
            .and_then(|d| d.get("DB_URL"))
            .is_some_and(|v| v.0 == DB_URL.as_bytes())
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_foreign_mismatched_or_oversized_client_certificate_should_each_get_its_reason() {
    let pki = Pki::new();
    let h = start(&pki).await;
    // None at all: the server refuses the handshake.
    h.create_connection("none", spec(&h, None, None)).await;
    let message = refused(&h, "none", "ClientCertificateRefused").await;
    assert!(message.contains("clientCertSecretRef"), "{message}");
    // One the server's client CA did not sign.
    put_client_cert(&h, "foreign", &TestPki::new("another-ca").client("intruder")).await;
    h.create_connection("foreign", spec(&h, Some("foreign"), None))
        .await;
    refused(&h, "foreign", "ClientCertificateRefused").await;
    // The right certificate with another key: refused before any connection.
    let other = pki.client_ca.client("other");
    let mismatched = CertAndKey {
        cert_pem: pki.client.cert_pem.clone(),
        key_pem: other.key_pem,
    };
    put_client_cert(&h, "mismatched", &mismatched).await;
    h.create_connection("mismatched", spec(&h, Some("mismatched"), None))
        .await;
    let message = refused(&h, "mismatched", "ClientCertificateInvalid").await;
    assert!(message.contains("does not match"), "{message}");
    // A chain over the bound: refused unparsed, naming the bound.
    let oversized = CertAndKey {
        cert_pem: pki
            .client
            .cert_pem
            .repeat(64 * 1024 / pki.client.cert_pem.len() + 1),
        key_pem: pki.client.key_pem.clone(),
    };
    put_client_cert(&h, "oversized", &oversized).await;
    h.create_connection("oversized", spec(&h, Some("oversized"), None))
        .await;
    let message = refused(&h, "oversized", "ClientCertificateUnreadable").await;
    assert!(message.contains("64 KiB"), "{message}");
    // Missing keys in the Secret.
    h.put_secret("empty", &[("other", "x")]).await;
    h.create_connection("empty", spec(&h, Some("empty"), None)).await;
    let message = refused(&h, "empty", "ClientCertificateUnreadable").await;
    assert!(message.contains("tls.crt"), "{message}");
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matching_pin_should_sync_and_a_wrong_one_should_be_refused_before_any_reveal() {
    let pki = Pki::new();
    let h = start(&pki).await;
    put_client_cert(&h, "client-cert", &pki.client).await;
    h.create_connection(
        "wrong",
        spec(&h, Some("client-cert"), Some(vec!["ab".repeat(32)])),
    )
    .await;
    h.create_secret("evil", secret_spec("wrong", "prod")).await;
    let message = refused(&h, "wrong", "CertificatePinMismatch").await;
    assert!(message.contains("nothing was sent"), "{message}");
    h.wait_secret_reason("evil", "CertificatePinMismatch").await;
    assert_eq!(h.reveals(), 0, "no reveal reached the server past a wrong pin");

    let pins = vec!["cd".repeat(32), pki.server_pin().to_uppercase()];
    h.create_connection("pinned", spec(&h, Some("client-cert"), Some(pins)))
        .await;
    h.wait_connection_reason("pinned", "Reachable").await;
    h.create_secret("app", secret_spec("pinned", "prod")).await;
    h.wait_secret_reason("app", "Synced").await;
    h.finish().await;
}
