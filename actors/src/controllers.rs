//! The controllers subtree: everything that runs only while this replica leads — one work
//! queue per controller (each with its workers) and one watcher per watch source.
//!
//! Started by the root supervisor on `started_leading`, stopped on `stopped_leading`,
//! shutdown or escalation. Restarts its failed children one-for-one with backoff through the
//! shared [`RestartLog`]; past the limit it asks the root supervisor to escalate.
//!
//! # Guarantees
//! - Stopping is graceful and ordered (in `post_stop`): watchers stop first (no new keys),
//!   then each queue drains (no new dispatch; in-flight reconciles finish, up to the shutdown
//!   grace), then the queues and workers stop. Only after that does the supervisor learn the
//!   subtree stopped, and only then may leadership compete again.
//!
//! # Failure
//! A panic here fails the subtree; the root supervisor restarts it (if still leading).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use ractor::{ActorCell, ActorId, ActorProcessingErr, SupervisionEvent};
use tokio::{sync::watch, time::Instant};

use crate::{
    directory::{ActorKind, Directory},
    fence::Fence,
    introspection::queue_name,
    key::{Cause, ObjectKey},
    listed_gate::ListedGate,
    mailbox::CountedRef,
    queue_view::{QueueConfig, QueueStats},
    reconciler::SharedReconciler,
    restart_policy::{RestartDecision, RestartLog, RestartPolicy, exit_of},
    seams::{Escalation, KeySink, WatchSource, WatchStart},
    spawn::{RuntimeActor, Spawner},
    watch_state::WatchReporter,
    work_queue::{QueueArgs, QueueMsg, WorkQueue},
};

/// Messages to the controllers actor.
pub(crate) enum ControllersMsg {
    /// From its own timer after a child's backoff: start that child again.
    Restart(Child),
}

/// A child of the controllers actor, by position in its specs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Child {
    /// The work queue of controller `n`.
    Queue(usize),
    /// The watcher of watch source `n`.
    Watch(usize),
}

/// One controller: its name, reconciler, and the channel its queue publishes on.
#[derive(Clone)]
pub(crate) struct ControllerSpec {
    /// `ObjectKey::controller` of its keys.
    pub name: &'static str,
    /// Its reconciler.
    pub reconciler: SharedReconciler,
    /// Its queue's stats channel (outlives queue incarnations).
    pub stats: Arc<watch::Sender<QueueStats>>,
}

/// Which keys may be queued (see `RuntimeBuilder::only_keys`).
pub(crate) type KeyFilter = Arc<dyn Fn(&ObjectKey) -> bool + Send + Sync>;

/// Routes keys to the live queue of their controller; also how the queue handle finds queues.
#[derive(Default)]
pub(crate) struct QueueRouter {
    queues: RwLock<HashMap<&'static str, CountedRef<QueueMsg>>>,
    /// Keys it refuses are dropped (`None`: every key is kept).
    keeps: Option<KeyFilter>,
}

impl QueueRouter {
    /// A router dropping the keys `keeps` refuses.
    pub(crate) fn keeping(keeps: Option<KeyFilter>) -> Self {
        Self {
            queues: RwLock::default(),
            keeps,
        }
    }

    /// The live queue of `controller`.
    pub(crate) fn get(&self, controller: &str) -> Option<CountedRef<QueueMsg>> {
        self.queues
            .read()
            .expect("router poisoned")
            .get(controller)
            .cloned()
    }

    fn set(&self, controller: &'static str, queue: Option<CountedRef<QueueMsg>>) {
        let mut queues = self.queues.write().expect("router poisoned");
        match queue {
            Some(q) => queues.insert(controller, q),
            None => queues.remove(controller),
        };
    }
}

impl KeySink for QueueRouter {
    fn enqueue(&self, key: ObjectKey, cause: Cause) {
        if self.keeps.as_ref().is_some_and(|keeps| !keeps(&key)) {
            // Another replica's shard: its holder queues it.
            return;
        }
        match self.get(key.controller) {
            // A stopping queue drops the key: the next leader's first pass lists it again.
            Some(q) => drop(q.cast(QueueMsg::Enqueue { key, cause })),
            None => tracing::debug!(%key, "no running queue for this key's controller; dropped"),
        }
    }
}

