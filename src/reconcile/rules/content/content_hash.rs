//! The content hash of a target Secret, keyed (reference §3.4 hashed without a key).
//!
//! # Guarantees
//! - Keyed: HMAC-SHA256 with the operator's [`ContentHashKey`] over the keys in sorted order, each
//!   key and each value fed after its length (8 bytes, big-endian); lowercase hex. Someone who
//!   reads the hash (pod templates, status, Events) but not the key cannot test guesses of the
//!   values offline.
//! - Unambiguous (issue 34 point 8): two different contents are two different inputs to the
//!   HMAC. The encoding before it, `key 0x00 value 0x00`, fed `{a: "x\0b\0y"}` and
//!   `{a: "x", b: "y"}` as the same bytes, so a change between them went unnoticed.
//! - Deterministic for one key: the same data gives the same hash, so rollouts and drift checks
//!   compare hashes as before.
//! - An upgrade rewrites no target and restarts no workload: [`upgraded`] reads a hash recorded
//!   in an earlier encoding of the same content (the Go operator's unkeyed SHA-256, or this
//!   operator's keyed `0x00`-separated one) as today's, and [`stamp`] keeps a target's keyed
//!   stamp of the earlier encoding as it is until the content next changes. The unkeyed one is
//!   replaced at once: it lets anyone who reads it test guesses of the values.
//!
//! # Caveats
//! - Until its content next changes, a target stamped in the earlier keyed encoding is compared
//!   through that encoding, as ambiguous as before the upgrade (only contents whose values hold
//!   `0x00` bytes can be confused). A target read with a GET is compared by its data as well.

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

    /// Another key for another use, derived from this one: its MAC of `purpose`. Whoever knows a
    /// derived key learns nothing of this one, and no two purposes share a key.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut derived = [0u8; 32];
        derived.copy_from_slice(hmac::sign(&self.0, purpose.as_bytes()).as_ref());
        derived
    }
}

impl std::fmt::Debug for ContentHashKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContentHashKey(<redacted>)")
    }
}

/// Feeds `data` to `update` in the hash encoding: sorted keys, each key and then its value
/// after its length as 8 big-endian bytes, so no two contents are fed as the same bytes.
fn feed(data: &SecretData, update: &mut dyn FnMut(&[u8])) {
    // BTreeMap iterates in sorted key order, which is what makes the hash deterministic.
    for (key, value) in data {
        for field in [key.as_bytes(), value.as_slice()] {
            update(&(field.len() as u64).to_be_bytes());
            update(field);
        }
    }
}

/// Feeds `data` in the encoding before [`feed`]: sorted keys, each `key 0x00 value 0x00`. Kept
/// to recognise hashes recorded in it ([`upgraded`]); never used for a new hash.
fn feed_separated(data: &SecretData, update: &mut dyn FnMut(&[u8])) {
    for (key, value) in data {
        update(key.as_bytes());
        update(&[0]);
        update(value);
        update(&[0]);
    }
}

/// An encoding of [`SecretData`]: feeds its bytes, in order, to the callback.
type Encoding = fn(&SecretData, &mut dyn FnMut(&[u8]));

/// The keyed hash of `data` as `feed` encodes it.
fn keyed(key: &ContentHashKey, data: &SecretData, feed: Encoding) -> String {
    let mut context = hmac::Context::with_key(&key.0);
    feed(data, &mut |bytes| context.update(bytes));
    hex::encode(context.sign().as_ref())
}

/// The hash written to the `ferrvault.com/content-hash` annotation and compared for drift and
/// rollouts. Compute it over exactly the data that is written (after transforms).
pub fn content_hash(key: &ContentHashKey, data: &SecretData) -> String {
    keyed(key, data, feed)
}

/// The keyed hash this operator stamped for `data` before the encoding was length-prefixed.
pub fn separated_content_hash(key: &ContentHashKey, data: &SecretData) -> String {
    keyed(key, data, feed_separated)
}

