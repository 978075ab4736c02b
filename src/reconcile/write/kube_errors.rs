//! Kubernetes API failures, carried typed — the `kube::Error` and the action it interrupted —
//! until the pass decides its outcome.
//!
//! # Guarantees
//! A failure prints as its action and the server's status message (or the error kind), never a
//! request or response body: status messages name objects, not their content.

use std::fmt;

use controller_actors::Outcome;
use tracing::warn;

/// `Outcome::Error` reason when a Kubernetes API call outside a reported step failed.
pub(crate) const KUBE_API_ERROR: &str = "KubeApiError";

/// What a pass was doing when a Kubernetes call failed (outside the steps reported in status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KubeAction {
    /// Reading the reconciled object (its kind).
    Read(&'static str),
    /// Adding our finalizer.
    AddFinalizer,
    /// Removing our finalizer.
    RemoveFinalizer,
    /// Listing the FerrVaultSecrets that use a connection being deleted.
    ListDependants,
    /// Writing status (`what` says which status: e.g. "InvalidSpec", "pending rollout").
    WriteStatus(&'static str),
    /// Writing a target Secret (only its conflicts land here: other write failures are
    /// reported in status as `SecretWriteFailed`).
    WriteTarget,
    /// Removing our owner reference from a target on deletion (`deletionPolicy: Retain`).
    RetainTarget,
}

impl fmt::Display for KubeAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(kind) => write!(f, "read {kind}"),
            Self::AddFinalizer => f.write_str("add finalizer"),
            Self::RemoveFinalizer => f.write_str("remove finalizer"),
            Self::ListDependants => f.write_str("list FerrVaultSecrets"),
            Self::WriteStatus("") => f.write_str("update status"),
            Self::WriteStatus(what) => write!(f, "update status with {what}"),
            Self::WriteTarget => f.write_str("write target Secret"),
            Self::RetainTarget => f.write_str("release target Secret"),
        }
    }
}

/// A Kubernetes API call that failed outside the steps reported in status: logged and retried
/// with the work queue's per-key backoff.
#[derive(Debug, thiserror::Error)]
#[error("{action}: {}", kube_error_text(.source))]
pub struct KubeFailure {
    /// What the pass was doing.
    pub action: KubeAction,
    /// The client's error.
    #[source]
    pub source: kube::Error,
}

impl KubeFailure {
    /// `source` interrupted `action`.
    pub fn new(action: KubeAction, source: kube::Error) -> Self {
        Self { action, source }
    }

    /// A closure for `map_err`: `api.get(…).await.map_err(KubeFailure::during(KubeAction::…))`.
    pub fn during(action: KubeAction) -> impl FnOnce(kube::Error) -> Self {
        move |source| Self::new(action, source)
    }

    /// The server refused the write because the object changed since it was read (409).
    pub fn is_conflict(&self) -> bool {
        matches!(&self.source, kube::Error::Api(status) if status.code == 409)
    }
}

impl From<KubeFailure> for Outcome {
    fn from(failure: KubeFailure) -> Self {
        let message = failure.to_string();
        warn!(%message, "Kubernetes API call failed");
        Outcome::Error {
            reason: KUBE_API_ERROR,
            message,
        }
    }
}

/// A Kubernetes API error as a short text: the server's status message, or the error kind.
/// Never the request or response body beyond the status message (which names objects only).
pub(crate) fn kube_error_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// Whether a Kubernetes API error is a 404.
pub(crate) fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}
