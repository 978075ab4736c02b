//! Which servers the FerrVault client trusts: the system's CA roots, parsed once per process and
//! shared (through an `Arc`) by every pooled client, plus a connection's own CA bundle when it
//! has one (`caBundleSecretRef`).
//!
//! # Guarantees
//! - The system roots are read and parsed once, however many endpoints and CA bundles come and
//!   go: a pooled client costs its own bundle's anchors, not a copy of the system's.
//! - A certificate is trusted when it chains to a system root or to a root of the endpoint's
//!   bundle (the same as one store holding both: a path ends at a single anchor).
//! - Hostnames are always verified; TLS 1.2 and 1.3 only; ALPN offers h2 and http/1.1 (only
//!   http/1.1 with a client certificate).
//! - With pins (`pinSha256`), the leaf must also match one ([`PinnedVerifier`]); with a client
//!   identity (`clientCertSecretRef`), it is presented to this endpoint's server only.
//! - Every request of the server for a client certificate is counted in the endpoint's
//!   [`CertificateRequests`], with or without an identity to present.

use std::sync::{Arc, LazyLock};

use rustls::{
    ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::CryptoProvider,
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
};

use super::{
    Endpoint, FerrVaultError,
    certificate_requests::{CertificateRequests, CountingResolver},
    pinning::PinnedVerifier,
};

/// The system's roots as one verifier, or why there is none (no CA certificate on the system).
static SYSTEM: LazyLock<Result<Arc<WebPkiServerVerifier>, String>> = LazyLock::new(|| {
    let loaded = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, ignored) = roots.add_parsable_certificates(loaded.certs);
    if ignored > 0 {
        tracing::warn!(
            ignored,
            "system CA certificates that could not be parsed were ignored"
        );
    }
    tracing::debug!(added, "system CA roots loaded");
    verifier(roots).map_err(|why| format!("no usable system CA certificate: {why}"))
});

/// The TLS settings of a client for `endpoint`: its CA bundle (or none), its pins and its client
/// identity; the server's requests for a client certificate are counted in `requests`.
///
/// # Errors
/// [`FerrVaultError::InvalidTls`] when the bundle holds no usable certificate, or when the
/// endpoint has no bundle and the system has no CA certificate;
/// [`FerrVaultError::InvalidClientCertificate`] when the identity cannot be used.
pub(crate) fn client_config(
    endpoint: &Endpoint,
    requests: Arc<CertificateRequests>,
) -> Result<ClientConfig, FerrVaultError> {
    let system = SYSTEM.as_ref().ok().cloned();
    let verifier: Arc<dyn ServerCertVerifier> = match endpoint.extra_ca_pem() {
        None => system
            .ok_or_else(|| FerrVaultError::InvalidTls(SYSTEM.as_ref().err().cloned().unwrap_or_default()))?,
        Some(pem) => Arc::new(WithBundle {
            bundle: verifier(bundle_roots(pem)?).map_err(FerrVaultError::InvalidTls)?,
            system,
        }),
    };
    let verifier: Arc<dyn ServerCertVerifier> = match endpoint.pins() {
        None => verifier,
        Some(pins) => Arc::new(PinnedVerifier {
            inner: verifier,
            pins: pins.clone(),
        }),
    };
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| FerrVaultError::InvalidTls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match endpoint.client_identity() {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let (chain, key) = identity.chain_and_key()?;
            builder.with_client_auth_cert(chain, key).map_err(|_| {
                FerrVaultError::InvalidClientCertificate(
                    "tls.key does not match the certificate in tls.crt".into(),
                )
            })?
        }
    };
    config.client_auth_cert_resolver = Arc::new(CountingResolver {
        inner: config.client_auth_cert_resolver.clone(),
        requests,
    });
    // With a client certificate, HTTP/1.1 only: a server refusing the certificate sends its
    // alert after the handshake, and over HTTP/2 the connection task swallows it (the request
    // only sees the channel close), while an HTTP/1.1 read returns it (`TlsRefusal`).
    config.alpn_protocols = match endpoint.client_identity() {
        None => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        Some(_) => vec![b"http/1.1".to_vec()],
    };
    Ok(config)
}

fn provider() -> Arc<CryptoProvider> {
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()))
}

fn verifier(roots: RootCertStore) -> Result<Arc<WebPkiServerVerifier>, String> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|e| e.to_string())
}

fn bundle_roots(pem: &[u8]) -> Result<RootCertStore, FerrVaultError> {
    let invalid = |why: String| FerrVaultError::InvalidTls(why);
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(invalid("the CA bundle holds no usable certificate".into()));
    }
    Ok(roots)
}

/// Trusts a connection's bundle, and the shared system roots besides.
#[derive(Debug)]
struct WithBundle {
    bundle: Arc<WebPkiServerVerifier>,
    system: Option<Arc<WebPkiServerVerifier>>,
}

impl ServerCertVerifier for WithBundle {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let by_bundle =
            self.bundle
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        match (&by_bundle, &self.system) {
            (Err(_), Some(system)) => {
                system.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            _ => by_bundle,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.bundle.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.bundle.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.bundle.supported_verify_schemes()
    }
}
