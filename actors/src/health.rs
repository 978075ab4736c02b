//! The health actor: re-evaluates the health rules every probe period and publishes the
//! verdict on a `watch` channel that `/healthz` and `/readyz` read without messaging any actor.
//!
//! Its inputs are heartbeats published by the other actors into shared cells: each work
//! queue's [`QueueStats`] (after every message it handles, including worker start/finish),
//! the leadership [`LeaseStatus`], watch states (via the runtime's `WatchReporter`, kept in the
//! [`Directory`]) and the supervisor's escalation. `Nudge`, sent by the root supervisor when it
//! escalates, re-evaluates at once. It also refreshes the per-actor mailbox metrics and
//! `leader_election_master_status`.
//!
//! # Guarantees
//! - The verdict's `evaluated_at` advances every probe period while this actor's loop runs;
//!   a reader seeing an old verdict reports the system wedged ([`Verdict::liveness_at`]).
//!
//! # Failure
//! A panic fails the actor; the root supervisor restarts it (the verdict channel outlives it).

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use ractor::ActorProcessingErr;
use tokio::{sync::watch, time::Instant};

use crate::{
    directory::Directory,
    health_rules::{HealthConfig, HealthInputs, ProbeReport, Verdict, evaluate},
    introspection::TreeHandle,
    mailbox::CountedRef,
    queue_view::QueueStats,
    seams::{LeaseStatus, Role},
    spawn::RuntimeActor,
};

/// Messages to the health actor.
pub(crate) enum HealthMsg {
    /// From its own timer, every probe period: evaluate, publish, re-arm.
    Tick,
    /// From the root supervisor when it escalates: evaluate and publish now.
    Nudge,
}

/// Why the supervisor escalated; shared by the supervisor (writer) and health (reader), so it
/// survives a health restart.
pub(crate) type EscalationCell = Arc<Mutex<Option<String>>>;

/// Health arguments.
pub(crate) struct HealthArgs {
    /// Thresholds.
    pub config: HealthConfig,
    /// Each controller's queue figures.
    pub queues: Vec<(&'static str, watch::Receiver<QueueStats>)>,
    /// The leadership status.
    pub lease: watch::Receiver<LeaseStatus>,
    /// The lease name (metric label).
    pub lease_name: String,
    /// Names of the watches run while leading.
    pub expected_watches: Vec<String>,
    /// The supervisor's escalation.
    pub escalation: EscalationCell,
    /// Where the verdict goes.
    pub verdict: Arc<watch::Sender<Verdict>>,
    /// Watch states and metrics.
    pub directory: Arc<Directory>,
    /// For mailbox metrics.
    pub tree: TreeHandle,
}

/// The health actor.
pub(crate) struct Health;

impl RuntimeActor for Health {
    type Msg = HealthMsg;
    type State = HealthArgs;
    type Arguments = HealthArgs;

    async fn pre_start(
        &self,
        _: CountedRef<HealthMsg>,
        args: HealthArgs,
    ) -> Result<HealthArgs, ActorProcessingErr> {
        Ok(args)
    }

    async fn post_start(
        &self,
        myself: CountedRef<HealthMsg>,
        _: &mut HealthArgs,
    ) -> Result<(), ActorProcessingErr> {
        myself.cast(HealthMsg::Tick)?;
        Ok(())
    }

    async fn handle(
        &self,
        myself: CountedRef<HealthMsg>,
        msg: HealthMsg,
        state: &mut HealthArgs,
    ) -> Result<(), ActorProcessingErr> {
        state.evaluate(Instant::now());
        match msg {
            HealthMsg::Tick => {
                state.refresh_metrics();
                myself.send_after(state.config.probe_period, || HealthMsg::Tick);
            }
            HealthMsg::Nudge => {}
        }
        Ok(())
    }
}

// === impl HealthArgs (state) ===

impl HealthArgs {
    fn evaluate(&self, now: Instant) {
        let queues: Vec<(&'static str, QueueStats)> = self
            .queues
            .iter()
            .map(|(name, rx)| (*name, rx.borrow().clone()))
            .collect();
        let escalation = self.escalation.lock().expect("escalation cell poisoned").clone();
        let watches = self.directory.watches();
        let inputs = HealthInputs {
            role: self.lease.borrow().role,
            queues: &queues,
            escalation: escalation.as_deref(),
            expected_watches: &self.expected_watches,
            watches: &watches,
        };
        self.verdict.send_replace(evaluate(&inputs, &self.config, now));
    }

    fn refresh_metrics(&self) {
        let metrics = self.directory.metrics();
        metrics.leading(&self.lease_name, self.lease.borrow().role == Role::Leader);
        // Running times grow without any queue message: refresh them here too.
        let now = Instant::now();
        for (name, rx) in &self.queues {
            rx.borrow().record_gauges(name, metrics, now);
        }
        self.tree
            .for_each_mailbox(|name, depth, handled| metrics.mailbox(name, depth, handled));
    }
}

/// What `/healthz` and `/readyz` read. Cheap to clone; never messages an actor.
#[derive(Clone, Debug)]
pub struct HealthHandle {
    verdict: watch::Receiver<Verdict>,
    stale_after: Duration,
}

impl HealthHandle {
    pub(crate) fn new(verdict: watch::Receiver<Verdict>, stale_after: Duration) -> Self {
        Self { verdict, stale_after }
    }

    /// Liveness now (200 if `ok`), with one line per check.
    pub fn liveness(&self) -> ProbeReport {
        self.verdict
            .borrow()
            .liveness_at(Instant::now(), self.stale_after)
    }

    /// Readiness now (200 if `ok`), with the role.
    pub fn readiness(&self) -> ProbeReport {
        self.verdict.borrow().readiness()
    }
}
