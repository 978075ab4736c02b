//! Why the TLS handshake with a FerrVault server was refused, when the operator can tell: a pin
//! mismatch (`pinSha256`) or a client certificate the server refused. Recognised in a failed
//! request by `pinning.rs`, carried by [`FerrVaultError::TlsRefused`](super::FerrVaultError::TlsRefused).

use std::fmt;

/// Why the TLS handshake with a FerrVault server was refused, when the operator can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsRefusal {
    /// The server's leaf certificate matches none of the connection's pins: nothing was sent.
    PinMismatch,
    /// The server refused the handshake over the client certificate: none was presented, or it
    /// does not chain to a CA the server trusts, or it expired.
    ClientCertificateRefused,
}

impl fmt::Display for TlsRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::PinMismatch => {
                "the server's certificate matches none of spec.pinSha256 (SHA-256 of the DER leaf \
                 certificate); the handshake was aborted and nothing was sent"
            }
            Self::ClientCertificateRefused => {
                "the server refused the TLS handshake over the client certificate: none was \
                 presented (set clientCertSecretRef) or the server does not accept the one presented"
            }
        })
    }
}
