//! How a pass that stopped early is reported and scheduled.

use std::time::Duration;

use controller_actors::Outcome;

use crate::{
    api::Reason,
    ferrvault::{FerrVaultError, MissingKeys},
    reconcile::{
        connection::access,
        rules::{
            schedule::requeue::{RequeueCase, requeue_after},
            status::secret_status::{ForceSyncSeen, RolloutState},
        },
        write::KubeFailure,
    },
};

/// A failure reported through status: Ready=False with `reason`, retried per `case`.
pub(super) struct Failure {
    pub(super) reason: Reason,
    pub(super) message: String,
    pub(super) case: RequeueCase,
    /// The MissingKeys guard also records the missing keys and the observed generation.
    pub(super) missing: Option<MissingKeys>,
}

impl Failure {
    pub(super) fn new(reason: Reason, message: impl Into<String>, case: RequeueCase) -> Self {
        Self {
            reason,
            message: message.into(),
            case,
            missing: None,
        }
    }
}

/// Why a pass that got past the rule synced nothing after all (what the stores could not show).
pub(super) enum Held {
    /// Suspended, with this reason (`Suspended` or `ConnectionSuspended`).
    Suspended(Reason),
    /// `CreatedOnce` and the target exists: kept.
    Kept {
        /// The target's name.
        target: String,
        /// Its `resourceVersion`.
        version: Option<String>,
        /// The force-sync values to record.
        force_sync: ForceSyncSeen,
        /// A restart still due for it, retried by this pass (`None`: none was). Boxed: it is
        /// rare, and every `Result` of a pass carries a [`Stop`].
        rollout: Option<Box<KeptRollout>>,
    },
}

/// How a pass that kept a `CreatedOnce` target retried a restart still due for it (a forced
/// sync changed its content and the rollout floor deferred the restart, or it failed).
pub(super) struct KeptRollout {
    /// How the retry ended.
    pub(super) state: RolloutState,
    /// When the floor deferred a restart again: how long until it is due.
    pub(super) due_in: Option<Duration>,
    /// `status.lastRolloutHash` after the retry.
    pub(super) last_rollout_hash: Option<String>,
}

/// Why a pass stopped before its status write.
pub(super) enum Stop {
    /// Report through status and Events.
    Fail(Failure),
    /// Throttled: no status write.
    RateLimited(Option<Duration>),
    /// Nothing to sync after all (suspended connection, `CreatedOnce` target that exists): its
    /// status, no timer.
    Quiet(Held),
    /// A Kubernetes API call outside the reported steps failed: retried with backoff.
    Kube(KubeFailure),
    /// Something every pass needs is not available (the content-hash key, the connections'
    /// store): no status write, retried with backoff.
    Unavailable {
        /// A fixed reason (the `Outcome::Error` reason).
        reason: &'static str,
        /// What is missing and why (never a value).
        message: String,
    },
}

impl From<KubeFailure> for Stop {
    fn from(failure: KubeFailure) -> Self {
        Stop::Kube(failure)
    }
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Self {
        Stop::Fail(failure)
    }
}

/// Maps a reveal failure to its condition (reference §2.3), or to the rate-limited path.
pub(super) fn reveal_failure(error: FerrVaultError) -> Stop {
    if error.is_rate_limited() {
        return Stop::RateLimited(error.retry_after());
    }
    if let Some(refused) = access::refusal(&error, "reveal") {
        return Failure::new(refused.reason, refused.message, RequeueCase::Failed).into();
    }
    let (reason, case) = if error.is_auth() {
        (Reason::AuthFailed, RequeueCase::AuthFailed)
    } else if error.is_not_found() {
        (Reason::VaultNotFound, RequeueCase::Failed)
    } else if error.is_response_too_large() {
        (Reason::ResponseTooLarge, RequeueCase::Failed)
    } else {
        (Reason::Unreachable, RequeueCase::Failed)
    };
    Failure::new(reason, error.to_string(), case).into()
}

/// The outcome of a pass that ended with `case` (a synced pass follows the refresh schedule
/// instead): a timed requeue, or done, waiting for a change.
pub(super) fn requeue(case: RequeueCase, refresh: Duration) -> Outcome {
    requeue_after(case, refresh).map_or_else(Outcome::done, Outcome::RequeueAfter)
}