/// Controllers arguments (kept as configuration for restarts).
pub(crate) struct ControllersArgs {
    /// The controllers.
    pub controllers: Vec<ControllerSpec>,
    /// The watches.
    pub watches: Vec<Arc<dyn WatchSource>>,
    /// Queue and pool settings.
    pub queue_config: QueueConfig,
    /// How long in-flight reconciles may take to finish when stopping.
    pub shutdown_grace: Duration,
    /// Where keys go (updated with each queue incarnation).
    pub router: Arc<QueueRouter>,
    /// Where watchers report.
    pub reporter: Arc<dyn WatchReporter>,
    /// Names, restarts, metrics.
    pub directory: Arc<Directory>,
    /// Restart policy and the tree-wide restart log.
    pub policy: RestartPolicy,
    /// The tree-wide restart log.
    pub restarts: Arc<Mutex<RestartLog>>,
    /// To ask for escalation (the root supervisor).
    pub escalation: Arc<dyn Escalation>,
    /// The write fence: in-flight reconciles are cancelled when it lapses.
    pub fence: Fence,
}

/// Controllers state.
pub(crate) struct ControllersState {
    args: ControllersArgs,
    /// Spawns the queues and watchers under this actor.
    spawner: Spawner,
    /// Where this term's watchers report; tells the queues when every watch has listed.
    gate: Arc<ListedGate>,
    /// Live children by id.
    children: HashMap<ActorId, Child>,
}

/// The controllers actor.
pub(crate) struct Controllers;

impl RuntimeActor for Controllers {
    type Msg = ControllersMsg;
    type State = ControllersState;
    type Arguments = ControllersArgs;

    async fn pre_start(
        &self,
        myself: CountedRef<ControllersMsg>,
        args: ControllersArgs,
    ) -> Result<ControllersState, ActorProcessingErr> {
        let names = args.watches.iter().map(|w| w.name().to_owned());
        Ok(ControllersState {
            spawner: Spawner::under(myself.cell(), args.directory.clone()),
            gate: Arc::new(ListedGate::new(names, args.reporter.clone())),
            args,
            children: HashMap::new(),
        })
    }

