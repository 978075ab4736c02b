//! The content hash of a target Secret (reference §3.4).
//!
//! # Guarantees
//! - Deterministic: SHA-256 over the keys in sorted order, each fed as `key`, `0x00`, `value`,
//!   `0x00`; lowercase hex. Same bytes as the Go operator's hash for the same data, so moving from
//!   it triggers no spurious rollout.
//! - Only the digest leaves this module; it reveals nothing usable about the values.

use sha2::{Digest, Sha256};

use super::SecretData;

/// The hash written to the `ferrvault.com/content-hash` annotation and compared for drift and
/// rollouts. Compute it over exactly the data that is written (after transforms).
pub fn content_hash(data: &SecretData) -> String {
    let mut hasher = Sha256::new();
    // BTreeMap iterates in sorted key order, which is what makes the hash deterministic.
    for (key, value) in data {
        hasher.update(key.as_bytes());
        hasher.update([0u8]);
        hasher.update(value);
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::secret_data_from_strings;

    fn data(pairs: &[(&str, &str)]) -> SecretData {
        secret_data_from_strings(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn content_hash_should_match_an_independently_computed_digest() {
        // printf 'A\0x\0B\0y\0' | sha256sum
        assert_eq!(
            content_hash(&data(&[("B", "y"), ("A", "x")])),
            "c4b54fc2b166ade5087a387eeb48709ce55cff948079350c3dc17b8666cc5dcf"
        );
    }

    #[test]
    fn content_hash_of_nothing_should_be_the_sha256_of_the_empty_input() {
        assert_eq!(
            content_hash(&SecretData::new()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn content_hash_should_separate_keys_from_values() {
        // Without the 0x00 separators these two would hash the same bytes "ab" + "c".
        assert_ne!(
            content_hash(&data(&[("ab", "c")])),
            content_hash(&data(&[("a", "bc")]))
        );
    }

    #[test]
    fn content_hash_should_be_lowercase_hex_of_32_bytes() {
        let hash = content_hash(&data(&[("k", "v")]));
        assert_eq!(hash.len(), 64);
        assert!(
            hash.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        );
    }
}
