//! The reconcilers' Prometheus metrics, with the Go operator's names and semantics
//! (reference §5.4) so its dashboards and PrometheusRule keep working.
//!
//! | name | type | labels |
//! |---|---|---|
//! | `ferrvault_secret_sync_duration_seconds` | histogram | `result` = `success` \| `failure` |
//! | `ferrvault_secret_sync_errors_total` | counter | `reason` (a [`Reason`], incl. `RateLimited`) |
//! | `ferrvault_secret_last_sync_timestamp_seconds` | gauge | `namespace`, `name` |
//! | `ferrvault_secret_refresh_interval_seconds` | gauge | `namespace`, `name` |
//! | `ferrvault_connection_ready` | gauge | `namespace`, `name` |
//! | `ferrvault_connection_token_expiry_timestamp_seconds` | gauge | `namespace`, `name` |
//! | `ferrvault_secret_sync_trigger_total` | counter | `trigger` = `force` \| `refresh` \| `spec` \| `inputs` \| `drift` \| `source` (why the sync was due, [`Trigger`]) |
//!
//! # Guarantees
//! - Every `result` and failure `reason` series exists from the start, at zero.
//! - Labels are a fixed reason set or object coordinates: never a value, a token or an error text.
//! - The last-sync and refresh-interval series are set and removed together, so the staleness
//!   alert `(time() - last_sync) > 2 * refresh + 300` never sees one without the other; they
//!   share one map (`sync_times.rs`).

mod object_labels;
mod sync_times;

use std::{
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge, histogram::Histogram},
    registry::Registry,
};

pub(crate) use self::object_labels::ObjectLabels;
use self::sync_times::SyncTimes;
use crate::{api::Reason, reconcile::rules::schedule::explain::Trigger};

/// `result` label of the sync duration histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabel {
    /// `success` or `failure`.
    pub result: &'static str,
}

/// `reason` label of the sync error counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabel {
    /// A [`Reason`] string.
    pub reason: &'static str,
}

/// `trigger` label of the sync trigger counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TriggerLabel {
    /// A [`Trigger`] string.
    pub trigger: &'static str,
}

/// Handles to the reconcilers' metrics; methods are named by intent.
#[derive(Clone, Debug)]
pub struct SyncMetrics {
    duration: Family<ResultLabel, Histogram>,
    errors: Family<ReasonLabel, Counter>,
    sync_times: Arc<SyncTimes>,
    connection_ready: Family<ObjectLabels, Gauge>,
    token_expiry: Family<ObjectLabels, Gauge>,
    triggers: Family<TriggerLabel, Counter>,
}

/// The Go client's default histogram buckets (5ms … 10s).
const DURATION_BUCKETS: [f64; 11] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

