//! The credential newtype: a bearer token that never prints itself.
//!
//! # Guarantees
//! - `Debug` and `Display` print `<redacted>`; the token leaves this type only through
//!   [`Credential::bearer`], which is crate-private and used to build the `Authorization` header.
//! - A bearer minted from the operator's cluster identity is marked as such
//!   ([`Credential::is_cluster`]), so the client can refuse to send it where it does not belong.
//! - The only identity a credential shows the outside world is its [`Fingerprint`]: the first
//!   12 hex digits of `sha256(base URL, 0x00, token)`, so metrics and logs can tell credentials
//!   apart without revealing (or allowing a cheap guess at) the token.

use std::{fmt, sync::Arc};

use sha2::{Digest, Sha256};

use super::FerrVaultError;

/// A FerrVault bearer token (`fvsat_…`, `fft_…`, `ffclust_…`).
///
/// Cheap to clone. Surrounding whitespace is trimmed (tokens copied into Secrets often carry
/// a trailing newline), an empty token is refused.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Credential {
    token: Arc<str>,
    /// Minted from the operator's cluster identity (not a tenant's token).
    cluster: bool,
}

impl Credential {
    /// Wraps a token.
    ///
    /// # Errors
    /// [`FerrVaultError::InvalidCredential`] when the token is empty after trimming or contains
    /// characters that cannot go into an HTTP header.
    pub fn new(token: &str) -> Result<Self, FerrVaultError> {
        let trimmed = token.trim();
        if trimmed.is_empty() {
            return Err(FerrVaultError::InvalidCredential("the token is empty"));
        }
        if !trimmed.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(FerrVaultError::InvalidCredential(
                "the token contains characters that are not printable ASCII",
            ));
        }
        Ok(Self {
            token: Arc::from(trimmed),
            cluster: false,
        })
    }

    /// A bearer minted from the operator's cluster identity.
    ///
    /// # Errors
    /// As [`Credential::new`].
    pub(crate) fn cluster(token: &str) -> Result<Self, FerrVaultError> {
        Ok(Self {
            cluster: true,
            ..Self::new(token)?
        })
    }

    /// Whether this bearer was minted from the operator's cluster identity.
    pub fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// The raw token, for the `Authorization` header only.
    pub(crate) fn bearer(&self) -> &str {
        &self.token
    }

    /// The printable identity of this credential against one base URL.
    pub fn fingerprint(&self, base_url: &str) -> Fingerprint {
        let mut hasher = Sha256::new();
        hasher.update(base_url.as_bytes());
        hasher.update([0u8]);
        hasher.update(self.token.as_bytes());
        let digest = hex::encode(hasher.finalize());
        Fingerprint(digest[..Fingerprint::LEN].to_owned())
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credential(<redacted>)")
    }
}

impl fmt::Display for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// First 12 hex digits of `sha256(base URL, 0x00, token)`: safe for metric labels and logs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Number of hex digits kept: 48 bits tell a handful of credentials apart without
    /// giving an offline guesser a full hash to check candidates against.
    pub const LEN: usize = 12;

    /// The hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fixed fingerprint for unit tests.
    #[cfg(test)]
    pub(crate) fn test(hex: &str) -> Self {
        Self(hex.to_owned())
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_should_never_print_its_token() {
        let credential = Credential::new("fvsat_supersecret").unwrap();
        for printed in [
            format!("{credential:?}"),
            format!("{credential}"),
            format!("{credential:#?}"),
        ] {
            assert!(!printed.contains("supersecret"), "{printed}");
            assert!(printed.contains("<redacted>"), "{printed}");
        }
    }

    #[test]
    fn credential_should_trim_whitespace_and_refuse_empty_tokens() {
        assert_eq!(Credential::new(" fvsat_a\n").unwrap().bearer(), "fvsat_a");
        assert!(Credential::new(" \n\t").is_err());
        assert!(Credential::new("fvsat a").is_err());
    }

    #[test]
    fn fingerprint_should_be_12_hex_digits_that_depend_on_url_and_token() {
        let a = Credential::new("fvsat_a").unwrap();
        let b = Credential::new("fvsat_b").unwrap();
        let fa = a.fingerprint("http://x");
        assert_eq!(fa.as_str().len(), Fingerprint::LEN);
        assert!(fa.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(fa, a.fingerprint("http://x"));
        assert_ne!(fa, b.fingerprint("http://x"));
        assert_ne!(fa, a.fingerprint("http://y"));
        assert!(!fa.as_str().contains("fvsat"));
    }
}
