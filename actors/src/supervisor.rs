//! The root supervisor: starts health and leadership, starts and stops the controllers
//! subtree as leadership comes and goes, restarts failed children one-for-one with backoff,
//! escalates a restart storm, and runs graceful shutdown.
//!
//! Receives `StartControllers`/`StopControllers` from the leadership hooks (`children.rs`),
//! `Escalate` from the controllers actor (through the [`Escalation`] seam), `Shutdown` from
//! [`Runtime::run`](crate::runtime::Runtime::run), `Restart` from its own backoff timers.
//! Sends `Nudge` to health on escalation.
//!
//! # Guarantees
//! - `StopControllers` is answered only once the controllers subtree has stopped (watchers
//!   stopped, queues drained within the grace): leadership competes again only after that.
//! - Leadership failing closes the write fence and stops the controllers before leadership
//!   restarts: a replica that may have lost its lease never keeps reconciling.
//! - Shutdown and escalation: stop the controllers (draining in-flight work within the grace),
//!   then stop leadership (which releases the lease), then stop. Escalation also marks health
//!   unhealthy and makes `run` return `Err(Escalated)`.
//! - Children are stopped gracefully in `post_stop`, never killed by this actor's exit.
//!
//! # Failure
//! Nothing supervises the root: a panic here ends `run` with `RootFailed`.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use ractor::{ActorCell, ActorProcessingErr, RpcReplyPort, SupervisionEvent};
use tokio::{sync::watch, time::Instant};

use self::slot::{ControllersSlot, Exited};
use crate::{
    controllers::ControllersArgs,
    directory::Directory,
    fence::Fence,
    health::{EscalationCell, HealthArgs, HealthMsg},
    mailbox::CountedRef,
    restart_policy::{RestartDecision, RestartLog, RestartPolicy, exit_of},
    seams::{Escalation, LeadershipSource, LeaseStatus, Role},
    spawn::{RuntimeActor, Spawned, Spawner},
};

/// How long an escalating runtime lingers before it stops: health re-evaluates at once on the
/// supervisor's `Nudge`, and this lets a probe or scrape already in flight read the failing
/// verdict before the process exits (the exit code is what restarts the pod).
const ESCALATION_LINGER: Duration = Duration::from_millis(200);

/// Messages to the root supervisor.
pub(crate) enum SupervisorMsg {
    /// From the leadership hooks: we lead; start the controllers subtree.
    StartControllers,
    /// From the leadership hooks: we no longer lead; the reply comes once the subtree stopped.
    StopControllers(RpcReplyPort<()>),
    /// From the controllers actor: too many restarts below; escalate with this reason.
    Escalate(String),
    /// From `Runtime::run`: the shutdown signal arrived.
    Shutdown,
    /// From its own backoff timer: start this child again.
    Restart(RootChild),
}

/// A child of the root supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RootChild {
    /// The health actor.
    Health,
    /// The leadership actor.
    Leadership,
    /// The controllers subtree.
    Controllers,
}

impl RootChild {
    fn name(self) -> &'static str {
        match self {
            RootChild::Health => "health",
            RootChild::Leadership => "leadership",
            RootChild::Controllers => "controllers",
        }
    }
}

/// How the runtime ended, written by the supervisor before it stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// Graceful shutdown.
    Shutdown,
    /// Restart storm; the reason.
    Escalated(String),
}

/// Builds the children's arguments (again on every restart).
pub(crate) trait ChildFactory: Send + Sync + 'static {
    /// Health arguments.
    fn health_args(&self) -> HealthArgs;
    /// Controllers arguments, escalating through `escalation`.
    fn controllers_args(&self, escalation: Arc<dyn Escalation>) -> ControllersArgs;
}

/// Supervisor arguments.
pub(crate) struct SupervisorArgs {
    /// Child arguments.
    pub factory: Arc<dyn ChildFactory>,
    /// Leadership, or `None` when leader election is disabled (leader at once).
    pub leadership: Option<Arc<dyn LeadershipSource>>,
    /// Where leadership (or the supervisor itself, when disabled) publishes the role.
    pub lease: watch::Sender<LeaseStatus>,
    /// The write fence leadership opens and closes (opened for good when disabled).
    pub fence: Fence,
    /// Restart policy.
    pub policy: RestartPolicy,
    /// The tree-wide restart log.
    pub restarts: Arc<Mutex<RestartLog>>,
    /// Escalation reason for health.
    pub escalation: EscalationCell,
    /// How the run ended.
    pub exit: Arc<Mutex<Option<Exit>>>,
    /// Upper bound on stopping the controllers (their drain grace plus slack).
    pub stop_timeout: Duration,
    /// Where the children are registered (names, restarts, mailboxes).
    pub directory: Arc<Directory>,
}