    async fn post_start(
        &self,
        myself: CountedRef<ControllersMsg>,
        state: &mut ControllersState,
    ) -> Result<(), ActorProcessingErr> {
        // Queues first, so watchers' first keys have somewhere to go.
        for i in 0..state.args.controllers.len() {
            state.start(&myself, Child::Queue(i), WatchStart::Term).await;
        }
        for i in 0..state.args.watches.len() {
            state.start(&myself, Child::Watch(i), WatchStart::Term).await;
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: CountedRef<ControllersMsg>,
        msg: ControllersMsg,
        state: &mut ControllersState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            ControllersMsg::Restart(child) => state.start(&myself, child, WatchStart::Restart).await,
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: CountedRef<ControllersMsg>,
        evt: SupervisionEvent,
        state: &mut ControllersState,
    ) -> Result<(), ActorProcessingErr> {
        let Some((cell, reason)) = exit_of(evt) else {
            return Ok(());
        };
        if let Some(child) = state.on_child_exit(&cell) {
            state.restart_or_escalate(&myself, child, &reason);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: CountedRef<ControllersMsg>,
        state: &mut ControllersState,
    ) -> Result<(), ActorProcessingErr> {
        state.stop_gracefully(&myself.cell()).await;
        Ok(())
    }
}

// === impl ControllersState ===

impl ControllersState {
    fn name_of(&self, child: Child) -> String {
        match child {
            Child::Queue(i) => queue_name(self.args.controllers[i].name),
            Child::Watch(i) => self.args.watches[i].name().to_owned(),
        }
    }

    /// Forget an exited child; returns it if it was ours.
    fn on_child_exit(&mut self, cell: &ActorCell) -> Option<Child> {
        let child = self.children.remove(&cell.get_id())?;
        if let Child::Queue(i) = child {
            self.args.router.set(self.args.controllers[i].name, None);
        }
        Some(child)
    }

    /// Count a failure of `child` against the restart policy, then schedule its restart or
    /// escalate to the supervisor.
    fn restart_or_escalate(&mut self, myself: &CountedRef<ControllersMsg>, child: Child, reason: &str) {
        let name = self.name_of(child);
        self.args.directory.restarted(&name, reason);
        let decision = self
            .args
            .restarts
            .lock()
            .expect("restart log poisoned")
            .on_failure(&self.args.policy, &name, Instant::now());
        match decision {
            RestartDecision::RestartAfter(delay) => {
                myself.send_after(delay, move || ControllersMsg::Restart(child));
            }
            RestartDecision::Escalate(why) => self.args.escalation.escalate(why),
        }
    }

    /// Starts `child`; a watcher as the term's first (`WatchStart::Term`) or a replacement.
    async fn start(&mut self, myself: &CountedRef<ControllersMsg>, child: Child, start: WatchStart) {
        let name = self.name_of(child);
        let started = match child {
            Child::Queue(i) => self.start_queue(i).await,
            Child::Watch(i) => {
                let sink: Arc<dyn KeySink> = self.args.router.clone();
                self.args.watches[i]
                    .spawn_linked(&self.spawner, sink, self.gate.clone(), start)
                    .await
            }
        };
        match started {
            Ok(cell) => {
                self.children.insert(cell.get_id(), child);
            }
            Err(err) => {
                // No supervision event for a failed start: count it and retry like a failure.
                tracing::warn!(child = %name, %err, "child failed to start");
                self.restart_or_escalate(myself, child, &format!("start failed: {err}"));
            }
        }
    }

    async fn start_queue(&self, i: usize) -> Result<ActorCell, ractor::SpawnErr> {
        let spec = &self.args.controllers[i];
        let args = QueueArgs {
            controller: spec.name,
            reconciler: spec.reconciler.clone(),
            config: self.args.queue_config.clone(),
            stats: spec.stats.clone(),
            directory: self.args.directory.clone(),
            fence: self.args.fence.clone(),
            watches_listed: self.gate.subscribe(),
        };
        let queue = self
            .spawner
            .spawn(queue_name(spec.name), ActorKind::WorkQueue, WorkQueue, args)
            .await?;
        let cell = queue.cell();
        self.args.router.set(spec.name, Some(queue));
        Ok(cell)
    }

    /// Watchers first, then drain queues within the grace, then stop everything left.
    async fn stop_gracefully(&mut self, myself: &ActorCell) {
        let watchers: Vec<ActorCell> = myself
            .get_children()
            .into_iter()
            .filter(|c| matches!(self.children.get(&c.get_id()), Some(Child::Watch(_))))
            .collect();
        for w in &watchers {
            w.stop(Some("controllers stopping".into()));
        }
        for w in watchers {
            w.wait(Some(Duration::from_secs(5))).await.ok();
        }
        let queues: Vec<(&'static str, CountedRef<QueueMsg>)> = self
            .args
            .controllers
            .iter()
            .filter_map(|c| Some((c.name, self.args.router.get(c.name)?)))
            .collect();
        let grace = self.args.shutdown_grace;
        let drains = queues.iter().map(|(_, q)| q.call(QueueMsg::Drain, grace));
        for (drained, (controller, _)) in futures::future::join_all(drains).await.into_iter().zip(&queues) {
            if drained.is_none() {
                tracing::warn!(
                    controller,
                    "in-flight reconciles did not finish within the shutdown grace"
                );
            }
        }
        for spec in &self.args.controllers {
            self.args.router.set(spec.name, None);
        }
        myself
            .stop_children_and_wait(Some("controllers stopping".into()), Some(Duration::from_secs(10)))
            .await;
        self.args.directory.clear_watches();
    }
}
