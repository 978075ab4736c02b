//! Why a Secret's value is not used (a token, a CA bundle, a client certificate): over its bound
//! ([`MAX_TOKEN_BYTES`], [`MAX_CA_BUNDLE_BYTES`]), missing, unreadable, or not opted in as a
//! credential. Every error names the Secret, the key and the bound, never a value.

use crate::api::SecretKeyRef;

/// The largest token a connection sends: 4 KiB. FerrVault tokens are under 100 bytes and a JWT
/// bearer a few hundred to 2 KiB; HTTP servers commonly refuse headers over 8 KiB.
pub(crate) const MAX_TOKEN_BYTES: usize = 4 * 1024;

/// The largest CA bundle a connection trusts: 64 KiB, some forty PEM certificates. The bundle
/// adds to the system roots, so it holds a private CA or two, not a trust store.
pub(crate) const MAX_CA_BUNDLE_BYTES: usize = 64 * 1024;

/// Why a Secret's value cannot be used. Names the Secret, the key and the bound, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// The GET failed (not found, forbidden, a timeout …).
    #[error("Secret {namespace}/{name}: {cause}")]
    Unreadable {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The API's reason, as `kube_error_text` words it.
        cause: String,
    },
    /// The Secret has no such key.
    #[error("Secret {namespace}/{name} has no key {key:?}")]
    MissingKey {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The key asked for.
        key: String,
    },
    /// The value is larger than the reader accepts.
    #[error("Secret {namespace}/{name} key {key:?} holds {size} bytes, over the bound of {} KiB", bound / 1024)]
    TooLarge {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The key asked for.
        key: String,
        /// The value's size in bytes.
        size: usize,
        /// The reader's bound in bytes.
        bound: usize,
    },
    /// `--require-credential-opt-in` and the Secret did not opt in.
    #[error("Secret {namespace}/{name} is not opted in as a credential")]
    NotOptedIn {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
    },
}

/// Why a connection's endpoint cannot be built with its CA bundle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaBundleError {
    /// The bundle's value cannot be used.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// The bundle holds no usable certificate.
    #[error("{0}")]
    Invalid(String),
}

/// Why a connection's client certificate cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientCertError {
    /// `tls.crt` or `tls.key` cannot be read (missing, over its bound, not opted in).
    #[error(transparent)]
    Value(#[from] ValueError),
    /// They hold no certificate or no key, or the key is not the certificate's.
    #[error("{0}")]
    Invalid(String),
}

/// [`ValueError::TooLarge`] for `reference` in `namespace` holding `size` bytes over `bound`.
pub(super) fn too_large(namespace: &str, reference: &SecretKeyRef, size: usize, bound: usize) -> ValueError {
    ValueError::TooLarge {
        namespace: namespace.to_owned(),
        name: reference.name.clone(),
        key: reference.key.clone(),
        size,
        bound,
    }
}
