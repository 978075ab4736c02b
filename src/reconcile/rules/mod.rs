//! Pure reconcile rules: values in, values out. Nothing here does I/O or reads the clock (callers
//! pass `now`), so every rule is unit- and property-tested without a server.
//!
//! - [`transforms`] (+ [`json_expand`]): the `spec.transforms` pipeline over byte values.
//! - [`content_hash`]: the keyed hash stamped on target Secrets and pod templates.
//! - [`conditions`]: condition upsert with transition-time and `observedGeneration` rules.
//! - [`duration`]: Go `time.Duration` parsing and formatting (`refreshInterval`, flags).
//! - [`duration_floor`]: the operator's floor under every interval a tenant sets, and its
//!   condition.
//! - [`token_bucket`]: a token bucket over instants the caller passes (write budget, Event spam
//!   filter).
//! - [`rollout_rules`]: when workloads must be restarted (and the rollout floor), and the patch
//!   that restarts them.
//! - [`target_access`]: whether a FerrVaultSecret may write its target Secret (ownership,
//!   refused types, connections' Secrets).
//! - [`credential_opt_in`]: which Secrets a connection may use as its credential
//!   (`--require-credential-opt-in`).
//! - [`guards`]: missing-keys and cloud-scope guards; requeue policy.
//! - [`freshness`]: whether a pass has anything to do, and when the next refresh is due.
//! - [`secret_status`]: what a FerrVaultSecret's status becomes after each outcome of a pass.
//! - [`messages`]: the human-readable condition messages, in one place.
//! - [`bounded_text`]: the 1 KiB bound of condition messages and log fields.
//! - [`spec_bounds`]: the CRD schema's length bounds, checked again for objects stored past it.

use std::collections::BTreeMap;

pub(crate) mod bounded_text;
pub(crate) mod conditions;
pub(crate) mod content_hash;
pub(crate) mod credential_opt_in;
pub(crate) mod duration;
pub(crate) mod duration_floor;
pub(crate) mod freshness;
pub(crate) mod guards;
pub mod json_expand;
pub(crate) mod messages;
pub(crate) mod rollout_rules;
pub(crate) mod secret_status;
pub(crate) mod spec_bounds;
pub(crate) mod target_access;
pub(crate) mod token_bucket;
pub(crate) mod transforms;

/// Secret content as the operator handles it: key to raw bytes, sorted by key.
///
/// Values are bytes, not strings, so binary results of `base64Decode` reach the target Secret's
/// `data` unchanged; the sorted map makes hashing and listing keys deterministic.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// Largest content a Secret may hold: the API server refuses Secrets over 1 MiB. No transform
/// step builds more (see [`transforms`]), and no larger content is written.
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
