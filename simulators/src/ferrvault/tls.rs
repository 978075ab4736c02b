//! HTTPS for the simulator ([`TlsSpec`]): the server's certificate, and, when asked, client
//! certificates verified against a CA (mTLS), so clients' TLS settings are tested against a
//! server that checks them.
//!
//! # Guarantees
//! - With `client_ca_pem`, a client that presents no certificate, or one no configured CA
//!   signed, fails the handshake: no request of it is read, routed or counted (the accounting
//!   counts the failed handshake instead).
//! - Errors name what is wrong, never the key.

use std::sync::Arc;

use rustls::{
    RootCertStore, ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::WebPkiClientVerifier,
};
use tokio_rustls::TlsAcceptor;

use super::{SimError, config::TlsSpec};

/// The acceptor `spec` describes.
///
/// # Errors
/// [`SimError::InvalidConfig`] naming the field that does not hold what it should.
pub fn acceptor(spec: &TlsSpec) -> Result<TlsAcceptor, SimError> {
    let invalid = |what: &str, why: String| SimError::InvalidConfig(format!("tls.{what}: {why}"));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates(&spec.cert_pem).map_err(|why| invalid("cert_pem", why))?;
    let key = PrivateKeyDer::from_pem_slice(spec.key_pem.as_bytes())
        .map_err(|_| invalid("key_pem", "no PEM private key".to_owned()))?;
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid("cert_pem", e.to_string()))?;
    let builder = match &spec.client_ca_pem {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            let cas = certificates(pem).map_err(|why| invalid("client_ca_pem", why))?;
            let (added, _) = roots.add_parsable_certificates(cas);
            if added == 0 {
                return Err(invalid("client_ca_pem", "no usable CA certificate".to_owned()));
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| invalid("client_ca_pem", e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| invalid("cert_pem", e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if certs.is_empty() {
        return Err("no PEM certificate".to_owned());
    }
    Ok(certs)
}
