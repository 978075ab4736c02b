//! The worker pool of a work queue: slots, dispatch of ready keys to idle workers, and
//! replacement of workers that exited or were killed.

use std::sync::Arc;

use ractor::{Actor, ActorRef};
use tokio::time::Instant;

use super::{QueueActorState, QueueMsg};
use crate::{
    directory::ActorKind,
    key::ObjectKey,
    mailbox::{self, CountedRef, MailboxStats},
    worker::{DoneGuard, Job, Worker, WorkerArgs, WorkerMsg},
};

/// The run a slot holds.
pub(super) struct SlotRun {
    pub(super) run: u64,
    pub(super) key: ObjectKey,
    pub(super) since: Instant,
}

/// One place in the pool: at most one worker, at most one run.
pub(super) struct Slot {
    /// Logical name of the worker in this slot.
    pub(super) name: String,
    /// The live worker; `None` while being replaced or after a failed replacement.
    pub(super) worker: Option<CountedRef<WorkerMsg>>,
    /// The run it holds.
    pub(super) run: Option<SlotRun>,
    /// Why its stuck worker could not be replaced.
    pub(super) unreplaceable: Option<String>,
}

/// What `handle` must do after a decision.
pub(super) struct Replace {
    pub(super) slot: usize,
    pub(super) old: Option<CountedRef<WorkerMsg>>,
    pub(super) reason: String,
    pub(super) kill: bool,
}

impl QueueActorState {
    pub(super) fn on_worker_exit(&mut self, id: ractor::ActorId, reason: String) -> Vec<Replace> {
        self.directory.forget(id);
        let Some(i) = self
            .slots
            .iter()
            .position(|s| s.worker.as_ref().is_some_and(|w| w.actor().get_id() == id))
        else {
            return Vec::new(); // a worker we replaced on purpose
        };
        self.slots[i].worker = None;
        vec![Replace {
            slot: i,
            old: None,
            reason: format!("worker exited: {reason}"),
            kill: false,
        }]
    }

    /// Hand ready keys to idle workers.
    pub(super) fn dispatch(&mut self, now: Instant) -> Vec<(CountedRef<WorkerMsg>, Job)> {
        let mut sends = Vec::new();
        if self.draining.is_some() {
            return sends;
        }
        for slot in self.slots.iter_mut().filter(|s| s.run.is_none()) {
            let Some(worker) = slot.worker.clone() else {
                continue;
            };
            let Some(d) = self.queue.pop(now) else { break };
            self.next_run += 1;
            let run = self.next_run;
            self.directory
                .metrics()
                .queue_dispatched(self.controller, d.waited.as_secs_f64());
            slot.run = Some(SlotRun {
                run,
                key: d.key.clone(),
                since: now,
            });
            let guard = DoneGuard::new(run, d.key.clone(), self.myself.clone());
            sends.push((
                worker,
                Job {
                    key: d.key,
                    attempt: d.attempt,
                    guard,
                },
            ));
        }
        sends
    }

    /// Replace workers, dispatch, then publish and re-arm the timer.
    pub(super) async fn perform(
        &mut self,
        myself: &ActorRef<QueueMsg>,
        replacements: Vec<Replace>,
        now: Instant,
    ) {
        for r in replacements {
            if let Some(old) = r.old {
                self.directory.forget(old.actor().get_id());
                if r.kill {
                    old.actor().kill();
                } else {
                    old.actor().stop(Some(r.reason.clone()));
                }
            }
            self.directory.restarted(&self.slots[r.slot].name, r.reason);
            self.spawn_into(myself, r.slot).await;
        }
        for (worker, job) in self.dispatch(now) {
            // A dead worker hands the job back: dropping it fires its guard (`Aborted(Lost)`).
            let _ = worker.cast(WorkerMsg::Run(job));
        }
        self.after_message(now);
    }

    pub(super) async fn spawn_into(&mut self, myself: &ActorRef<QueueMsg>, slot: usize) {
        let stats = Arc::new(MailboxStats::default());
        let args = WorkerArgs {
            reconciler: self.reconciler.clone(),
            timeout: self.config.reconcile_timeout,
            mailbox: stats.clone(),
        };
        let slot = &mut self.slots[slot];
        match Actor::spawn_linked(None, Worker, args, myself.get_cell()).await {
            Ok((worker, _)) => {
                mailbox::register(worker.get_id(), stats.clone());
                self.directory
                    .name(worker.get_id(), slot.name.clone(), ActorKind::Worker);
                slot.worker = Some(CountedRef::new(worker, stats));
            }
            Err(err) => {
                slot.unreplaceable = Some(format!("{} could not be started: {err}", slot.name));
            }
        }
    }
}
