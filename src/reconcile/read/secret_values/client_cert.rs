//! A connection's client certificate (`clientCertSecretRef`): `tls.crt` and `tls.key` of one
//! Secret, read as the token is (kept per `resourceVersion`, opted in, bounded before parsing).
//!
//! # Guarantees
//! - `tls.crt` over [`MAX_CLIENT_CERT_BYTES`] or `tls.key` over [`MAX_CLIENT_KEY_BYTES`] is
//!   refused naming the bound; neither is parsed then.
//! - The key is never in an error: [`ClientCertError`] names the Secret, the key name and the
//!   bound, or the part that is wrong.

use crate::{
    api::{
        SecretKeyRef,
        client_cert::{TLS_CERT_KEY, TLS_KEY_KEY},
    },
    ferrvault::ClientIdentity,
};

use super::{ClientCertError, SecretValues};

/// The largest `tls.crt` a connection presents: 64 KiB, a chain of some forty PEM certificates
/// (the CA bundle's bound); a client chain is one to three.
pub(crate) const MAX_CLIENT_CERT_BYTES: usize = 64 * 1024;

/// The largest `tls.key`: 16 KiB; a PEM RSA-8192 key is under 7 KiB.
pub(crate) const MAX_CLIENT_KEY_BYTES: usize = 16 * 1024;

impl SecretValues {
    /// The client identity in Secret `namespace/name` (`tls.crt` and `tls.key`).
    ///
    /// # Errors
    /// Why it cannot be used (see [`ClientCertError`]).
    pub async fn client_identity(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<ClientIdentity, ClientCertError> {
        let at = |key: &str| SecretKeyRef {
            name: name.to_owned(),
            key: key.to_owned(),
        };
        let (_, cert) = self
            .read(namespace, &at(TLS_CERT_KEY), MAX_CLIENT_CERT_BYTES)
            .await?;
        let (_, key) = self
            .read(namespace, &at(TLS_KEY_KEY), MAX_CLIENT_KEY_BYTES)
            .await?;
        ClientIdentity::from_pem(&cert, &key).map_err(|e| ClientCertError::Invalid(e.to_string()))
    }
}
