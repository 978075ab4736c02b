//! TLS for self-hosted FerrVault: an extra CA bundle (PEM) is trusted in addition to the
//! system roots, and without it a privately signed server is refused.
//!
//! The fixtures in `tests/fixtures/tls/` are a test-only CA certificate and a server
//! certificate for `127.0.0.1`/`localhost` signed by it (the CA's key was discarded).

use std::{sync::Arc, time::Duration};

use ferrvault_operator::ferrvault::{ClientConfig, Endpoint, FerrVault, FerrVaultError, RetryPolicy};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    time::Instant,
};

const CA: &[u8] = include_bytes!("tls_fixtures/ca.pem");
const SERVER_CERT: &[u8] = include_bytes!("tls_fixtures/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("tls_fixtures/server.key");

/// An HTTPS server on 127.0.0.1 that answers every request with `200 {"status":"ok"}`.
async fn https_server() -> String {
    // An error means a provider is already installed, which is all the server needs.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = CertificateDer::pem_slice_iter(SERVER_CERT)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A refused handshake (the client distrusts us) is the expected end here.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let body = r#"{"status":"ok"}"#;
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                // The client may already be gone; nothing to do about it in a test server.
                let _ = tls.write_all(response.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    url
}

fn client() -> FerrVault {
    FerrVault::new(ClientConfig {
        retry: RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        },
        egress: crate::loopback_allowed(),
        ..ClientConfig::default()
    })
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

#[tokio::test]
async fn an_extra_ca_bundle_should_let_the_client_trust_a_self_hosted_server() {
    let url = https_server().await;
    let endpoint = Endpoint::parse(&url).unwrap().with_extra_ca_pem(CA).unwrap();
    client().probe(&endpoint, soon()).await.unwrap();
}

#[tokio::test]
async fn without_the_extra_ca_a_privately_signed_server_should_be_refused() {
    let url = https_server().await;
    let err = client()
        .probe(&Endpoint::parse(&url).unwrap(), soon())
        .await
        .unwrap_err();
    assert!(matches!(err, FerrVaultError::Transport { .. }), "{err:?}");
}

#[tokio::test]
async fn endpoints_differing_only_in_tls_settings_should_not_share_a_client() {
    let url = https_server().await;
    let client = client();
    let trusted = Endpoint::parse(&url).unwrap().with_extra_ca_pem(CA).unwrap();
    client.probe(&trusted, soon()).await.unwrap();
    assert!(
        client
            .probe(&Endpoint::parse(&url).unwrap(), soon())
            .await
            .is_err()
    );
    client.probe(&trusted, soon()).await.unwrap();
    assert_eq!(client.pooled_clients(), 2);
}
