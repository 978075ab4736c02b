//! [`RuntimeBuilder`]: the runtime's settings, their defaults and their validation. Building
//! hands the checked settings to [`Runtime`](super::Runtime), which assembles the tree.

use std::{collections::HashSet, sync::Arc, time::Duration};

use prometheus_client::registry::Registry;

use super::{Runtime, RuntimeError};
use crate::{
    backoff::BackoffConfig,
    health_rules::HealthConfig,
    leadership::LeaderElectionConfig,
    metrics::RuntimeMetrics,
    reconciler::{Reconciler, SharedReconciler},
    restart_policy::RestartPolicy,
    seams::{LeadershipSource, WatchSource},
    work_queue::QueueConfig,
};

/// Leader election mode.
pub enum LeaderElection {
    /// Leader immediately (single replica, or tests).
    Disabled,
    /// The Lease election of [`crate::leadership`] with these flags, through the builder's
    /// [`client`](RuntimeBuilder::client) (`enabled: false` means leader at once).
    Lease(LeaderElectionConfig),
    /// Compete through another leadership implementation.
    Enabled(Arc<dyn LeadershipSource>),
}

/// Builds a [`Runtime`]; every setting has a default except the reconcilers.
#[must_use]
pub struct RuntimeBuilder {
    pub(super) client: Option<kube::Client>,
    pub(super) controllers: Vec<(&'static str, SharedReconciler)>,
    pub(super) watches: Vec<Arc<dyn WatchSource>>,
    pub(super) leader_election: LeaderElection,
    pub(super) identity: Option<String>,
    pub(super) queue: QueueConfig,
    pub(super) max_abandoned: Option<usize>,
    pub(super) health: HealthConfig,
    pub(super) restart_policy: RestartPolicy,
    pub(super) shutdown_grace: Duration,
    pub(super) metrics: Option<RuntimeMetrics>,
}

impl RuntimeBuilder {
    /// Default `--max-concurrent-reconciles`.
    pub const DEFAULT_MAX_CONCURRENT: usize = 4;
    /// Default `--reconcile-timeout`.
    pub const DEFAULT_RECONCILE_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default `--stall-threshold`.
    pub const DEFAULT_STALL_THRESHOLD: Duration = Duration::from_secs(15 * 60);

    /// The Kubernetes client used for the Lease (watches and reconcilers carry their own).
    pub fn client(mut self, client: kube::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Add a controller named `name` (the `controller` of its keys and of metric labels).
    pub fn reconciler<R: Reconciler>(mut self, name: &'static str, reconciler: Arc<R>) -> Self {
        self.controllers.push((name, reconciler));
        self
    }

    /// Add a watch run while leading.
    pub fn watch(mut self, source: Box<dyn WatchSource>) -> Self {
        self.watches.push(Arc::from(source));
        self
    }

    /// Leader election mode (default: disabled).
    pub fn leader_election(mut self, mode: LeaderElection) -> Self {
        self.leader_election = mode;
        self
    }

    /// This replica's identity when leader election is disabled (default: pod name + uid).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Workers per controller.
    pub fn max_concurrent_reconciles(mut self, n: usize) -> Self {
        self.queue.workers = n;
        self
    }

    /// Deadline of one reconcile.
    pub fn reconcile_timeout(mut self, d: Duration) -> Self {
        self.queue.reconcile_timeout = d;
        self
    }

    /// How long past its deadline a reconcile may hold its worker before it is replaced.
    pub fn kill_grace(mut self, d: Duration) -> Self {
        self.queue.kill_grace = d;
        self
    }

    /// Abandoned (killed, still running) reconciles tolerated (default: the pool size).
    pub fn max_abandoned_reconciles(mut self, n: usize) -> Self {
        self.max_abandoned = Some(n);
        self
    }

    /// Backoff and jitter.
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.queue.backoff = backoff;
        self
    }

    /// How long due work may go without a completion before liveness fails.
    pub fn stall_threshold(mut self, d: Duration) -> Self {
        self.health.stall_threshold = d;
        self
    }

    /// How often health re-evaluates (a verdict 10 periods old counts as wedged).
    pub fn probe_period(mut self, d: Duration) -> Self {
        self.health.probe_period = d;
        self.health.stale_after = d * 10;
        self
    }

    /// Restart intensity (R within T) and backoff.
    pub fn restart_policy(mut self, policy: RestartPolicy) -> Self {
        self.restart_policy = policy;
        self
    }

    /// How long in-flight reconciles may run on shutdown or leadership loss.
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d;
        self
    }

    /// Register the runtime's metrics in `registry`.
    pub fn registry(mut self, registry: &mut Registry) -> Self {
        self.metrics = Some(RuntimeMetrics::register(registry));
        self
    }

    /// Validate and assemble.
    ///
    /// # Errors
    /// `InvalidConfig` for an enabled Lease election without a client, no controller, a duplicate controller or watch name, zero workers,
    /// or a zero reconcile timeout / stall threshold / probe period.
    pub fn build(self) -> Result<Runtime, RuntimeError> {
        let invalid = |why: &str| Err(RuntimeError::InvalidConfig(why.to_owned()));
        if self.controllers.is_empty() {
            return invalid("no reconciler registered");
        }
        if let LeaderElection::Lease(config) = &self.leader_election {
            if let Err(err) = config.timings.validate() {
                return Err(RuntimeError::InvalidConfig(format!("leader election: {err}")));
            }
            if config.enabled && self.client.is_none() {
                return invalid("leader election needs a Kubernetes client (RuntimeBuilder::client)");
            }
        }
        if self
            .controllers
            .iter()
            .map(|(n, _)| n)
            .collect::<HashSet<_>>()
            .len()
            != self.controllers.len()
        {
            return invalid("two reconcilers share a controller name");
        }
        if self
            .watches
            .iter()
            .map(|w| w.name())
            .collect::<HashSet<_>>()
            .len()
            != self.watches.len()
        {
            return invalid("two watches share a name");
        }
        if self.queue.workers == 0 {
            return invalid("--max-concurrent-reconciles must be at least 1");
        }
        if self.queue.reconcile_timeout.is_zero()
            || self.health.stall_threshold.is_zero()
            || self.health.probe_period.is_zero()
        {
            return invalid("--reconcile-timeout, --stall-threshold and the probe period must be positive");
        }
        Ok(Runtime::assemble(self))
    }
}
