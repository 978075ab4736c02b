//! Pure reconcile rules: values in, values out. Nothing here does I/O or reads the clock (callers
//! pass `now`), so every rule is unit- and property-tested without a server.
//!
//! - [`transforms`] (+ [`json_expand`]): the `spec.transforms` pipeline over byte values.
//! - [`content_hash`]: the keyed hash stamped on target Secrets and pod templates.
//! - [`conditions`]: condition upsert with transition-time and `observedGeneration` rules.
//! - [`duration`]: Go `time.Duration` parsing and formatting (`refreshInterval`, flags).
//! - [`rollout_rules`]: when workloads must be restarted (and the rollout floor), and the patch
//!   that restarts them.
//! - [`target_access`]: whether a FerrVaultSecret may write its target Secret (ownership,
//!   refused types, connections' Secrets).
//! - [`guards`]: missing-keys and cloud-scope guards; requeue policy.
//! - [`freshness`]: whether a pass has anything to do, and when the next refresh is due.
//! - [`secret_status`]: what a FerrVaultSecret's status becomes after each outcome of a pass.
//! - [`messages`]: the human-readable condition messages, in one place.
//! - [`bounded_text`]: the 1 KiB bound of condition messages and log fields.

use std::collections::BTreeMap;

pub mod bounded_text;
pub mod conditions;
pub mod content_hash;
pub mod duration;
pub mod freshness;
pub mod guards;
pub mod json_expand;
pub mod messages;
pub mod rollout_rules;
pub mod secret_status;
pub mod target_access;
pub mod transforms;

/// Secret content as the operator handles it: key to raw bytes, sorted by key.
///
/// Values are bytes, not strings, so binary results of `base64Decode` reach the target Secret's
/// `data` unchanged; the sorted map makes hashing and listing keys deterministic.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// Converts revealed string values (as FerrVault returns them) into [`SecretData`].
pub fn secret_data_from_strings(values: impl IntoIterator<Item = (String, String)>) -> SecretData {
    values
        .into_iter()
        .map(|(key, value)| (key, value.into_bytes()))
        .collect()
}