/// A short identifier of `key`, for `status.observedInputs`: its hash of no data (the same in
/// both keyed encodings), so a new key (rotation) shows as a new identifier while the key itself
/// stays unknown (HMAC outputs reveal nothing of the key).
pub(crate) fn key_id(key: &ContentHashKey) -> String {
    let mut id = content_hash(key, &SecretData::new());
    id.truncate(12);
    id
}

/// The unkeyed SHA-256 the Go operator (and this one before the key) stamped for `data`.
pub fn legacy_content_hash(data: &SecretData) -> String {
    let mut hasher = Sha256::new();
    feed_separated(data, &mut |bytes| hasher.update(bytes));
    hex::encode(hasher.finalize())
}

/// How a recorded hash relates to the content about to be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recorded {
    /// Today's hash of it, or of another content: compared as it is.
    AsIs,
    /// The Go operator's unkeyed hash of this content.
    Unkeyed,
    /// This operator's keyed hash of this content in the `0x00`-separated encoding.
    Separated,
}

/// Which earlier encoding of `data`, if any, `recorded` is (`current` is today's hash of `data`).
fn recognise(recorded: &str, key: &ContentHashKey, data: &SecretData, current: &str) -> Recorded {
    if recorded == current {
        Recorded::AsIs
    } else if recorded == separated_content_hash(key, data) {
        Recorded::Separated
    } else if recorded == legacy_content_hash(data) {
        Recorded::Unkeyed
    } else {
        Recorded::AsIs
    }
}

/// A hash recorded in an earlier encoding, read as `current` when it is an earlier encoding of
/// the same `data` (unkeyed, or keyed and `0x00`-separated): the content did not change, so the
/// upgrade restarts nothing. Any other recorded hash is returned unchanged.
pub(crate) fn upgraded(
    recorded: Option<&str>,
    key: &ContentHashKey,
    data: &SecretData,
    current: &str,
) -> Option<String> {
    let recorded = recorded?;
    Some(match recognise(recorded, key, data, current) {
        Recorded::Unkeyed | Recorded::Separated => current.to_owned(),
        Recorded::AsIs => recorded.to_owned(),
    })
}

