//! A connection's client certificate (mTLS, `clientCertSecretRef`): the PEM chain and private key
//! it presents to its FerrVault server, checked once when it is built.
//!
//! # Guarantees
//! - An identity holds at least one certificate and one private key, and the key is the one the
//!   leaf certificate certifies (a mismatch is refused here, not at a handshake).
//! - The key never appears in a `Debug` output, an error or a log line: errors say which part is
//!   wrong (`tls.crt`, `tls.key`), never what it holds.
//! - It is part of its endpoint's pool key ([`Endpoint`](super::Endpoint)), compared by content:
//!   two connections presenting different identities never share a TLS client.

use std::{fmt, sync::Arc};

use rustls::{
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    sign::CertifiedKey,
};

use super::FerrVaultError;

/// The client certificate chain and private key of one connection, both PEM.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ClientIdentity {
    /// `tls.crt`: the leaf first, then any intermediates.
    cert_pem: Arc<[u8]>,
    /// `tls.key`: never shown.
    key_pem: Arc<[u8]>,
}

impl ClientIdentity {
    /// The identity of `cert_pem` (`tls.crt`) and `key_pem` (`tls.key`).
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidClientCertificate`] naming the part that holds no certificate or
    /// no private key, or saying that the key does not match the certificate.
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Self, FerrVaultError> {
        let identity = Self {
            cert_pem: Arc::from(cert_pem),
            key_pem: Arc::from(key_pem),
        };
        identity.certified_key(&rustls::crypto::ring::default_provider())?;
        Ok(identity)
    }

    /// The chain and key, parsed, as `provider` loads them.
    ///
    /// # Errors
    /// As [`ClientIdentity::from_pem`].
    pub(crate) fn chain_and_key(
        &self,
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), FerrVaultError> {
        let invalid = |why: &str| FerrVaultError::InvalidClientCertificate(why.to_owned());
        let chain = CertificateDer::pem_slice_iter(&self.cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid("tls.crt is not a PEM certificate chain"))?;
        if chain.is_empty() {
            return Err(invalid("tls.crt holds no PEM certificate"));
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key_pem)
            .map_err(|_| invalid("tls.key holds no PEM private key"))?;
        Ok((chain, key))
    }

    /// Checks that the key loads and matches the leaf certificate.
    fn certified_key(&self, provider: &CryptoProvider) -> Result<(), FerrVaultError> {
        let (chain, key) = self.chain_and_key()?;
        CertifiedKey::from_der(chain, key, provider)
            .map(|_| ())
            .map_err(|e| FerrVaultError::InvalidClientCertificate(key_refusal(&e)))
    }
}

/// Why rustls refused a chain and key, in words that never quote either.
fn key_refusal(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InconsistentKeys(_) => "tls.key does not match the certificate in tls.crt".to_owned(),
        rustls::Error::InvalidCertificate(_) => "tls.crt's first certificate cannot be parsed".to_owned(),
        _ => "tls.key is not a private key the operator can sign with (RSA, ECDSA or Ed25519)".to_owned(),
    }
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("cert_bytes", &self.cert_pem.len())
            .field("key", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec!["client".to_owned()])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn an_identity_should_be_refused_when_its_key_is_another_certificates() {
        let (cert, _) = pair();
        let (_, other_key) = pair();
        let error = ClientIdentity::from_pem(cert.as_bytes(), other_key.as_bytes()).unwrap_err();
        assert!(error.to_string().contains("does not match"), "{error}");
        assert!(!error.to_string().contains("PRIVATE KEY"), "{error}");
    }

    #[test]
    fn an_identity_should_name_the_part_that_holds_nothing_usable() {
        let (cert, key) = pair();
        let no_cert = ClientIdentity::from_pem(b"garbage", key.as_bytes()).unwrap_err();
        assert!(no_cert.to_string().contains("tls.crt"), "{no_cert}");
        let no_key = ClientIdentity::from_pem(cert.as_bytes(), b"garbage").unwrap_err();
        assert!(no_key.to_string().contains("tls.key"), "{no_key}");
    }

    #[test]
    fn an_identity_should_never_show_its_key_in_debug() {
        let (cert, key) = pair();
        let identity = ClientIdentity::from_pem(cert.as_bytes(), key.as_bytes()).expect("a valid pair");
        let shown = format!("{identity:?}");
        assert!(
            shown.contains("<redacted>") && !shown.contains("PRIVATE"),
            "{shown}"
        );
    }
}
