//! The secure metrics endpoint's serving certificate: from files (`--metrics-cert-path`, e.g. a
//! cert-manager Secret), re-read when they change, or self-signed at start when none is given
//! (controller-runtime's fallback; scrapers then skip verification).
//!
//! # Guarantees
//! - Startup fails on files that cannot be read or do not hold a matching certificate and key.
//! - A changed certificate is served from the next handshake, at most [`RELOAD_EVERY`] after
//!   the files changed; files that became unreadable or invalid leave the previous certificate
//!   in place (logged), so a rotation caught half-written never takes metrics down.
//! - TLS 1.2 or 1.3, HTTP/1.1 only (no HTTP/2, as kubebuilder's scaffold disables it).
//! - Key material never appears in an error or a log line: errors name the file and rustls's
//!   reason only.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, RwLock},
    time::Duration,
};

use rustls::{
    ServerConfig,
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    server::{ClientHello, ResolvesServerCert},
    sign::CertifiedKey,
};
use sha2::{Digest, Sha256};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

/// How often certificate files are checked for a change (controller-runtime's certwatcher
/// polls every 10s too).
pub const RELOAD_EVERY: Duration = Duration::from_secs(10);

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertSource {
    /// Generated in memory at start, for `localhost` and `127.0.0.1`.
    SelfSigned,
    /// PEM files: the certificate chain and its private key.
    Files {
        /// `--metrics-cert-path`/`--metrics-cert-name`.
        cert: PathBuf,
        /// `--metrics-cert-path`/`--metrics-cert-key`.
        key: PathBuf,
    },
}

/// Why a serving certificate could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// A file could not be read or parsed.
    #[error("cannot read the metrics serving certificate from {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// rustls's reason.
        reason: String,
    },
    /// The certificate and key do not go together, or the key type is not supported.
    #[error("the metrics serving certificate and key cannot be used together: {0}")]
    Mismatch(String),
    /// The self-signed certificate could not be generated.
    #[error("cannot generate a self-signed metrics serving certificate: {0}")]
    SelfSigned(String),
}

/// The certificate served now, replaced when its files change.
#[derive(Debug)]
pub struct ServingCert {
    current: RwLock<Arc<CertifiedKey>>,
    source: CertSource,
    /// SHA-256 of the files' bytes last loaded, to notice a change.
    loaded: RwLock<[u8; 32]>,
}

impl ServingCert {
    /// Loads (or generates) the certificate.
    ///
    /// # Errors
    /// [`CertError`] naming the file or the reason.
    pub fn load(source: CertSource) -> Result<Arc<Self>, CertError> {
        let (key, digest) = match &source {
            CertSource::SelfSigned => (self_signed()?, [0; 32]),
            CertSource::Files { cert, key } => {
                let (cert_pem, key_pem) = (read(cert)?, read(key)?);
                (
                    from_pem(&cert_pem, cert, &key_pem, key)?,
                    digest(&cert_pem, &key_pem),
                )
            }
        };
        Ok(Arc::new(Self {
            current: RwLock::new(Arc::new(key)),
            source,
            loaded: RwLock::new(digest),
        }))
    }

    /// A TLS acceptor serving the current certificate.
    pub fn acceptor(self: &Arc<Self>) -> TlsAcceptor {
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .expect("ring supports TLS 1.2 and 1.3")
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TlsAcceptor::from(Arc::new(config))
    }

    /// Re-reads the files every [`RELOAD_EVERY`] until `stop` (nothing to do when self-signed).
    pub async fn watch(self: Arc<Self>, stop: CancellationToken) {
        let CertSource::Files { cert, key } = &self.source else {
            return;
        };
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(RELOAD_EVERY) => {}
            }
            if let Err(error) = self.reload(cert, key) {
                tracing::warn!(%error, "keeping the previous metrics serving certificate");
            }
        }
    }

    /// Loads the files again when their bytes changed.
    fn reload(&self, cert: &Path, key: &Path) -> Result<(), CertError> {
        let (cert_pem, key_pem) = (read(cert)?, read(key)?);
        let digest = digest(&cert_pem, &key_pem);
        if *self.loaded.read().unwrap_or_else(|e| e.into_inner()) == digest {
            return Ok(());
        }
        let fresh = from_pem(&cert_pem, cert, &key_pem, key)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
        *self.loaded.write().unwrap_or_else(|e| e.into_inner()) = digest;
        tracing::info!(cert = %cert.display(), "metrics serving certificate reloaded");
        Ok(())
    }
}

