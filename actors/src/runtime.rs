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
    lease_source::LeaseLeadership,
    mailbox::{self, CountedRef, MailboxStats},
    metrics::RuntimeMetrics,
    queue_state::KeyInfo,
    restart_policy::{RestartLog, RestartPolicy},
    seams::{LeadershipSource, LeaseStatus, Role, WatchReporter, WatchSource},
    supervisor::{ChildFactory, Exit, Supervisor, SupervisorArgs, SupervisorMsg},
    work_queue::{QueueConfig, QueueMsg, QueueStats},
};

pub use builder::{LeaderElection, RuntimeBuilder};

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
        for (controller, _) in &b.controllers {
            metrics.init_controller(controller, b.queue.workers);
        }
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

mod builder;
#[cfg(test)]
mod election_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
