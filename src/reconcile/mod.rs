//! Reconcile logic: pure functions the FerrVaultSecret and FerrVaultConnection reconcilers call.
//!
//! Nothing here does I/O or reads the clock (callers pass `now`); every function takes values and
//! returns values, so each rule is unit- and property-tested without a server.
//!
//! # Layout
//! - [`transforms`] (+ [`json_expand`]): the `spec.transforms` pipeline over byte values.
//! - [`content_hash`]: the hash stamped on target Secrets and pod templates.
//! - [`conditions`]: condition upsert with transition-time and `observedGeneration` rules.
//! - [`duration`]: Go `time.Duration` parsing and formatting for `refreshInterval`.
//! - [`rollout_rules`]: when workloads must be restarted, and the patch that restarts them.
//! - [`guards`]: missing-keys, token-target and cloud-scope guards; requeue policy.
//! - [`messages`]: the human-readable condition messages, in one place.
//!
//! The reconcilers themselves (I/O):
//! - [`operator`]: the seam the process uses (`Operator::new`, `install`).
//! - [`context`]: what both reconcilers share. [`watches`]: which changes enqueue which keys.
//! - [`secret`]: the FerrVaultSecret reconciler. [`connection`]: the FerrVaultConnection reconciler.
//! - [`token`]: credentials and CA bundles of a connection. [`events`], [`metrics`].
//! - [`field_manager`]: the `fieldManager` of every write.
//! - [`invalid_spec`]: Ready=False/`InvalidSpec` for an object that bypassed the CRD schema.

use std::collections::BTreeMap;

pub mod conditions;
pub mod connection;
pub mod content_hash;
pub mod context;
pub mod duration;
pub mod events;
pub mod field_manager;
pub mod finalizer;
pub mod guards;
pub mod invalid_spec;
pub mod json_expand;
pub mod kube_errors;
pub mod messages;
pub mod metrics;
pub mod operator;
pub mod own_writes;
pub mod rollout_rules;
pub mod secret;
pub mod token;
pub mod transforms;
pub mod watches;

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
