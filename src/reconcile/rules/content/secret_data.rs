//! [`SecretData`]: Secret content as the operator handles it (key to raw bytes, sorted), and
//! the 1 MiB a Secret may hold.

use std::collections::BTreeMap;

/// Secret content as the operator handles it: key to raw bytes, sorted by key.
///
/// Values are bytes, not strings, so binary results of `base64Decode` reach the target Secret's
/// `data` unchanged; the sorted map makes hashing and listing keys deterministic.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// Largest content a Secret may hold: the API server refuses Secrets over 1 MiB. No transform
/// step builds more (see [`transforms`](super::transforms)), and no larger content is written.
pub const MAX_SECRET_BYTES: usize = 1024 * 1024;

/// Total size of keys and values, as the API server counts a Secret's data.
pub fn payload_bytes(data: &SecretData) -> usize {
    data.iter().map(|(k, v)| k.len() + v.len()).sum()
}

/// Converts revealed string values (as FerrVault returns them) into [`SecretData`].
pub(crate) fn secret_data_from_strings(values: impl IntoIterator<Item = (String, String)>) -> SecretData {
    values
        .into_iter()
        .map(|(key, value)| (key, value.into_bytes()))
        .collect()
}
