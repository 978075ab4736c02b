//! Whole-runtime fixtures: a controllable watch source and leadership, and a running runtime.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::future::BoxFuture;
use prometheus_client::registry::Registry;
use ractor::{ActorCell, ActorProcessingErr, SpawnErr};
use tokio::{
    sync::{oneshot, watch},
    task::JoinHandle,
};

use super::*;
use crate::{
    backoff::BackoffConfig,
    key::{Cause, ObjectKey},
    mailbox::CountedRef,
    reconciler::Reconciler,
    seams::{KeySink, LeadershipHooks, WatchStart},
    spawn::{RuntimeActor, Spawned},
    watch_state::WatchState,
};

/// A watcher actor that does nothing but can be told to panic.
struct FakeWatcher;

/// Messages to the fake watcher.
pub(super) enum FakeWatchMsg {
    Panic,
}

impl RuntimeActor for FakeWatcher {
    type Msg = FakeWatchMsg;
    type State = bool;
    type Arguments = bool;

    async fn pre_start(
        &self,
        _: CountedRef<FakeWatchMsg>,
        fail_on_start: bool,
    ) -> Result<bool, ActorProcessingErr> {
        Ok(fail_on_start)
    }

    async fn post_start(
        &self,
        _: CountedRef<FakeWatchMsg>,
        fail: &mut bool,
    ) -> Result<(), ActorProcessingErr> {
        assert!(!*fail, "fake watcher told to die on start");
        Ok(())
    }

    async fn handle(
        &self,
        _: CountedRef<FakeWatchMsg>,
        msg: FakeWatchMsg,
        _: &mut bool,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            FakeWatchMsg::Panic => panic!("fake watcher panicked"),
        }
    }
}

/// A watch source the test drives: it hands out the sink and the live watcher.
#[derive(Clone, Default)]
pub(super) struct FakeWatch {
    pub name: &'static str,
    pub fail_on_start: bool,
    pub sink: Arc<Mutex<Option<Arc<dyn KeySink>>>>,
    pub actor: Arc<Mutex<Option<CountedRef<FakeWatchMsg>>>>,
}

impl FakeWatch {
    pub(super) fn named(name: &'static str) -> Self {
        Self {
            name,
            ..Self::default()
        }
    }

    /// Send `key` through the sink of the live watcher; false if none is running.
    pub(super) fn emit(&self, name: &str) -> bool {
        match self.sink.lock().unwrap().as_ref() {
            Some(sink) => {
                sink.enqueue(ObjectKey::namespaced("test", "ns", name), Cause::Event);
                true
            }
            None => false,
        }
    }
}

impl WatchSource for FakeWatch {
    fn name(&self) -> &str {
        self.name
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
        _: WatchStart,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let (this, spawner) = (self.clone(), spawner.clone());
        Box::pin(async move {
            let actor = spawner
                .spawn(this.name, ActorKind::Watcher, FakeWatcher, this.fail_on_start)
                .await?;
            *this.sink.lock().unwrap() = Some(sink);
            *this.actor.lock().unwrap() = Some(actor.clone());
            reporter.report(WatchState {
                synced: true,
                connected: true,
                ..WatchState::starting(this.name)
            });
            Ok(actor.cell())
        })
    }
}

/// An actor that does nothing (stands in for leadership and seed watchers).
pub(super) struct Idle;

impl RuntimeActor for Idle {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: CountedRef<()>, (): ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(&self, _: CountedRef<()>, (): (), (): &mut ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }
}

/// Enqueues its keys (as listed) each time the controllers start, and reports itself synced.
pub(super) struct Seed(Vec<ObjectKey>);

impl Seed {
    pub(super) fn keys(keys: &[ObjectKey]) -> Self {
        Self(keys.to_vec())
    }
}

impl WatchSource for Seed {
    fn name(&self) -> &str {
        "Seed"
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        sink: Arc<dyn KeySink>,
        reporter: Arc<dyn WatchReporter>,
        _: WatchStart,
    ) -> BoxFuture<'static, Result<ActorCell, SpawnErr>> {
        let (spawner, keys) = (spawner.clone(), self.0.clone());
        Box::pin(async move {
            let actor = spawner.spawn("Seed", ActorKind::Watcher, Idle, ()).await?;
            for key in keys {
                sink.enqueue(key, Cause::Listed);
            }
            reporter.report(WatchState {
                synced: true,
                connected: true,
                ..WatchState::starting("Seed")
            });
            Ok(actor.cell())
        })
    }
}

