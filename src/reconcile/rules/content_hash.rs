//! The content hash of a target Secret, keyed (reference §3.4 hashed without a key).
//!
//! # Guarantees
//! - Keyed: HMAC-SHA256 with the operator's [`ContentHashKey`] over the keys in sorted order, each
//!   fed as `key`, `0x00`, `value`, `0x00`; lowercase hex. Someone who reads the hash (pod
//!   templates, status, Events) but not the key cannot test guesses of the values offline.
//! - Deterministic for one key: the same data gives the same hash, so rollouts and drift checks
//!   compare hashes as before.
//! - [`legacy_content_hash`] is the Go operator's unkeyed SHA-256 of the same encoding; it is only
//!   ever compared with hashes recorded before the key existed ([`upgraded`]), never written.

use ring::hmac;
use sha2::{Digest, Sha256};

use super::SecretData;

/// The operator-held HMAC key of the content hash. Its bytes never leave it (no `Debug` of them).
pub struct ContentHashKey(hmac::Key);

impl ContentHashKey {
    /// Length of a generated key, and the least accepted: 32 bytes (the HMAC-SHA256 block
    /// recommendation of RFC 2104 §3 is at least the output length).
    pub const LEN: usize = 32;

    /// A key from stored bytes; `None` when shorter than [`ContentHashKey::LEN`].
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        (bytes.len() >= Self::LEN).then(|| Self(hmac::Key::new(hmac::HMAC_SHA256, bytes)))
    }
}

impl std::fmt::Debug for ContentHashKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContentHashKey(<redacted>)")
    }
}

/// Feeds `data` to `update` in the hash encoding: sorted keys, each `key 0x00 value 0x00`.
fn feed(data: &SecretData, mut update: impl FnMut(&[u8])) {
    // BTreeMap iterates in sorted key order, which is what makes the hash deterministic.
    for (key, value) in data {
        update(key.as_bytes());
        update(&[0]);
        update(value);
        update(&[0]);
    }
}

/// The hash written to the `ferrvault.com/content-hash` annotation and compared for drift and
/// rollouts. Compute it over exactly the data that is written (after transforms).
pub fn content_hash(key: &ContentHashKey, data: &SecretData) -> String {
    let mut context = hmac::Context::with_key(&key.0);
    feed(data, |bytes| context.update(bytes));
    hex::encode(context.sign().as_ref())
}

/// A short identifier of `key`, for `status.observedInputs`: its hash of no data, so a new key
/// (rotation) shows as a new identifier while the key itself stays unknown (HMAC outputs reveal
/// nothing of the key).
pub fn key_id(key: &ContentHashKey) -> String {
    let mut id = content_hash(key, &SecretData::new());
    id.truncate(12);
    id
}

/// The unkeyed SHA-256 the Go operator (and this one before the key) stamped for `data`.
pub fn legacy_content_hash(data: &SecretData) -> String {
    let mut hasher = Sha256::new();
    feed(data, |bytes| hasher.update(bytes));
    hex::encode(hasher.finalize())
}

/// A hash recorded before the key existed, read as `current` when it is the unkeyed hash of the
/// same `data`: the content did not change, so the upgrade re-stamps it and restarts nothing.
/// Any other recorded hash is returned unchanged.
pub fn upgraded(recorded: Option<&str>, data: &SecretData, current: &str) -> Option<String> {
    let recorded = recorded?;
    if recorded != current && recorded == legacy_content_hash(data) {
        return Some(current.to_owned());
    }
    Some(recorded.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::secret_data_from_strings;

    fn data(pairs: &[(&str, &str)]) -> SecretData {
        secret_data_from_strings(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    fn key(byte: u8) -> ContentHashKey {
        ContentHashKey::from_bytes(&[byte; ContentHashKey::LEN]).expect("32 bytes")
    }

    #[test]
    fn content_hash_should_match_an_independently_computed_hmac() {
        // printf 'A\0x\0B\0y\0' | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf '07%.0s' $(seq 32))
        assert_eq!(
            content_hash(&key(7), &data(&[("B", "y"), ("A", "x")])),
            "6e5f19d21c7a2c808e3f416fb9b495496d2de2494231c7a518e1419f725fdabe"
        );
    }

    #[test]
    fn the_same_content_under_another_key_should_hash_differently() {
        let content = data(&[("PIN", "1234")]);
        assert_ne!(content_hash(&key(1), &content), content_hash(&key(2), &content));
        assert_eq!(content_hash(&key(1), &content), content_hash(&key(1), &content));
        assert_ne!(
            content_hash(&key(1), &content),
            legacy_content_hash(&content),
            "the unkeyed digest is never what is stamped"
        );
    }

    #[test]
    fn legacy_hash_should_be_the_go_operators_digest() {
        // printf 'A\0x\0B\0y\0' | sha256sum
        assert_eq!(
            legacy_content_hash(&data(&[("B", "y"), ("A", "x")])),
            "c4b54fc2b166ade5087a387eeb48709ce55cff948079350c3dc17b8666cc5dcf"
        );
        assert_eq!(
            legacy_content_hash(&SecretData::new()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn content_hash_should_separate_keys_from_values() {
        // Without the 0x00 separators these two would hash the same bytes "ab" + "c".
        assert_ne!(
            content_hash(&key(1), &data(&[("ab", "c")])),
            content_hash(&key(1), &data(&[("a", "bc")]))
        );
    }

    #[test]
    fn content_hash_should_be_lowercase_hex_of_32_bytes() {
        let hash = content_hash(&key(1), &data(&[("k", "v")]));
        assert_eq!(hash.len(), 64);
        assert!(
            hash.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
    }

    #[test]
    fn a_short_key_should_be_refused_and_a_key_never_printed() {
        assert!(ContentHashKey::from_bytes(&[1; 31]).is_none());
        assert_eq!(format!("{:?}", key(0x41)), "ContentHashKey(<redacted>)");
    }

    #[test]
    fn a_legacy_hash_of_the_same_content_should_read_as_the_keyed_one() {
        let content = data(&[("A", "x")]);
        let current = content_hash(&key(1), &content);
        let legacy = legacy_content_hash(&content);
        assert_eq!(upgraded(Some(&legacy), &content, &current), Some(current.clone()));
        let other_content = legacy_content_hash(&data(&[("A", "y")]));
        assert_eq!(
            upgraded(Some(&other_content), &content, &current),
            Some(other_content),
            "changed content stays a change"
        );
        assert_eq!(upgraded(None, &content, &current), None);
    }
}
