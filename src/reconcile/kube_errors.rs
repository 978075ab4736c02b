//! Kubernetes API errors as the reconcilers report them.

use controller_actors::Outcome;
use tracing::warn;

/// `Outcome::Error` reason when a Kubernetes API call outside a reported step failed.
pub const KUBE_API_ERROR: &str = "KubeApiError";

/// A Kubernetes API error as a short text: the server's status message, or the error kind.
/// Never the request or response body beyond the status message (which names objects only).
pub fn kube_error_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// Whether a Kubernetes API error is a 404.
pub fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

/// A Kubernetes API failure outside the steps reported in status: logged and retried with
/// the work queue's per-key backoff.
pub fn api_error(message: String) -> Outcome {
    warn!(%message, "Kubernetes API call failed");
    Outcome::Error {
        reason: KUBE_API_ERROR,
        message,
    }
}