/// What the supervisor is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Supervising: failed children restart.
    Running,
    /// Shutting down or escalating: children are being stopped; none restarts.
    Stopping,
}

/// Supervisor state.
pub(crate) struct SupervisorState {
    args: SupervisorArgs,
    spawner: Spawner,
    phase: Phase,
    health: Option<CountedRef<HealthMsg>>,
    leadership: Option<Spawned>,
    controllers: ControllersSlot,
}

/// The root supervisor actor.
pub(crate) struct Supervisor;

impl RuntimeActor for Supervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = SupervisorArgs;

    async fn pre_start(
        &self,
        myself: CountedRef<SupervisorMsg>,
        args: SupervisorArgs,
    ) -> Result<SupervisorState, ActorProcessingErr> {
        Ok(SupervisorState {
            spawner: Spawner::under(myself.cell(), args.directory.clone()),
            args,
            phase: Phase::Running,
            health: None,
            leadership: None,
            controllers: ControllersSlot::Idle,
        })
    }

    async fn post_start(
        &self,
        myself: CountedRef<SupervisorMsg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        state.start(&myself, RootChild::Health).await;
        if state.args.leadership.is_some() {
            state.start(&myself, RootChild::Leadership).await;
        } else {
            state.args.fence.open_unbounded();
            state.args.lease.send_modify(|s| {
                s.role = Role::Leader;
                s.holder = Some(s.identity.clone());
            });
            state.on_start_controllers(&myself).await;
        }
        Ok(())
    }

    async fn handle(
        &self,
        myself: CountedRef<SupervisorMsg>,
        msg: SupervisorMsg,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::StartControllers => state.on_start_controllers(&myself).await,
            SupervisorMsg::StopControllers(reply) => state.on_stop_controllers(reply),
            SupervisorMsg::Escalate(why) => state.on_escalate(&myself, why),
            SupervisorMsg::Shutdown => state.on_shutdown(&myself, Exit::Shutdown),
            SupervisorMsg::Restart(child) => state.on_restart(&myself, child).await,
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: CountedRef<SupervisorMsg>,
        evt: SupervisionEvent,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some((cell, reason)) = exit_of(evt) {
            state.on_child_exit(&myself, &cell, reason);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: CountedRef<SupervisorMsg>,
        state: &mut SupervisorState,
    ) -> Result<(), ActorProcessingErr> {
        // Normally every child is already down; this catches a stop from elsewhere.
        myself
            .cell()
            .stop_children_and_wait(Some("runtime stopping".into()), Some(state.args.stop_timeout))
            .await;
        let mut exit = state.args.exit.lock().expect("exit cell poisoned");
        exit.get_or_insert(Exit::Shutdown);
        Ok(())
    }
}

// === impl SupervisorState ===

impl SupervisorState {
    async fn on_start_controllers(&mut self, myself: &CountedRef<SupervisorMsg>) {
        if self.phase == Phase::Running && self.controllers.want() {
            self.start(myself, RootChild::Controllers).await;
        }
    }

    fn on_stop_controllers(&mut self, reply: RpcReplyPort<()>) {
        if let Some(cell) = self.controllers.unwant(Some(reply)) {
            cell.stop(Some("leadership lost".into()));
        }
    }

    fn on_escalate(&mut self, myself: &CountedRef<SupervisorMsg>, why: String) {
        if self.phase != Phase::Running {
            return;
        }
        tracing::error!(reason = %why, "restart storm: escalating");
        *self.args.escalation.lock().expect("escalation cell poisoned") = Some(why.clone());
        if let Some(health) = &self.health {
            // Health may itself be the storm; the verdict then goes stale, which also fails.
            let _ = health.cast(HealthMsg::Nudge);
        }
        self.on_shutdown(myself, Exit::Escalated(why));
    }

