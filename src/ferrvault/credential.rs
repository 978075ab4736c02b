//! The credential newtype: a bearer token that never prints itself.
//!
//! # Guarantees
//! - `Debug` and `Display` print `<redacted>`; the token leaves this type only through
//!   [`Credential::bearer`], which is crate-private and used to build the `Authorization` header.
//! - A bearer minted from the operator's cluster identity is marked as such
//!   ([`Credential::is_cluster`]), so the client can refuse to send it where it does not belong.
//! - The only identity a credential shows the outside world is its [`Fingerprint`]: the first
//!   12 hex digits of `HMAC-SHA256(fingerprint key, len(base URL), base URL, token)`, so metrics
//!   and logs can tell credentials apart without revealing the token. Keyed (issue 34 point 8):
//!   a plain hash let whoever reads `/metrics` test guesses of a low-entropy token offline; a
//!   fingerprint tells nothing to someone without the key, however short the token.
//! - The fingerprint key of the operator is derived from its content-hash key
//!   ([`use_fingerprint_key`], called when that key is loaded, before anything is revealed), so a
//!   credential keeps its fingerprint across restarts and on every replica: its metric series
//!   and `/debug/queue` entries continue instead of starting over at each failover. A process
//!   that never installs one (a client used outside `run`) uses a random key of its own.

use std::{
    fmt,
    sync::{Arc, OnceLock},
};

use ring::{
    hmac,
    rand::{SecureRandom, SystemRandom},
};

use super::FerrVaultError;

/// The key of every fingerprint this process computes: installed once, or random on first use.
static FINGERPRINT_KEY: OnceLock<hmac::Key> = OnceLock::new();

/// Makes `key` (32 bytes or more, secret) the key of this process's fingerprints; returns whether
/// it was installed. Only the first key of a process counts, and only if no fingerprint was
/// computed before: fingerprints never change within a process.
pub fn use_fingerprint_key(key: &[u8]) -> bool {
    FINGERPRINT_KEY
        .set(hmac::Key::new(hmac::HMAC_SHA256, key))
        .is_ok()
}

/// This process's fingerprint key: the installed one, else a random one.
fn fingerprint_key() -> &'static hmac::Key {
    FINGERPRINT_KEY.get_or_init(|| {
        let mut bytes = [0u8; 32];
        // Without an installed key nor random bytes, fall back on the time: fingerprints still
        // tell credentials apart, and hide tokens as well as a guessable key can.
        if SystemRandom::new().fill(&mut bytes).is_err() {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            bytes[..16].copy_from_slice(&now.as_nanos().to_be_bytes());
        }
        hmac::Key::new(hmac::HMAC_SHA256, &bytes)
    })
}

/// A FerrVault bearer token (`fvsat_…`, `fft_…`, `ffclust_…`).
///
/// Cheap to clone. Surrounding whitespace is trimmed (tokens copied into Secrets often carry
/// a trailing newline), an empty token is refused.
///
/// Equal (and hashed) by token and origin only, not by [`Credential::is_shared`]: one token is one
/// budget at the server, so the client paces it with one pacer however it is used.
#[derive(Clone)]
pub struct Credential {
    token: Arc<str>,
    /// Minted from the operator's cluster identity (not a tenant's token).
    cluster: bool,
    /// Spent by every shard's holder (a ClusterFerrVaultConnection's token): under shards, its
    /// pacer paces this replica's share of the budget only (`share.rs`).
    shared: bool,
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
            shared: false,
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

    /// This credential as one every shard's holder spends (a ClusterFerrVaultConnection's
    /// token): with `--shards N > 1` the client paces the token at this replica's share of the
    /// budget only, from its first use as such on (whatever else uses the same token: one token,
    /// one budget).
    #[must_use]
    pub fn shared_across_shards(self) -> Self {
        Self { shared: true, ..self }
    }

    /// Whether this credential is spent by every shard's holder
    /// ([`Credential::shared_across_shards`]).
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// The raw token, for the `Authorization` header only.
    pub(crate) fn bearer(&self) -> &str {
        &self.token
    }

    /// The printable identity of this credential against one base URL, with this process's
    /// fingerprint key (see the module guarantees).
    pub fn fingerprint(&self, base_url: &str) -> Fingerprint {
        self.fingerprint_with(fingerprint_key(), base_url)
    }

    fn fingerprint_with(&self, key: &hmac::Key, base_url: &str) -> Fingerprint {
        let mut context = hmac::Context::with_key(key);
        context.update(&(base_url.len() as u64).to_be_bytes());
        context.update(base_url.as_bytes());
        context.update(self.token.as_bytes());
        let digest = hex::encode(context.sign().as_ref());
        Fingerprint(digest[..Fingerprint::LEN].to_owned())
    }
}

impl PartialEq for Credential {
    fn eq(&self, other: &Self) -> bool {
        (&self.token, self.cluster) == (&other.token, other.cluster)
    }
}

impl Eq for Credential {}

impl std::hash::Hash for Credential {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.token, self.cluster).hash(state);
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

/// First 12 hex digits of the keyed MAC of a base URL and a token: safe for metric labels and
/// logs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Number of hex digits kept: 48 bits tell a handful of credentials apart (and, keyed, give
    /// an offline guesser nothing to check candidates against).
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

    fn key(byte: u8) -> hmac::Key {
        hmac::Key::new(hmac::HMAC_SHA256, &[byte; 32])
    }

    #[test]
    fn fingerprint_should_be_keyed_not_the_plain_hash_of_url_and_token() {
        use sha2::{Digest, Sha256};
        // A four-digit PIN as the token: its plain hash falls to 10,000 guesses.
        let pin = Credential::new("4821").unwrap();
        let mut plain = Sha256::new();
        plain.update(b"https://fv");
        plain.update([0u8]);
        plain.update(b"4821");
        let plain = hex::encode(plain.finalize());
        let keyed = pin.fingerprint_with(&key(1), "https://fv");
        assert_ne!(keyed.as_str(), &plain[..Fingerprint::LEN], "not the plain hash");
        assert_ne!(pin.fingerprint("https://fv").as_str(), &plain[..Fingerprint::LEN]);
        // RFC 2104 HMAC-SHA256, key 32 x 0x01, over len(url) as 8 big-endian bytes, url, token:
        // printf '\0\0\0\0\0\0\0\12https://fv4821' | openssl dgst -sha256 -mac HMAC \
        //   -macopt hexkey:$(printf '01%.0s' $(seq 32))
        assert_eq!(keyed.as_str(), "6e02ca096bf6");
    }

    #[test]
    fn fingerprint_should_be_stable_for_one_key_and_differ_under_another() {
        let pin = Credential::new("4821").unwrap();
        assert_eq!(
            pin.fingerprint_with(&key(1), "https://fv"),
            pin.fingerprint_with(&key(1), "https://fv"),
            "the same key (the same content-hash key: a restart, another replica): the same fingerprint"
        );
        assert_ne!(
            pin.fingerprint_with(&key(1), "https://fv"),
            pin.fingerprint_with(&key(2), "https://fv")
        );
        assert_eq!(
            pin.fingerprint("https://fv"),
            pin.fingerprint("https://fv"),
            "within a process"
        );
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
