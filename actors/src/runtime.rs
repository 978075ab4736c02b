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
use ractor::ActorCell;
use tokio::sync::watch;

pub use self::{
    builder::{LeaderElection, RuntimeBuilder},
    error::RuntimeError,
};
use crate::{
    controllers::{ControllerSpec, ControllersArgs, QueueRouter},
    directory::{ActorKind, Directory},
    fence::Fence,
    health::{EscalationCell, HealthArgs, HealthHandle},
    health_rules::{HealthConfig, Verdict},
    introspection::TreeHandle,
    key::{Cause, ObjectKey},
    lease_source::LeaseLeadership,
    metrics::RuntimeMetrics,
    queue_state::KeyInfo,
    queue_view::{QueueConfig, QueueStats},
    restart_policy::{RestartLog, RestartPolicy},
    seams::{Escalation, KeySink, LeadershipSource, LeaseStatus, Role, WatchSource},
    spawn::Spawner,
    supervisor::{ChildFactory, Exit, Supervisor, SupervisorArgs, SupervisorMsg},
    watch_state::WatchReporter,
    work_queue::QueueMsg,
};

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

    /// Whether `controller`'s queue runs (this replica leads, and the controllers started).
    pub fn is_running(&self, controller: &str) -> bool {
        self.router.get(controller).is_some()
    }

    /// Queues `key` for `cause` in its controller's queue, as a watch event would (coalesced
    /// with any pending entry for the key; dropped when no queue runs: standby, or stopping).
    pub fn enqueue(&self, key: ObjectKey, cause: Cause) {
        KeySink::enqueue(&*self.router, key, cause);
    }

    /// Every key of `controller`'s queue with state, attempts and due time. Asks the queue
    /// (admin path, not a probe): `None` when no queue runs (standby) or it did not answer in 2s.
    pub async fn keys(&self, controller: &str) -> Option<Vec<KeyInfo>> {
        self.router
            .get(controller)?
            .call(QueueMsg::Keys, Duration::from_secs(2))
            .await
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
    fence: Fence,
}

impl ChildFactory for Parts {
    fn health_args(&self) -> HealthArgs {
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
        }
    }

    fn controllers_args(&self, escalation: Arc<dyn Escalation>) -> ControllersArgs {
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
            escalation,
            fence: self.fence.clone(),
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

impl RuntimeBuilder {
    /// Validate and assemble.
    ///
    /// # Errors
    /// `InvalidConfig` for an enabled Lease election without a client, no controller, a
    /// duplicate controller or watch name, zero workers or namespace share, or a zero reconcile
    /// timeout / stall threshold / probe period.
    pub fn build(self) -> Result<Runtime, RuntimeError> {
        self.validate()?;
        Ok(Runtime::assemble(self))
    }
}

impl Runtime {
    /// A builder with defaults: 4 workers, 60s reconcile timeout (+10s kill grace), 15m stall
    /// threshold, 1s probe period, 30s shutdown grace, leader election disabled.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
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
            shards: None,
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
        let router = Arc::new(QueueRouter::keeping(b.keeps_key));
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
                namespace_share: b
                    .namespace_share
                    .unwrap_or(workers.saturating_sub(1))
                    .clamp(1, workers),
                ..b.queue
            },
            shutdown_grace: b.shutdown_grace,
            router,
            policy: b.restart_policy,
            restarts: Arc::default(),
            fence: b.fence.unwrap_or_default(),
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
        let args = SupervisorArgs {
            factory: self.parts.clone(),
            leadership: self.leadership,
            lease: self.lease_tx,
            fence: self.parts.fence.clone(),
            policy: self.parts.policy.clone(),
            restarts: self.parts.restarts.clone(),
            escalation: self.parts.escalation.clone(),
            exit: self.exit.clone(),
            stop_timeout,
            directory: self.parts.directory.clone(),
        };
        let root = Spawner::root(self.parts.directory.clone())
            .spawn("supervisor", ActorKind::Supervisor, Supervisor, args)
            .await
            .map_err(|e| RuntimeError::Start(e.to_string()))?;
        // Set once per runtime (run consumes self).
        let _ = self.root.set(root.cell());
        tokio::pin!(shutdown);
        let root_cell = root.cell();
        let mut stopped = std::pin::pin!(root_cell.wait(None));
        tokio::select! {
            () = &mut shutdown => {
                tracing::info!("shutdown requested: stopping gracefully");
                // An already-stopping root needs no message.
                let _ = root.cast(SupervisorMsg::Shutdown);
                let limit = stop_timeout * 2;
                if tokio::time::timeout(limit, &mut stopped).await.is_err() {
                    root.cell().kill();
                    return Err(RuntimeError::ShutdownTimedOut(limit));
                }
            }
            _ = &mut stopped => {}
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
mod error;
#[cfg(test)]
mod fence_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
