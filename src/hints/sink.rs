//! Where accepted hints go: the seam between the endpoint and the reconcilers.

use super::body::Hint;

/// Where accepted hints go: the reconcilers mark the FerrVaultSecrets they match due.
///
/// # Guarantees expected from the implementor
/// `hint` returns at once (no I/O awaited on the endpoint's thread) and reveals nothing.
pub(crate) trait HintSink: Send + Sync + 'static {
    /// `hint` was accepted.
    fn hint(&self, hint: Hint);
}
