//! Where accepted hints go: the seam between the endpoint and the reconcilers.

use super::body::Hint;

/// Where accepted hints go: the reconcilers mark the FerrVaultSecrets they match due.
///
/// # Guarantees expected from the implementor
/// `hint` returns at once (no I/O awaited on the endpoint's thread) and reveals nothing.
pub(crate) trait HintSink: Send + Sync + 'static {
    /// Whether an accepted hint would be acted on now: this replica leads (a standby's hint
    /// would be lost, so the endpoint answers 503 and the sender retries, reaching the leader).
    fn is_accepting(&self) -> bool;

    /// `hint` was accepted.
    fn hint(&self, hint: Hint);
}
