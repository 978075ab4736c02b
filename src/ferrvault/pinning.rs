//! Certificate pinning (`pinSha256`): the server's leaf certificate must be one the connection
//! names, in addition to the usual CA and hostname verification; and how a refused handshake is
//! recognised in a failed request ([`TlsRefusal`](super::TlsRefusal)).
//!
//! # Guarantees
//! - A pin is the SHA-256 of the whole DER leaf certificate, as the FerrVault CLI defines it
//!   (`cli/src/tls.rs`), so pins copy between the CLI's configuration and a connection.
//! - Only the leaf is compared, never the intermediates the server sends: the leaf is the
//!   certificate whose key the server proves it holds, while any server can append a copy of a
//!   public intermediate (or of the real server's leaf) to its own chain. The CLI also accepts a
//!   match anywhere in the chain; the operator does not (see `docs/client-certificates.md`).
//! - The CA verification runs first and is never skipped: a pin narrows trust, never widens it.
//! - A mismatch aborts the handshake, so no request (no token, no body) is sent.

use std::{error::Error as StdError, fmt, io, sync::Arc};

use rustls::{
    AlertDescription, CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    pki_types::{CertificateDer, ServerName, UnixTime},
};
use sha2::{Digest, Sha256};

use super::{FerrVaultError, TlsRefusal};

/// The SHA-256 pins of one connection, as bytes: part of its endpoint's pool key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pins(Arc<[[u8; 32]]>);

impl Pins {
    /// The pins of `spec.pinSha256` (64 hex digits each, either case).
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidTls`] naming the position of an entry that is not 64 hex digits
    /// (the schema refuses it; this catches an object stored past it), or an empty list.
    pub fn parse(hex_pins: &[String]) -> Result<Self, FerrVaultError> {
        if hex_pins.is_empty() {
            return Err(FerrVaultError::InvalidTls(
                "pinSha256 is empty: list at least one pin or unset it".into(),
            ));
        }
        let pins = hex_pins
            .iter()
            .enumerate()
            .map(|(i, pin)| {
                let mut bytes = [0u8; 32];
                hex::decode_to_slice(pin.trim(), &mut bytes).map_err(|_| {
                    FerrVaultError::InvalidTls(format!("pinSha256[{i}] is not 64 hexadecimal digits"))
                })?;
                Ok(bytes)
            })
            .collect::<Result<Vec<_>, FerrVaultError>>()?;
        Ok(Self(Arc::from(pins)))
    }

    /// How many pins there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether `leaf`'s DER hashes to one of the pins.
    pub(crate) fn admits(&self, leaf: &CertificateDer<'_>) -> bool {
        let digest: [u8; 32] = Sha256::digest(leaf.as_ref()).into();
        self.0.contains(&digest)
    }
}

/// Verifies as `inner` does, then requires the leaf to match one of `pins`.
#[derive(Debug)]
pub(crate) struct PinnedVerifier {
    /// The CA verification (system roots, plus the connection's bundle).
    pub(crate) inner: Arc<dyn ServerCertVerifier>,
    /// The leaf certificates accepted.
    pub(crate) pins: Pins,
}

impl ServerCertVerifier for PinnedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verified =
            self.inner
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)?;
        if !self.pins.admits(end_entity) {
            return Err(Error::InvalidCertificate(CertificateError::Other(OtherError(
                Arc::new(PinMismatch),
            ))));
        }
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The marker a [`PinnedVerifier`] refuses with, found again by [`refusal_in`].
#[derive(Debug)]
struct PinMismatch;

impl fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the server's certificate matches no pinSha256")
    }
}

impl StdError for PinMismatch {}

/// The refusal behind a failed request, if the TLS handshake was refused for a pin or a client
/// certificate. rustls' error travels inside (possibly nested) `io::Error`s, whose `source()`
/// skips what they wrap, so each `io::Error` is also opened with `get_ref`.
pub(crate) fn refusal_in(error: &reqwest::Error) -> Option<TlsRefusal> {
    let mut pending: Vec<&(dyn StdError + 'static)> = vec![error];
    // Bounded: an error chain is a handful of links; the bound only guards against a cycle.
    for _ in 0..32 {
        let current = pending.pop()?;
        if let Some(refusal) = current.downcast_ref::<Error>().and_then(refusal_of) {
            return Some(refusal);
        }
        if let Some(inner) = current.downcast_ref::<io::Error>().and_then(io::Error::get_ref) {
            if let Some(refusal) = alert_text_refusal(&inner.to_string()) {
                return Some(refusal);
            }
            pending.push(inner);
        }
        pending.extend(current.source());
    }
    None
}

/// The alerts a server sends when it refuses the client's certificate (or its absence).
const CLIENT_CERTIFICATE_ALERTS: [AlertDescription; 8] = [
    AlertDescription::CertificateRequired,
    AlertDescription::BadCertificate,
    AlertDescription::UnknownCA,
    AlertDescription::CertificateExpired,
    AlertDescription::CertificateRevoked,
    AlertDescription::CertificateUnknown,
    AlertDescription::UnsupportedCertificate,
    AlertDescription::AccessDenied,
];

fn refusal_of(error: &Error) -> Option<TlsRefusal> {
    match error {
        Error::InvalidCertificate(CertificateError::Other(other))
            if other.0.downcast_ref::<PinMismatch>().is_some() =>
        {
            Some(TlsRefusal::PinMismatch)
        }
        Error::AlertReceived(alert) if CLIENT_CERTIFICATE_ALERTS.contains(alert) => {
            Some(TlsRefusal::ClientCertificateRefused)
        }
        _ => None,
    }
}

/// A received alert as tokio-rustls reports it on a read: rustls' error turned into the text
/// of an `io::Error` (`received fatal alert: CertificateRequired`), no longer a typed error.
fn alert_text_refusal(text: &str) -> Option<TlsRefusal> {
    let alert = text.strip_prefix("received fatal alert: ")?;
    CLIENT_CERTIFICATE_ALERTS
        .iter()
        .any(|known| format!("{known:?}") == alert)
        .then_some(TlsRefusal::ClientCertificateRefused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_should_admit_the_leaf_whose_der_they_hash_in_either_case() {
        let leaf = CertificateDer::from(vec![1u8, 2, 3]);
        let upper = hex::encode_upper(Sha256::digest([1u8, 2, 3]));
        let pins = Pins::parse(&["00".repeat(32), upper]).expect("valid pins");
        assert!(pins.admits(&leaf));
        assert!(!pins.admits(&CertificateDer::from(vec![4u8])));
    }

    #[test]
    fn a_received_client_certificate_alert_should_be_recognised_typed_or_as_text() {
        assert_eq!(
            refusal_of(&Error::AlertReceived(AlertDescription::CertificateRequired)),
            Some(TlsRefusal::ClientCertificateRefused)
        );
        assert_eq!(
            alert_text_refusal("received fatal alert: UnknownCA"),
            Some(TlsRefusal::ClientCertificateRefused)
        );
        assert_eq!(alert_text_refusal("received fatal alert: DecodeError"), None);
        assert_eq!(
            refusal_of(&Error::AlertReceived(AlertDescription::HandshakeFailure)),
            None
        );
    }

    #[test]
    fn pins_should_refuse_an_entry_that_is_not_a_sha256_naming_its_position_only() {
        let error = Pins::parse(&["ab".repeat(32), "zz".repeat(32)]).unwrap_err();
        assert!(error.to_string().contains("pinSha256[1]"), "{error}");
        assert!(Pins::parse(&[]).is_err());
    }
}
