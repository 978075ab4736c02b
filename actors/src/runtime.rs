//! The entry point: [`Runtime::builder`] assembles the tree, [`Runtime::run`] runs it until the
//! shutdown future resolves (or a restart storm escalates). Handles for HTTP handlers
//! ([`HealthHandle`], [`TreeHandle`], [`QueueHandle`]) read published snapshots.
//!
//! ```text
//! let runtime = Runtime::builder()
//!     .reconciler("ferrvaultsecret", Arc::new(SecretReconciler { .. }))
//!     .watch(Box::new(secret_watch))
//!     .leader_election(LeaderElection::Enabled(Arc::new(lease)))
//!     .max_concurrent_reconciles(4)
//!     .reconcile_timeout(Duration::from_secs(60))
//!     .stall_threshold(Duration::from_secs(900))
//!     .registry(&mut registry)
//!     .build()?;
//! let health = runtime.health();
//! runtime.run(shutdown_signal()).await?;
//! ```

use std::{
    collections::HashSet,
    future::Future,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use prometheus_client::registry::Registry;
use ractor::{Actor, ActorCell};
use tokio::sync::watch;

use crate::{
    backoff::BackoffConfig,
    controllers::{ControllerSpec, ControllersArgs, QueueRouter},
    directory::{ActorKind, Directory},
    health::{EscalationCell, HealthArgs, HealthHandle},
    health_rules::{HealthConfig, Verdict},
    introspection::TreeHandle,
    leadership::LeaderElectionConfig,
    lease_source::LeaseLeadership,
    mailbox::{self, CountedRef, MailboxStats},
    metrics::RuntimeMetrics,
    queue_state::KeyInfo,
    reconciler::{Reconciler, SharedReconciler},
    restart_policy::{RestartLog, RestartPolicy},
    seams::{LeadershipSource, LeaseStatus, Role, WatchReporter, WatchSource},
    supervisor::{ChildFactory, Exit, Supervisor, SupervisorArgs, SupervisorMsg},
    work_queue::{QueueConfig, QueueMsg, QueueStats},
};

/// Why the runtime did not run or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// `build` refused the configuration.
    #[error("invalid runtime configuration: {0}")]
    InvalidConfig(String),
    /// The root supervisor did not start.
    #[error("the root supervisor could not start: {0}")]
    Start(String),
    /// A restart storm escalated (the process should exit non-zero so Kubernetes restarts it).
    #[error("restart storm escalated: {0}")]
    Escalated(String),
    /// The root supervisor itself failed.
    #[error("the root supervisor failed")]
    RootFailed,
    /// Shutdown did not complete in time; the tree was killed.
    #[error("shutdown did not finish within {0:?}")]
    ShutdownTimedOut(Duration),
}

