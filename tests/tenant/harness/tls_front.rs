//! An HTTPS front for the FerrVault simulator (which speaks plain http): TLS on 127.0.0.1 with
//! the test certificate of `tests/ferrvault_client/tls_fixtures/`, every connection relayed to
//! the simulator. It lets the operator run without `--allow-insecure-http` and still sync.

use std::{net::SocketAddr, sync::Arc};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::net::{TcpListener, TcpStream};

const SERVER_CERT: &[u8] = include_bytes!("../../ferrvault_client/tls_fixtures/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("../../ferrvault_client/tls_fixtures/server.key");

/// A running front; it stops with the test's runtime.
pub struct TlsFront {
    url: String,
}

impl TlsFront {
    /// The CA that signed the front's certificate (for `127.0.0.1` and `localhost`).
    pub const CA_PEM: &'static [u8] = include_bytes!("../../ferrvault_client/tls_fixtures/ca.pem");

    /// Listens on a free port and relays every TLS connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> TlsFront {
        let certs = CertificateDer::pem_slice_iter(SERVER_CERT)
            .collect::<Result<Vec<_>, _>>()
            .expect("test certificate");
        let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).expect("test key");
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server TLS config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!(
            "https://127.0.0.1:{}",
            listener.local_addr().expect("addr").port()
        );
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A refused handshake (a client that distrusts the CA) just ends here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront { url }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }
}
