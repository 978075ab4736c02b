//! Fixtures shared by the actor tests: a scripted reconciler, a spawned work queue, polling.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use prometheus_client::registry::Registry;
use tokio::sync::watch;

use crate::{
    backoff::BackoffConfig,
    directory::{ActorKind, Directory},
    fence::Fence,
    key::{Cause, ObjectKey},
    mailbox::CountedRef,
    metrics::RuntimeMetrics,
    queue_view::{QueueConfig, QueueStats},
    reconciler::{Outcome, ReconcileContext, Reconciler},
    spawn::Spawner,
    work_queue::{QueueArgs, QueueMsg, WorkQueue},
};

/// What the scripted reconciler does for one call: given the key name and attempt number.
pub(crate) type Script = dyn Fn(&str, u32, &ReconcileContext) -> Step + Send + Sync;

/// One scripted behaviour.
pub(crate) enum Step {
    /// Return this outcome after sleeping (cooperatively) this long.
    Return(Duration, Outcome),
    /// Block the thread (ignoring cancellation) this long, then succeed.
    Block(Duration),
    /// Await this long without looking at the cancellation token, then succeed.
    IgnoreCancel(Duration),
    /// Panic.
    Panic,
}

/// Counts calls per key and catches two concurrent calls on one key.
pub(crate) struct Scripted {
    script: Box<Script>,
    in_flight: Mutex<HashMap<String, u32>>,
    /// Calls per key name, in start order.
    pub calls: Mutex<Vec<(String, u32)>>,
    /// Set when a key was ever reconciled twice at once.
    pub overlap: Mutex<Option<String>>,
}

impl Scripted {
    pub(crate) fn new(
        script: impl Fn(&str, u32, &ReconcileContext) -> Step + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            script: Box::new(script),
            in_flight: Mutex::default(),
            calls: Mutex::default(),
            overlap: Mutex::default(),
        })
    }

    pub(crate) fn calls_of(&self, name: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, _)| n == name)
            .count()
    }

    pub(crate) fn total_calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

impl Reconciler for Scripted {
    async fn reconcile(&self, key: &ObjectKey, ctx: &ReconcileContext) -> Outcome {
        {
            let mut in_flight = self.in_flight.lock().unwrap();
            let n = in_flight.entry(key.name.clone()).or_default();
            *n += 1;
            if *n > 1 {
                *self.overlap.lock().unwrap() = Some(key.name.clone());
            }
            self.calls.lock().unwrap().push((key.name.clone(), ctx.attempt));
        }
        struct Leave<'a>(&'a Scripted, &'a str);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                *self.0.in_flight.lock().unwrap().get_mut(self.1).unwrap() -= 1;
            }
        }
        let _leave = Leave(self, &key.name);
        match (self.script)(&key.name, ctx.attempt, ctx) {
            Step::Return(d, outcome) => {
                tokio::time::sleep(d).await;
                outcome
            }
            Step::Block(d) => {
                std::thread::sleep(d);
                Outcome::done()
            }
            Step::IgnoreCancel(d) => {
                tokio::time::sleep(d).await;
                Outcome::done()
            }
            Step::Panic => panic!("scripted panic for {}", key.name),
        }
    }
}

/// A key of the test controller.
pub(crate) fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("test", "ns", name)
}

/// Settings with short timeouts.
pub(crate) fn quick_config(workers: usize) -> QueueConfig {
    QueueConfig {
        workers,
        reconcile_timeout: Duration::from_millis(300),
        kill_grace: Duration::from_millis(200),
        backoff: BackoffConfig {
            error_base: Duration::from_millis(50),
            error_max: Duration::from_millis(400),
            ..BackoffConfig::default()
        },
        max_abandoned: workers,
        namespace_share: workers,
    }
}

/// A fence open for good (leader election disabled).
pub(crate) fn open_fence() -> Fence {
    let fence = Fence::new();
    fence.open_unbounded();
    fence
}

/// Spawns top-level actors registered in a fresh directory (with its metrics registry).
pub(crate) fn spawner() -> (Spawner, Arc<Directory>, Registry) {
    let mut registry = Registry::default();
    let directory = Arc::new(Directory::new(RuntimeMetrics::register(&mut registry)));
    (Spawner::root(directory.clone()), directory, registry)
}

/// A spawned work queue and what tests observe it through.
pub(crate) struct QueueFixture {
    pub queue: CountedRef<QueueMsg>,
    pub stats: watch::Receiver<QueueStats>,
    pub directory: Arc<Directory>,
    pub registry: Registry,
}

impl QueueFixture {
    /// A queue whose watches have all listed.
    pub(crate) async fn spawn(reconciler: Arc<Scripted>, config: QueueConfig) -> Self {
        Self::spawn_until_listed(reconciler, config, watch::channel(true).1).await
    }

    /// A queue holding its `Refresh` lane until `watches_listed` turns true.
    pub(crate) async fn spawn_until_listed(
        reconciler: Arc<Scripted>,
        config: QueueConfig,
        watches_listed: watch::Receiver<bool>,
    ) -> Self {
        let (spawner, directory, registry) = spawner();
        let (tx, stats) = watch::channel(QueueStats::inactive());
        let args = QueueArgs {
            controller: "test",
            reconciler,
            config,
            stats: Arc::new(tx),
            directory: directory.clone(),
            fence: open_fence(),
            watches_listed,
        };
        let queue = spawner
            .spawn("test/queue", ActorKind::WorkQueue, WorkQueue, args)
            .await
            .expect("queue spawns");
        Self {
            queue,
            stats,
            directory,
            registry,
        }
    }

    /// A watch event for `name`.
    pub(crate) fn enqueue(&self, name: &str) {
        self.enqueue_for(name, Cause::Event);
    }

    /// `name` queued for `cause`.
    pub(crate) fn enqueue_for(&self, name: &str, cause: Cause) {
        self.queue
            .cast(QueueMsg::Enqueue {
                key: key(name),
                cause,
            })
            .expect("queue alive");
    }

    pub(crate) fn stats(&self) -> QueueStats {
        self.stats.borrow().clone()
    }

    pub(crate) fn metrics_text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("encodes");
        out
    }
}

impl Drop for QueueFixture {
    fn drop(&mut self) {
        self.queue.cell().stop(None);
    }
}

/// Poll `check` every 20ms until it holds, failing with `what` after `within`.
pub(crate) async fn eventually(within: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {within:?} waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