    /// Stop controllers, then leadership (releasing the lease), then this actor — off the
    /// handler, so supervision events keep flowing meanwhile.
    fn on_shutdown(&mut self, myself: &CountedRef<SupervisorMsg>, exit: Exit) {
        if self.phase != Phase::Running {
            return;
        }
        self.phase = Phase::Stopping;
        self.args
            .exit
            .lock()
            .expect("exit cell poisoned")
            .get_or_insert(exit.clone());
        let controllers = match &self.controllers {
            ControllersSlot::Running(cell) | ControllersSlot::Stopping { cell, .. } => Some(cell.clone()),
            ControllersSlot::Idle | ControllersSlot::Restarting => None,
        };
        // Stopped by the task below, which waits for it.
        let _ = self.controllers.unwant(None);
        let leadership = self.leadership.clone().zip(self.args.leadership.clone());
        let timeout = self.args.stop_timeout;
        let myself = myself.clone();
        tokio::spawn(async move {
            if let Some(c) = controllers {
                // A timeout here means the subtree was killed instead; carry on regardless.
                let _ = c
                    .stop_and_wait(Some("runtime stopping".into()), Some(timeout))
                    .await;
            }
            if let Some((spawned, source)) = leadership {
                source.release(&spawned, timeout).await;
                // A timeout here means the actor was killed instead; the lease then expires.
                let _ = spawned
                    .cell()
                    .stop_and_wait(Some("runtime stopping".into()), Some(timeout))
                    .await;
            }
            if matches!(exit, Exit::Escalated(_)) {
                tokio::time::sleep(ESCALATION_LINGER).await;
            }
            myself.cell().stop(Some("runtime stopped".into()));
        });
    }

    async fn on_restart(&mut self, myself: &CountedRef<SupervisorMsg>, child: RootChild) {
        let wanted = match child {
            RootChild::Health => self.health.is_none(),
            RootChild::Leadership => self.leadership.is_none(),
            RootChild::Controllers => self.controllers.restart_due(),
        };
        if self.phase == Phase::Running && wanted {
            self.start(myself, child).await;
        }
    }

    fn on_child_exit(&mut self, myself: &CountedRef<SupervisorMsg>, cell: &ActorCell, reason: String) {
        let id = cell.get_id();
        let child = if self.health.as_ref().is_some_and(|h| h.cell().get_id() == id) {
            self.health = None;
            RootChild::Health
        } else if self.leadership.as_ref().is_some_and(|l| l.cell().get_id() == id) {
            self.leadership = None;
            RootChild::Leadership
        } else {
            match self.controllers.exited(id) {
                Some(Exited::Requested { waiters, restart }) => {
                    for reply in waiters {
                        // The hook may have timed out waiting: fine.
                        let _ = reply.send(());
                    }
                    if restart && self.phase == Phase::Running {
                        // Leadership came back while the subtree was stopping: start it again now.
                        self.controllers.started(None);
                        // A failed cast means we are stopping ourselves: nothing to start then.
                        let _ = myself.cast(SupervisorMsg::Restart(RootChild::Controllers));
                    }
                    return;
                }
                Some(Exited::Failed) => RootChild::Controllers,
                None => return,
            }
        };
        if self.phase == Phase::Stopping {
            return;
        }
        if child == RootChild::Leadership {
            // We may have lost the lease with it: never reconcile without knowing we lead.
            self.args.fence.close();
            self.args.lease.send_modify(|s| s.role = Role::Standby);
            if let Some(cell) = self.controllers.unwant(None) {
                cell.stop(Some("leadership actor failed".into()));
            }
        }
        self.restart_or_escalate(myself, child, reason);
    }

    /// Count a failure of `child` against the restart policy, then schedule its restart or
    /// escalate.
    fn restart_or_escalate(&mut self, myself: &CountedRef<SupervisorMsg>, child: RootChild, reason: String) {
        self.spawner.directory().restarted(child.name(), reason);
        let decision = self
            .args
            .restarts
            .lock()
            .expect("restart log poisoned")
            .on_failure(&self.args.policy, child.name(), Instant::now());
        match decision {
            RestartDecision::RestartAfter(delay) => {
                myself.send_after(delay, move || SupervisorMsg::Restart(child));
            }
            RestartDecision::Escalate(why) => self.on_escalate(myself, why),
        }
    }
}

mod children;
mod slot;
