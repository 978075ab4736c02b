//! The requeue policy of the FerrVaultSecret reconciler (reference §3.3), without the Go
//! operator's `0s` defect (§8 item 9): when a pass runs again after each outcome, and the
//! refresh interval it runs on.
//!
//! # Guarantees
//! - Every failure is retried on a timer even with `refreshInterval: 0s`; only a success, an
//!   invalid spec (which only an edit can fix) and a refused target (retried when the objects
//!   involved change) wait for the next event when refresh is disabled.
//! - No timed requeue is shorter than [`MIN_REQUEUE`].

use std::time::Duration;

use super::duration::{DurationError, parse_go_duration};

/// Retry bound for `MissingKeys`: keys added upstream show up within a
/// minute (reference `missingKeysRetry`).
pub(crate) const MISSING_KEYS_RETRY: Duration = Duration::from_secs(60);

/// Requeue after `AuthFailed` (401/403): a credential fix usually comes with a token Secret
/// change, which triggers a reconcile at once; the timer is the fallback (reference: 5m).
pub(crate) const AUTH_FAILED_REQUEUE: Duration = Duration::from_secs(5 * 60);

/// Upper bound of the retry delay after any other failure (`Unreachable`, `VaultNotFound`,
/// `ConnectionNotFound`, write failures…). The Go operator waited a whole refresh interval (1h
/// by default, forever with `0s`); 5m keeps a transient outage short without hammering a server
/// that is down (the per-credential limiter paces the retries anyway).
pub(crate) const FAILURE_RETRY: Duration = Duration::from_secs(5 * 60);

/// Floor of every timed requeue, so `refreshInterval: 1ms` cannot spin a worker or burn the
/// credential's request budget.
pub(crate) const MIN_REQUEUE: Duration = Duration::from_secs(1);

/// Default re-probe period of a FerrVaultConnection (the `run` flag's default; reference
/// `connectionProbeInterval`). Probes hit the unauthenticated `/healthz`, outside the limiter.
pub(crate) const DEFAULT_CONNECTION_PROBE_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// Re-check of a connection whose deletion is blocked by dependants (reference
/// `connectionInUseRequeue`); FerrVaultSecret deletions also trigger it through the watch.
pub(crate) const DELETION_BLOCKED_REQUEUE: Duration = Duration::from_secs(30);

/// The outcome of a FerrVaultSecret reconcile, as far as its next timed run is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RequeueCase {
    /// `MissingKeys`: retry within [`MISSING_KEYS_RETRY`].
    KeysMissing,
    /// `AuthFailed`: retry after [`AUTH_FAILED_REQUEUE`].
    AuthFailed,
    /// Any other failure: retry within [`FAILURE_RETRY`].
    Failed,
    /// The spec itself is invalid (`InvalidRefreshInterval`), or the connection's is refused
    /// (`InsecureUrl`, `UntrustedUrl`, `ClusterIdentity*`): only an edit, which bumps a
    /// generation and triggers a reconcile, can fix it; no timer.
    InvalidSpec,
    /// The target is refused (its owner, type or a connection's reference): the watches retry it
    /// when the target Secret, the FerrVaultSecret or a connection changes; no timer, so a refused
    /// object costs nothing while nothing changes.
    Refused,
}

/// When to run again, given the outcome and the resolved refresh interval (`ZERO` = disabled).
///
/// Failures never depend on refresh being enabled (reference §8 item 9); every delay is at least
/// [`MIN_REQUEUE`]. `None` means "no timer; wait for a watch event".
pub(crate) fn requeue_after(case: RequeueCase, refresh: Duration) -> Option<Duration> {
    let within = |bound: Duration| {
        if refresh.is_zero() {
            bound
        } else {
            refresh.min(bound)
        }
    };
    let delay = match case {
        RequeueCase::KeysMissing => within(MISSING_KEYS_RETRY),
        RequeueCase::AuthFailed => AUTH_FAILED_REQUEUE,
        RequeueCase::Failed => within(FAILURE_RETRY),
        RequeueCase::InvalidSpec | RequeueCase::Refused => return None,
    };
    Some(delay.max(MIN_REQUEUE))
}

/// The refresh interval of a FerrVaultSecret: `spec.refreshInterval` parsed, or `default`
/// (`--default-refresh-interval`) when it is empty (only possible if the CRD default was bypassed).
///
/// # Errors
/// An unparseable value is an error for the caller to report as `InvalidRefreshInterval`; it
/// never falls back silently.
pub fn resolve_refresh_interval(spec_value: &str, default: Duration) -> Result<Duration, DurationError> {
    if spec_value.is_empty() {
        Ok(default)
    } else {
        parse_go_duration(spec_value)
    }
}

#[cfg(test)]
mod tests;