/// The hash to stamp on a target whose annotation records `recorded` and which is to hold `data`
/// (`current` is today's hash of it): `recorded` itself when it is the keyed `0x00`-separated
/// hash of the same content, so an upgrade rewrites no target; else `current` (an unkeyed stamp
/// is replaced, since anyone who reads it can test guesses of the values).
pub(crate) fn stamp(
    recorded: Option<&str>,
    key: &ContentHashKey,
    data: &SecretData,
    current: &str,
) -> String {
    match recorded.map(|recorded| (recorded, recognise(recorded, key, data, current))) {
        Some((recorded, Recorded::Separated)) => recorded.to_owned(),
        _ => current.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::content::secret_data_from_strings;

    fn data(pairs: &[(&str, &str)]) -> SecretData {
        secret_data_from_strings(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    fn key(byte: u8) -> ContentHashKey {
        ContentHashKey::from_bytes(&[byte; ContentHashKey::LEN]).expect("32 bytes")
    }

    #[test]
    fn content_hash_should_match_an_independently_computed_hmac() {
        // printf '\0\0\0\0\0\0\0\1A\0\0\0\0\0\0\0\1x\0\0\0\0\0\0\0\1B\0\0\0\0\0\0\0\1y' \
        //   | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf '07%.0s' $(seq 32))
        assert_eq!(
            content_hash(&key(7), &data(&[("B", "y"), ("A", "x")])),
            "4353b1c3acd309bdf1ce475f49d407ae01d1587817bfbeff46995cbc1f12165f"
        );
        // printf 'A\0x\0B\0y\0' | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf '07%.0s' $(seq 32))
        assert_eq!(
            separated_content_hash(&key(7), &data(&[("B", "y"), ("A", "x")])),
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
        // Without anything between them these two would hash the same bytes "ab" + "c".
        assert_ne!(
            content_hash(&key(1), &data(&[("ab", "c")])),
            content_hash(&key(1), &data(&[("a", "bc")]))
        );
    }

    #[test]
    fn contents_the_separated_encoding_confused_should_hash_differently() {
        let one_key = data(&[("a", "x\0b\0y")]);
        let two_keys = data(&[("a", "x"), ("b", "y")]);
        assert_eq!(
            separated_content_hash(&key(1), &one_key),
            separated_content_hash(&key(1), &two_keys),
            "the ambiguity this encoding fixes"
        );
        assert_ne!(content_hash(&key(1), &one_key), content_hash(&key(1), &two_keys));
        // A value holding what looks like a length prefix is still its own content.
        let prefixed = secret_data_from_strings([("a".to_owned(), "\0\0\0\0\0\0\0\x01b".to_owned())]);
        assert_ne!(
            content_hash(&key(1), &prefixed),
            content_hash(&key(1), &data(&[("a", ""), ("b", "")]))
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
    fn a_derived_key_should_depend_on_the_key_and_the_purpose() {
        assert_eq!(key(1).derive("a"), key(1).derive("a"));
        assert_ne!(key(1).derive("a"), key(2).derive("a"));
        assert_ne!(key(1).derive("a"), key(1).derive("b"));
    }

    #[test]
    fn a_short_key_should_be_refused_and_a_key_never_printed() {
        assert!(ContentHashKey::from_bytes(&[1; 31]).is_none());
        assert_eq!(format!("{:?}", key(0x41)), "ContentHashKey(<redacted>)");
    }

    #[test]
    fn a_legacy_hash_of_the_same_content_should_read_as_the_keyed_one_and_be_re_stamped() {
        let content = data(&[("A", "x")]);
        let current = content_hash(&key(1), &content);
        let legacy = legacy_content_hash(&content);
        assert_eq!(
            upgraded(Some(&legacy), &key(1), &content, &current),
            Some(current.clone())
        );
        assert_eq!(
            stamp(Some(&legacy), &key(1), &content, &current),
            current,
            "never kept"
        );
        let other_content = legacy_content_hash(&data(&[("A", "y")]));
        assert_eq!(
            upgraded(Some(&other_content), &key(1), &content, &current),
            Some(other_content.clone()),
            "changed content stays a change"
        );
        assert_eq!(stamp(Some(&other_content), &key(1), &content, &current), current);
        assert_eq!(upgraded(None, &key(1), &content, &current), None);
        assert_eq!(stamp(None, &key(1), &content, &current), current);
    }

    #[test]
    fn a_separated_hash_of_the_same_content_should_read_as_todays_and_stay_stamped() {
        let content = data(&[("A", "x"), ("B", "y")]);
        let current = content_hash(&key(1), &content);
        let separated = separated_content_hash(&key(1), &content);
        assert_ne!(separated, current);
        assert_eq!(
            upgraded(Some(&separated), &key(1), &content, &current),
            Some(current.clone()),
            "no rollout for an upgrade"
        );
        assert_eq!(
            stamp(Some(&separated), &key(1), &content, &current),
            separated,
            "no target rewritten for an upgrade"
        );
        assert_eq!(stamp(Some(&current), &key(1), &content, &current), current);
        let changed = data(&[("A", "x"), ("B", "z")]);
        let now = content_hash(&key(1), &changed);
        assert_eq!(
            upgraded(Some(&separated), &key(1), &changed, &now),
            Some(separated.clone()),
            "changed content stays a change"
        );
        assert_eq!(
            stamp(Some(&separated), &key(1), &changed, &now),
            now,
            "re-stamped at the change"
        );
        let under_another_key = separated_content_hash(&key(2), &content);
        assert_eq!(
            upgraded(Some(&under_another_key), &key(1), &content, &current),
            Some(under_another_key),
            "another key's hash stays a change (a rotation restarts once, as documented)"
        );
    }
}
