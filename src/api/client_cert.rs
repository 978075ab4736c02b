//! The TLS identity fields of both connection kinds (issue 38, point 6): `clientCertSecretRef`,
//! the client certificate a connection presents, and `pinSha256`, the server certificates it
//! accepts.
//!
//! # Guarantees (enforced by the CRD schema)
//! - `pinSha256` holds at most [`MAX_PINS`] entries, each 64 characters; a CEL rule
//!   ([`PINS_RULE`]) admits only hexadecimal digits, so a pin is always a SHA-256.
//! - A ClusterFerrVaultConnection's client certificate Secret is in the namespace of its
//!   `tokenSecretRef` (its own CEL rule), as its CA bundle is.
//!
//! # Pin definition
//! A pin is the SHA-256 of the server's **whole leaf certificate** in DER, as the FerrVault CLI
//! computes it (`cli/src/tls.rs`), so a pin copied from the CLI's configuration works here:
//! `openssl x509 -in server.pem -outform DER | openssl dgst -sha256`. It is checked in addition
//! to the usual CA and hostname verification, never instead of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bounds::{MAX_NAME, MAX_NAMESPACE_NAME};

/// The most pins a connection lists: a current certificate and its successors during a rotation.
pub const MAX_PINS: usize = 8;

/// The length of a pin: a SHA-256 in hexadecimal.
pub const PIN_LENGTH: usize = 64;

/// The CEL rule on `pinSha256`: every entry is 64 hexadecimal digits.
pub const PINS_RULE: &str = "!has(self.pinSha256) || self.pinSha256.all(p, p.matches('^[0-9a-fA-F]{64}$'))";

/// The message of [`PINS_RULE`].
pub const PINS_MESSAGE: &str =
    "each pinSha256 entry is the SHA-256 of the server's DER certificate: 64 hexadecimal digits";

/// The CEL rule keeping a cluster connection's client certificate beside its token (one namespace,
/// the platform's credentials namespace).
pub const CLIENT_CERT_NAMESPACE_RULE: &str = "!has(self.clientCertSecretRef) || \
     (has(self.tokenSecretRef) && self.clientCertSecretRef.__namespace__ == self.tokenSecretRef.__namespace__)";

/// The message of [`CLIENT_CERT_NAMESPACE_RULE`].
pub const CLIENT_CERT_NAMESPACE_MESSAGE: &str =
    "clientCertSecretRef needs a tokenSecretRef in the same namespace";

/// The key of the client certificate chain (PEM) in the named Secret, as in `kubernetes.io/tls`.
pub const TLS_CERT_KEY: &str = "tls.crt";

/// The key of the client private key (PEM) in the named Secret, as in `kubernetes.io/tls`.
pub const TLS_KEY_KEY: &str = "tls.key";

/// A Secret in the connection's namespace holding `tls.crt` and `tls.key` (a `kubernetes.io/tls`
/// Secret, or any Secret with those keys).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ClientCertSecretRef {
    /// Name of the Secret, in the connection's namespace.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
}

/// A Secret holding `tls.crt` and `tls.key` in the namespace it names (a cluster connection's;
/// the namespace of its `tokenSecretRef`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct NamespacedClientCertSecretRef {
    /// Namespace of the Secret: the namespace of `tokenSecretRef`.
    #[schemars(length(min = 1, max = MAX_NAMESPACE_NAME))]
    pub namespace: String,
    /// Name of the Secret.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
}