impl ResolvesServerCert for ServingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().unwrap_or_else(|e| e.into_inner()).clone())
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read(path: &Path) -> Result<Vec<u8>, CertError> {
    std::fs::read(path).map_err(|error| CertError::File {
        path: path.display().to_string(),
        reason: error.to_string(),
    })
}

fn digest(cert: &[u8], key: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(cert);
    hasher.update([0]);
    hasher.update(key);
    hasher.finalize().into()
}

fn from_pem(cert_pem: &[u8], cert: &Path, key_pem: &[u8], key: &Path) -> Result<CertifiedKey, CertError> {
    let file = |path: &Path, error: rustls::pki_types::pem::Error| CertError::File {
        path: path.display().to_string(),
        reason: error.to_string(),
    };
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file(cert, e))?;
    if chain.is_empty() {
        return Err(CertError::File {
            path: cert.display().to_string(),
            reason: "no certificate in the file".into(),
        });
    }
    let private = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| file(key, e))?;
    CertifiedKey::from_der(chain, private, &provider()).map_err(|e| CertError::Mismatch(e.to_string()))
}

fn self_signed() -> Result<CertifiedKey, CertError> {
    let fail = |e: rcgen::Error| CertError::SelfSigned(e.to_string());
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .map_err(fail)?;
    let key = PrivateKeyDer::Pkcs8(generated.signing_key.serialize_der().into());
    CertifiedKey::from_der(vec![generated.cert.der().clone()], key, &provider())
        .map_err(|e| CertError::Mismatch(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (String, String) {
        let generated =
            rcgen::generate_simple_self_signed(vec!["metrics.test".to_owned()]).expect("generated");
        (generated.cert.pem(), generated.signing_key.serialize_pem())
    }

    #[test]
    fn files_should_be_reloaded_when_they_change_and_kept_when_broken() {
        let dir = tempfile::tempdir().expect("dir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (first_cert, first_key) = pair();
        std::fs::write(&cert, &first_cert).expect("write");
        std::fs::write(&key, &first_key).expect("write");
        let serving = ServingCert::load(CertSource::Files {
            cert: cert.clone(),
            key: key.clone(),
        })
        .expect("loads");
        let served = |s: &ServingCert| s.current.read().expect("lock").cert[0].clone();
        let before = served(&serving);

        std::fs::write(&cert, "garbage").expect("write");
        assert!(serving.reload(&cert, &key).is_err());
        assert_eq!(
            served(&serving),
            before,
            "a broken file keeps the old certificate"
        );

        let (second_cert, second_key) = pair();
        std::fs::write(&cert, &second_cert).expect("write");
        std::fs::write(&key, &second_key).expect("write");
        serving.reload(&cert, &key).expect("reloads");
        assert_ne!(served(&serving), before, "the new certificate is served");
    }

    #[test]
    fn a_key_of_another_certificate_should_be_refused_without_showing_it() {
        let dir = tempfile::tempdir().expect("dir");
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (first_cert, _) = pair();
        let (_, other_key) = pair();
        std::fs::write(&cert, &first_cert).expect("write");
        std::fs::write(&key, &other_key).expect("write");
        let error = ServingCert::load(CertSource::Files { cert, key }).expect_err("mismatch");
        let text = error.to_string();
        assert!(matches!(error, CertError::Mismatch(_)), "{text}");
        assert!(!text.contains("PRIVATE KEY"), "{text}");
    }

    #[test]
    fn without_files_a_self_signed_certificate_should_be_served() {
        let serving = ServingCert::load(CertSource::SelfSigned).expect("generated");
        assert_eq!(serving.current.read().expect("lock").cert.len(), 1);
    }
}