impl RuntimeError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            RuntimeError::InvalidConfig(_) => 2,
            RuntimeError::Escalated(_) => 3,
            RuntimeError::Start(_) | RuntimeError::RootFailed | RuntimeError::ShutdownTimedOut(_) => 1,
        }
    }
}

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
    client: Option<kube::Client>,
    controllers: Vec<(&'static str, SharedReconciler)>,
    watches: Vec<Arc<dyn WatchSource>>,
    leader_election: LeaderElection,
    identity: Option<String>,
    queue: QueueConfig,
    max_abandoned: Option<usize>,
    health: HealthConfig,
    restart_policy: RestartPolicy,
    shutdown_grace: Duration,
    metrics: Option<RuntimeMetrics>,
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

/// Reads each controller's queue: published figures, and its keys on request.
#[derive(Clone)]
pub struct QueueHandle {
    router: Arc<QueueRouter>,
    stats: Vec<(&'static str, watch::Receiver<QueueStats>)>,
}

impl QueueHandle {
    /// The controllers' names.
    pub fn controllers(&self) -> Vec<&'static str> {
        self.stats.iter().map(|(n, _)| *n).collect()
    }

    /// The latest published figures of `controller`'s queue.
    pub fn stats(&self, controller: &str) -> Option<QueueStats> {
        self.stats
            .iter()
            .find(|(n, _)| *n == controller)
            .map(|(_, rx)| rx.borrow().clone())
    }

    /// Every key of `controller`'s queue with state, attempts and due time. Asks the queue
    /// (admin path, not a probe): `None` when no queue runs (standby) or it did not answer in 2s.
    pub async fn keys(&self, controller: &str) -> Option<Vec<KeyInfo>> {
        let queue = self.router.get(controller)?;
        queue.stats().record_enqueued();
        match queue
            .actor()
            .call(QueueMsg::Keys, Some(Duration::from_secs(2)))
            .await
        {
            Ok(ractor::rpc::CallResult::Success(keys)) => Some(keys),
            _ => None,
        }
    }
}

/// Everything the supervisor needs to (re)build its children.
struct Parts {
    health: HealthConfig,
    queue_stats: Vec<(&'static str, watch::Receiver<QueueStats>)>,
    lease_rx: watch::Receiver<LeaseStatus>,
    lease_name: String,
    expected_watches: Vec<String>,
    escalation: EscalationCell,
    verdict: Arc<watch::Sender<Verdict>>,
    directory: Arc<Directory>,
    tree: TreeHandle,
    controllers: Vec<ControllerSpec>,
    watches: Vec<Arc<dyn WatchSource>>,
    queue: QueueConfig,
    shutdown_grace: Duration,
    router: Arc<QueueRouter>,
    policy: RestartPolicy,
    restarts: Arc<Mutex<RestartLog>>,
}

impl ChildFactory for Parts {
    fn health_args(&self, mailbox: Arc<MailboxStats>) -> HealthArgs {
        HealthArgs {
            config: self.health.clone(),
            queues: self.queue_stats.clone(),
            lease: self.lease_rx.clone(),
            lease_name: self.lease_name.clone(),
            expected_watches: self.expected_watches.clone(),
            escalation: self.escalation.clone(),
            verdict: self.verdict.clone(),
            directory: self.directory.clone(),
            tree: self.tree.clone(),
            mailbox,
        }
    }

    fn controllers_args(
        &self,
        supervisor: CountedRef<SupervisorMsg>,
        mailbox: Arc<MailboxStats>,
    ) -> ControllersArgs {
        let reporter: Arc<dyn WatchReporter> = self.directory.clone();
        ControllersArgs {
            controllers: self.controllers.clone(),
            watches: self.watches.clone(),
            queue_config: self.queue.clone(),
            shutdown_grace: self.shutdown_grace,
            router: self.router.clone(),
            reporter,
            directory: self.directory.clone(),
            policy: self.policy.clone(),
            restarts: self.restarts.clone(),
            supervisor,
            mailbox,
        }
    }
}

/// A built runtime: take handles, then [`run`](Runtime::run) it.
pub struct Runtime {
    parts: Arc<Parts>,
    leadership: Option<Arc<dyn LeadershipSource>>,
    lease_tx: watch::Sender<LeaseStatus>,
    exit: Arc<Mutex<Option<Exit>>>,
    root: Arc<OnceLock<ActorCell>>,
    health: HealthHandle,
    queues: QueueHandle,
}

impl Runtime {
    /// A builder with defaults: 4 workers, 60s reconcile timeout (+10s kill grace), 15m stall
    /// threshold, 1s probe period, 30s shutdown grace, leader election disabled.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            client: None,
            controllers: Vec::new(),
            watches: Vec::new(),
            leader_election: LeaderElection::Disabled,
            identity: None,
            queue: QueueConfig {
                workers: RuntimeBuilder::DEFAULT_MAX_CONCURRENT,
                reconcile_timeout: RuntimeBuilder::DEFAULT_RECONCILE_TIMEOUT,
                kill_grace: Duration::from_secs(10),
                backoff: BackoffConfig::default(),
                max_abandoned: 0,
            },
            max_abandoned: None,
            health: HealthConfig {
                stall_threshold: RuntimeBuilder::DEFAULT_STALL_THRESHOLD,
                probe_period: Duration::from_secs(1),
                stale_after: Duration::from_secs(10),
            },
            restart_policy: RestartPolicy::default(),
            shutdown_grace: Duration::from_secs(30),
            metrics: None,
        }
    }

    fn assemble(b: RuntimeBuilder) -> Self {
        let metrics = b
            .metrics
            .unwrap_or_else(|| RuntimeMetrics::register(&mut Registry::default()));
        let directory = Arc::new(Directory::new(metrics));
        let (leadership, lease_name, identity) = match b.leader_election {
            LeaderElection::Disabled => {
                let identity = b.identity.unwrap_or_else(default_identity);
                (None, "disabled".to_owned(), identity)
            }
            LeaderElection::Lease(config) => match b.client {
                Some(client) if config.enabled => {
                    let (name, identity) = (config.lease_name.clone(), config.identity.clone());
                    let source: Arc<dyn LeadershipSource> = Arc::new(LeaseLeadership::new(config, client));
                    (Some(source), name, identity)
                }
                _ => (None, config.lease_name, config.identity),
            },
            LeaderElection::Enabled(source) => {
                let (name, identity) = (source.lease_name().to_owned(), source.identity().to_owned());
                (Some(source), name, identity)
            }
        };
        let (lease_tx, lease_rx) = watch::channel(LeaseStatus {
            role: Role::Standby,
            identity,
            holder: None,
            expires_at: None,
            lease_duration: Duration::ZERO,
            transitions: 0,
        });
        let mut controllers = Vec::new();
        let mut queue_stats = Vec::new();
        for (name, reconciler) in b.controllers {
            let (tx, rx) = watch::channel(QueueStats::inactive());
            controllers.push(ControllerSpec {
                name,
                reconciler,
                stats: Arc::new(tx),
            });
            queue_stats.push((name, rx));
        }
        let root = Arc::new(OnceLock::new());
        let tree = TreeHandle::new(
            root.clone(),
            directory.clone(),
            queue_stats.clone(),
            lease_rx.clone(),
        );
        let (verdict_tx, verdict_rx) = watch::channel(Verdict::initial(tokio::time::Instant::now()));
        let router = Arc::new(QueueRouter::default());
        let health = HealthHandle::new(verdict_rx, b.health.stale_after);
        let queues = QueueHandle {
            router: router.clone(),
            stats: queue_stats.clone(),
        };
        let workers = b.queue.workers;
        let parts = Parts {
            health: b.health,
            queue_stats,
            lease_rx,
            lease_name,
            expected_watches: b.watches.iter().map(|w| w.name().to_owned()).collect(),
            escalation: EscalationCell::default(),
            verdict: Arc::new(verdict_tx),
            directory,
            tree,
            controllers,
            watches: b.watches,
            queue: QueueConfig {
                max_abandoned: b.max_abandoned.unwrap_or(workers),
                ..b.queue
            },
            shutdown_grace: b.shutdown_grace,
            router,
            policy: b.restart_policy,
            restarts: Arc::default(),
        };
        Self {
            parts: Arc::new(parts),
            leadership,
            lease_tx,
            exit: Arc::default(),
            root,
            health,
            queues,
        }
    }

    /// Liveness and readiness, for `/healthz` and `/readyz`.
    pub fn health(&self) -> HealthHandle {
        self.health.clone()
    }

    /// The actor tree dump.
    pub fn tree(&self) -> TreeHandle {
        self.parts.tree.clone()
    }

    /// The work queues.
    pub fn queues(&self) -> QueueHandle {
        self.queues.clone()
    }

    /// The leadership status as published.
    pub fn lease(&self) -> watch::Receiver<LeaseStatus> {
        self.parts.lease_rx.clone()
    }

    /// Run until `shutdown` resolves (then stop gracefully: no new work, in-flight reconciles
    /// finish within the grace, lease released) or a restart storm escalates.
    ///
    /// # Errors
    /// `Escalated` after a restart storm (exit non-zero); `Start`, `RootFailed`,
    /// `ShutdownTimedOut` for failures of the runtime itself.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), RuntimeError> {
        let stop_timeout = self.parts.shutdown_grace + Duration::from_secs(10);
        let mailbox = Arc::new(MailboxStats::default());
        let args = SupervisorArgs {
            factory: self.parts.clone(),
            leadership: self.leadership,
            lease: self.lease_tx,
            policy: self.parts.policy.clone(),
            restarts: self.parts.restarts.clone(),
            escalation: self.parts.escalation.clone(),
            exit: self.exit.clone(),
            directory: self.parts.directory.clone(),
            stop_timeout,
            mailbox: mailbox.clone(),
        };
        let (root, mut join) = Actor::spawn(None, Supervisor, args)
            .await
            .map_err(|e| RuntimeError::Start(e.to_string()))?;
        mailbox::register(root.get_id(), mailbox.clone());
        self.parts
            .directory
            .name(root.get_id(), "supervisor", ActorKind::Supervisor);
        // Set once per runtime (run consumes self).
        let _ = self.root.set(root.get_cell());
        let root = CountedRef::new(root, mailbox);
        tokio::pin!(shutdown);
        tokio::select! {
            () = &mut shutdown => {
                tracing::info!("shutdown requested: stopping gracefully");
                // An already-stopping root needs no message.
                let _ = root.cast(SupervisorMsg::Shutdown);
                let limit = stop_timeout * 2;
                if tokio::time::timeout(limit, &mut join).await.is_err() {
                    root.actor().kill();
                    return Err(RuntimeError::ShutdownTimedOut(limit));
                }
            }
            _ = &mut join => {}
        }
        match self.exit.lock().expect("exit cell poisoned").clone() {
            Some(Exit::Shutdown) => Ok(()),
            Some(Exit::Escalated(why)) => Err(RuntimeError::Escalated(why)),
            None => Err(RuntimeError::RootFailed),
        }
    }
}

fn default_identity() -> String {
    let pod = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "local".into());
    format!("{pod}_{}", uuid::Uuid::new_v4())
}

#[cfg(test)]
mod election_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