impl SyncMetrics {
    /// Registers every series family in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            duration: Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS)),
            errors: Family::default(),
            sync_times: Arc::default(),
            connection_ready: Family::default(),
            token_expiry: Family::default(),
            triggers: Family::default(),
        };
        registry.register(
            "ferrvault_secret_sync_duration_seconds",
            "Duration of FerrVaultSecret reconciles, by result (success or failure)",
            metrics.duration.clone(),
        );
        registry.register(
            "ferrvault_secret_sync_errors",
            "FerrVaultSecret reconciles that did not fully sync, by reason (RateLimited included)",
            metrics.errors.clone(),
        );
        registry.register_collector(Box::new(metrics.sync_times.clone()));
        registry.register(
            "ferrvault_connection_ready",
            "1 when the FerrVaultConnection's last probe succeeded, else 0",
            metrics.connection_ready.clone(),
        );
        registry.register(
            "ferrvault_connection_token_expiry_timestamp_seconds",
            "When the FerrVaultConnection's service-account token expires (Unix seconds), as GET /operator/me \
             last said; absent when it never expires or the server was not asked",
            metrics.token_expiry.clone(),
        );
        registry.register(
            "ferrvault_secret_sync_trigger",
            "FerrVaultSecret syncs that wrote (or confirmed) the target, by why they were due \
             (force, refresh, spec, inputs, drift, source)",
            metrics.triggers.clone(),
        );
        metrics.init_series();
        metrics
    }

    /// Creates every result and failure-reason series at zero, as controller-runtime does for
    /// its counters: `increase()` in an alert (`reason="RolloutFailed"`) sees the first failure
    /// instead of a series appearing at 1.
    fn init_series(&self) {
        for result in ["success", "failure"] {
            drop(self.duration.get_or_create(&ResultLabel { result }));
        }
        let successes = [
            Reason::Synced,
            Reason::UpToDate,
            Reason::Reachable,
            Reason::DeletionBlocked,
            Reason::BelowMinimum,
            // A connection's token, never a sync's outcome.
            Reason::TokenValid,
            Reason::TokenExpiresSoon,
            Reason::Suspended,
            Reason::ConnectionSuspended,
            Reason::TargetKept,
            // A connection's change detection, never a sync's outcome.
            Reason::VersionsFollowed,
        ];
        for reason in Reason::ALL.iter().copied().filter(|r| !successes.contains(r)) {
            self.errors
                .get_or_create(&ReasonLabel {
                    reason: reason.as_str(),
                })
                .inc_by(0);
        }
        for trigger in Trigger::ALL {
            drop(self.triggers.get_or_create(&TriggerLabel {
                trigger: trigger.as_str(),
            }));
        }
    }

    /// Counts one sync that was due because of `trigger`.
    pub(crate) fn count_sync_trigger(&self, trigger: Trigger) {
        self.triggers
            .get_or_create(&TriggerLabel {
                trigger: trigger.as_str(),
            })
            .inc();
    }

    /// Records one FerrVaultSecret reconcile's duration.
    pub fn observe_sync(&self, success: bool, took: Duration) {
        let result = if success { "success" } else { "failure" };
        self.duration
            .get_or_create(&ResultLabel { result })
            .observe(took.as_secs_f64());
    }

    /// Counts one sync that ended with `reason`.
    pub fn count_sync_error(&self, reason: Reason) {
        self.errors
            .get_or_create(&ReasonLabel {
                reason: reason.as_str(),
            })
            .inc();
    }

    /// Stamps the last full sync of `namespace/name` (`at`), with its resolved refresh interval.
    pub fn mark_synced(&self, namespace: &str, name: &str, refresh: Duration, at: jiff::Timestamp) {
        let at = SystemTime::from(at)
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        self.sync_times
            .set(ObjectLabels::new(namespace, name), at, refresh.as_secs_f64());
    }

    /// Drops the last-sync and refresh-interval series of a FerrVaultSecret that is gone.
    pub fn forget_secret(&self, namespace: &str, name: &str) {
        self.sync_times.remove(&ObjectLabels::new(namespace, name));
    }

    /// Sets `ferrvault_connection_ready` of a connection after a probe.
    pub fn set_connection_ready(&self, namespace: &str, name: &str, ready: bool) {
        self.connection_ready
            .get_or_create(&ObjectLabels::new(namespace, name))
            .set(i64::from(ready));
    }

    /// Sets (or, for a token without a known expiry, removes) the token expiry series of a
    /// connection.
    pub fn set_token_expiry(&self, namespace: &str, name: &str, expires_at: Option<jiff::Timestamp>) {
        let labels = ObjectLabels::new(namespace, name);
        match expires_at {
            Some(at) => {
                self.token_expiry.get_or_create(&labels).set(at.as_second());
            }
            None => {
                self.token_expiry.remove(&labels);
            }
        }
    }

    /// Drops the ready and token expiry series of a connection that is gone.
    pub fn forget_connection(&self, namespace: &str, name: &str) {
        let labels = ObjectLabels::new(namespace, name);
        self.connection_ready.remove(&labels);
        self.token_expiry.remove(&labels);
    }
}

/// Records a FerrVaultSecret reconcile's duration when dropped (controller-rs
/// `ReconcileMeasurer`), so every exit path is measured; `failure` unless [`SyncTimer::succeed`].
pub(crate) struct SyncTimer<'a> {
    metrics: &'a SyncMetrics,
    started: tokio::time::Instant,
    success: bool,
}

impl<'a> SyncTimer<'a> {
    /// Starts timing.
    pub(crate) fn start(metrics: &'a SyncMetrics) -> Self {
        Self {
            metrics,
            started: tokio::time::Instant::now(),
            success: false,
        }
    }

    /// Marks the reconcile a success.
    pub(crate) fn succeed(&mut self) {
        self.success = true;
    }
}

impl Drop for SyncTimer<'_> {
    fn drop(&mut self) {
        let took = tokio::time::Instant::now().saturating_duration_since(self.started);
        self.metrics.observe_sync(self.success, took);
    }
}
