//! [`RuntimeBuilder`]: the runtime's settings, their defaults and their validation. Building
//! (`RuntimeBuilder::build`, next to `Runtime` in the parent module) checks them with
//! [`RuntimeBuilder::validate`] and hands them to the runtime, which assembles the tree.

use std::{collections::HashSet, sync::Arc, time::Duration};

use prometheus_client::registry::Registry;

use super::error::RuntimeError;
use crate::{
    backoff::BackoffConfig,
    controllers::KeyFilter,
    fence::Fence,
    health_rules::HealthConfig,
    key::ObjectKey,
    leadership::LeaderElectionConfig,
    metrics::RuntimeMetrics,
    queue_view::QueueConfig,
    reconciler::{Reconciler, SharedReconciler},
    restart_policy::RestartPolicy,
    seams::{LeadershipSource, WatchSource},
};

/// Leader election mode.
pub enum LeaderElection {
    /// Leader immediately (single replica, or tests).
    Disabled,
    /// The Lease election (`leadership.rs`) with these flags, through the builder's
    /// [`client`](RuntimeBuilder::client) (`enabled: false` means leader at once).
    Lease(LeaderElectionConfig),
    /// Compete through another leadership implementation.
    Enabled(Arc<dyn LeadershipSource>),
}

/// Builds a [`Runtime`](crate::Runtime); every setting has a default except the reconcilers.
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
    pub(super) fence: Option<Fence>,
    pub(super) namespace_share: Option<usize>,
    pub(super) keeps_key: Option<KeyFilter>,
}

impl Default for RuntimeBuilder {
    /// 4 workers, 60s reconcile timeout (+10s kill grace), 15m stall threshold, 1s probe
    /// period, 30s shutdown grace, leader election disabled, namespace share `workers − 1`.
    fn default() -> Self {
        Self {
            client: None,
            controllers: Vec::new(),
            watches: Vec::new(),
            leader_election: LeaderElection::Disabled,
            identity: None,
            queue: QueueConfig {
                workers: Self::DEFAULT_MAX_CONCURRENT,
                reconcile_timeout: Self::DEFAULT_RECONCILE_TIMEOUT,
                kill_grace: Duration::from_secs(10),
                backoff: BackoffConfig::default(),
                max_abandoned: 0,
                namespace_share: 0,
            },
            max_abandoned: None,
            health: HealthConfig {
                stall_threshold: Self::DEFAULT_STALL_THRESHOLD,
                probe_period: Duration::from_secs(1),
                stale_after: Duration::from_secs(10),
            },
            restart_policy: RestartPolicy::default(),
            shutdown_grace: Duration::from_secs(30),
            metrics: None,
            fence: None,
            namespace_share: None,
            keeps_key: None,
        }
    }
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

    /// Queue only the keys `keeps` accepts (default: every key), whoever enqueues them
    /// (watches, key feeds, [`QueueHandle::enqueue`](crate::runtime::QueueHandle::enqueue)):
    /// with shards, the keys of the held shards' namespaces.
    pub fn only_keys(mut self, keeps: impl Fn(&ObjectKey) -> bool + Send + Sync + 'static) -> Self {
        self.keeps_key = Some(Arc::new(keeps));
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

    /// Most workers one namespace may hold at once (default: the pool size minus one, at least
    /// one), so one namespace's slow reconciles never occupy the whole pool.
    pub fn namespace_share(mut self, n: usize) -> Self {
        self.namespace_share = Some(n);
        self
    }

    /// The write fence leadership opens and closes, shared with the Kubernetes client the
    /// reconcilers write through ([`FenceLayer`](crate::fence_layer::FenceLayer)). Default: a
    /// fence of the runtime's own, which still cancels in-flight reconciles when it lapses.
    pub fn fence(mut self, fence: Fence) -> Self {
        self.fence = Some(fence);
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

    /// Check the settings.
    ///
    /// # Errors
    /// `InvalidConfig` for an enabled Lease election without a client, no controller, a
    /// duplicate controller or watch name, zero workers or namespace share, or a zero reconcile
    /// timeout / stall threshold / probe period.
    pub(super) fn validate(&self) -> Result<(), RuntimeError> {
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
        if self.namespace_share == Some(0) {
            return invalid("the namespace share must be at least 1");
        }
        if self.queue.reconcile_timeout.is_zero()
            || self.health.stall_threshold.is_zero()
            || self.health.probe_period.is_zero()
        {
            return invalid("--reconcile-timeout, --stall-threshold and the probe period must be positive");
        }
        Ok(())
    }
}