/// Leadership the test drives with `lead` / `lose` (the fence open while it leads).
#[derive(Clone, Default)]
pub(super) struct FakeLeadership {
    /// The live leadership actor.
    pub cell: Arc<Mutex<Option<ActorCell>>>,
    hooks: Arc<Mutex<Option<Arc<dyn LeadershipHooks>>>>,
    status: Arc<Mutex<Option<watch::Sender<LeaseStatus>>>>,
    fence: Arc<Mutex<Option<Fence>>>,
}

impl FakeLeadership {
    pub(super) async fn lead(&self) {
        self.fence().open_unbounded();
        self.set_role(Role::Leader);
        let hooks = self.hooks.lock().unwrap().clone().expect("leadership spawned");
        hooks.started_leading().await;
    }

    pub(super) async fn lose(&self) {
        let hooks = self.hooks.lock().unwrap().clone().expect("leadership spawned");
        self.fence().close();
        self.set_role(Role::Standby);
        hooks.stopped_leading().await;
    }

    fn fence(&self) -> Fence {
        self.fence.lock().unwrap().clone().expect("leadership spawned")
    }

    fn set_role(&self, role: Role) {
        let status = self.status.lock().unwrap();
        status.as_ref().expect("leadership spawned").send_modify(|s| {
            s.role = role;
            s.holder = Some(if role == Role::Leader {
                s.identity.clone()
            } else {
                "someone-else".into()
            });
        });
    }
}

impl LeadershipSource for FakeLeadership {
    fn release(&self, _: &Spawned, _: Duration) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }

    fn lease_name(&self) -> &str {
        "test-lease"
    }

    fn identity(&self) -> &str {
        "me"
    }

    fn spawn_linked(
        &self,
        spawner: &Spawner,
        hooks: Arc<dyn LeadershipHooks>,
        status: watch::Sender<LeaseStatus>,
        fence: Fence,
    ) -> BoxFuture<'static, Result<Spawned, SpawnErr>> {
        let (this, spawner) = (self.clone(), spawner.clone());
        Box::pin(async move {
            let actor = spawner
                .spawn("leadership", ActorKind::Leadership, Idle, ())
                .await?;
            *this.hooks.lock().unwrap() = Some(hooks);
            *this.status.lock().unwrap() = Some(status);
            *this.fence.lock().unwrap() = Some(fence);
            *this.cell.lock().unwrap() = Some(actor.cell());
            Ok(actor.into())
        })
    }
}

/// A runtime running in a task, with its handles.
pub(super) struct Running {
    pub lease: watch::Receiver<LeaseStatus>,
    pub health: HealthHandle,
    pub tree: TreeHandle,
    pub queues: QueueHandle,
    pub registry: Registry,
    stop: Option<oneshot::Sender<()>>,
    pub run: JoinHandle<Result<(), RuntimeError>>,
}

/// A builder with the scripted reconciler, small thresholds and a metrics registry.
pub(super) fn quick_builder<R: Reconciler>(rec: Arc<R>, registry: &mut Registry) -> RuntimeBuilder {
    Runtime::builder()
        .reconciler("test", rec)
        .max_concurrent_reconciles(2)
        .reconcile_timeout(Duration::from_millis(300))
        .kill_grace(Duration::from_millis(200))
        .stall_threshold(Duration::from_secs(1))
        .probe_period(Duration::from_millis(100))
        .shutdown_grace(Duration::from_secs(2))
        .backoff(BackoffConfig {
            error_base: Duration::from_millis(50),
            error_max: Duration::from_millis(400),
            ..BackoffConfig::default()
        })
        .registry(registry)
}

impl Running {
    pub(super) fn start(builder: impl FnOnce(&mut Registry) -> RuntimeBuilder) -> Self {
        let mut registry = Registry::default();
        let runtime = builder(&mut registry).build().expect("valid config");
        let (tx, rx) = oneshot::channel();
        let (health, tree, queues) = (runtime.health(), runtime.tree(), runtime.queues());
        let lease = runtime.lease();
        let run = tokio::spawn(runtime.run(async move {
            // A dropped sender also means stop.
            let _ = rx.await;
        }));
        Self {
            lease,
            health,
            tree,
            queues,
            registry,
            stop: Some(tx),
            run,
        }
    }

    pub(super) fn metrics_text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("encodes");
        out
    }

    /// Kill the whole tree at once (a crash: nothing is released).
    pub(super) fn kill(&self) {
        self.tree.root().expect("runtime started").kill();
    }

    /// Signal shutdown and wait for `run` to return.
    pub(super) async fn shutdown(mut self) -> Result<(), RuntimeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), &mut self.run)
            .await
            .expect("run returned after shutdown (likely deadlocked)")
            .expect("run task did not panic")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl FakeLeadership {
    /// Whether the runtime spawned the leadership actor yet.
    pub(super) fn hooks_ready(&self) -> bool {
        self.hooks.lock().unwrap().is_some()
    }
}
