//! The guards of the FerrVaultSecret reconciler (reference §3.2 steps 6 and 12): no reveal
//! without a cloud scope, and no write of an existing target while requested keys are missing.
//! Step 11, writing the connection's own token Secret, is gone: such a target is refused (see
//! [`target_access`](super::target_access)).
//!
//! # Guarantees
//! - An existing target is never overwritten while requested keys are missing.

use crate::{api::ConnectionMode, reconcile::rules::content::SecretData};

/// What to do with the target Secret when the reveal reported missing keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MissingKeysDecision {
    /// Nothing is missing: write the target; Ready follows the write.
    WriteAll,
    /// Keys are missing but the target does not exist and some keys were found: create it with
    /// what was found (a partial Secret beats none), then report `MissingKeys`.
    CreatePartial,
    /// Keys are missing and the target exists (or nothing was found): leave it untouched so
    /// workloads keep the last good values; report `MissingKeys` and retry within
    /// [`MISSING_KEYS_RETRY`](crate::reconcile::rules::schedule::requeue::MISSING_KEYS_RETRY).
    LeaveTargetUnchanged,
}

/// The missing-keys guard (reference §3.2 step 12).
pub(crate) fn missing_keys_decision(
    missing: &[String],
    target_exists: bool,
    data: &SecretData,
) -> MissingKeysDecision {
    match (missing.is_empty(), target_exists || data.is_empty()) {
        (true, _) => MissingKeysDecision::WriteAll,
        (false, false) => MissingKeysDecision::CreatePartial,
        (false, true) => MissingKeysDecision::LeaveTargetUnchanged,
    }
}

/// The cloud-scope guard (reference §3.2 step 6): cloud mode needs the connection's
/// `organization` and the secret's `project`; when either is empty no API call is made.
pub(crate) fn missing_cloud_scope(
    mode: ConnectionMode,
    organization: Option<&str>,
    project: Option<&str>,
) -> bool {
    let blank = |value: Option<&str>| value.is_none_or(str::is_empty);
    match mode {
        ConnectionMode::Cloud => blank(organization) || blank(project),
        ConnectionMode::Ferrvault => false,
    }
}

#[cfg(test)]
mod tests;
