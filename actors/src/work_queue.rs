//! A controller's work queue: dedup, per-key serialisation, delays, backoff, priority, and the
//! pool of workers it dispatches to (its linked children).
//!
//! Receives `Enqueue` from watchers (through the controllers' `KeySink`), `Done` from the
//! [`DoneGuard`](crate::worker::DoneGuard) of every run, `Tick` from its one timer, `Keys` and
//! `Drain` from the runtime. Sends `Run` to idle workers. Publishes [`QueueStats`] on a
//! `watch` channel after every message (read by health, the tree dump and metrics).
//!
//! # Guarantees
//! - The semantics of [`QueueState`]: a key waits once, runs on one worker at a time,
//!   `Changed` before `Refresh`, delays in one timer map.
//! - One timer is armed, for the earliest of: the next due key, the next deadline + grace of a
//!   running key, a retry of a worker that could not be replaced.
//! - A worker busy past `reconcile_timeout + kill_grace` is killed and replaced at once, so one
//!   stuck key never blocks the others. Its key stays "processing" until the abandoned run
//!   really ends (its task is aborted at its next await), so a key is never reconciled twice at
//!   once even by a zombie; that run then counts as `Aborted(Killed)` and is retried with backoff.
//!   At most `max_abandoned` such runs may linger (each may hold a runtime thread); past that a
//!   stuck worker is not replaced and health reports it.
//! - A reconcile panic replaces its worker (counted as a restart) and retries the key.
//!
//! # Failure
//! A panic here fails the queue; the controllers actor restarts it with an empty queue (keys
//! come back from the watchers' next events and the first pass).

use std::{collections::HashMap, sync::Arc, time::Duration};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use tokio::{sync::watch, task::JoinHandle, time::Instant};

use self::pool::{Replace, Slot};
pub use crate::queue_view::{QueueConfig, QueueStats, WorkerView};
use crate::{
    backoff::random_unit,
    directory::Directory,
    key::{Cause, ObjectKey},
    mailbox::{CountedRef, MailboxStats},
    metrics::Ended,
    queue_state::{AbortCause, Finish, KeyInfo, Next, QueueState},
    reconciler::{Outcome, SharedReconciler},
};

/// Messages to a work queue.
pub enum QueueMsg {
    /// From watchers (via `KeySink`): `key` changed; queue it (coalesced).
    Enqueue {
        /// The affected object.
        key: ObjectKey,
        /// Why: decides the lane and the first-pass spread.
        cause: Cause,
    },
    /// From a run's `DoneGuard`: run `run` of `key` ended.
    Done {
        /// The run id handed out with the job.
        run: u64,
        /// Its key.
        key: ObjectKey,
        /// How it ended.
        finish: Finish,
    },
    /// From the queue's own timer: promote due keys, check deadlines.
    Tick,
    /// From the queue handle: every known key with its state.
    Keys(RpcReplyPort<Vec<KeyInfo>>),
    /// From the controllers actor on shutdown or leadership loss: stop dispatching; the reply
    /// comes once no run is in flight.
    Drain(RpcReplyPort<()>),
}

/// Work queue arguments.
pub struct QueueArgs {
    /// The controller name (`ObjectKey::controller` of its keys).
    pub controller: &'static str,
    /// Its reconciler.
    pub reconciler: SharedReconciler,
    /// Settings.
    pub config: QueueConfig,
    /// This incarnation's mailbox counters.
    pub mailbox: Arc<MailboxStats>,
    /// Where to publish stats (outlives incarnations).
    pub stats: Arc<watch::Sender<QueueStats>>,
    /// Names, restarts, metrics.
    pub directory: Arc<Directory>,
}

type TimerTask = JoinHandle<Result<(), ractor::MessagingErr<QueueMsg>>>;

/// Work queue state.
pub struct QueueActorState {
    controller: &'static str,
    config: QueueConfig,
    reconciler: SharedReconciler,
    /// The pure queue.
    queue: QueueState,
    /// Worker slots; a slot has at most one run (the pool bound).
    slots: Vec<Slot>,
    /// Runs of killed workers that have not ended: run id → key. Their keys stay processing.
    abandoned: HashMap<u64, ObjectKey>,
    next_run: u64,
    /// Stop dispatching; reply to these once no slot holds a run.
    draining: Option<Vec<RpcReplyPort<()>>>,
    /// The one armed timer and when it fires.
    timer: Option<(Instant, TimerTask)>,
    myself: CountedRef<QueueMsg>,
    mailbox: Arc<MailboxStats>,
    stats: Arc<watch::Sender<QueueStats>>,
    directory: Arc<Directory>,
}

/// The work queue actor.
pub struct WorkQueue;

impl Actor for WorkQueue {
    type Msg = QueueMsg;
    type State = QueueActorState;
    type Arguments = QueueArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<QueueMsg>,
        args: QueueArgs,
    ) -> Result<QueueActorState, ActorProcessingErr> {
        let slots = (0..args.config.workers)
            .map(|i| Slot {
                name: format!("{}/worker-{i}", args.controller),
                worker: None,
                run: None,
                unreplaceable: None,
            })
            .collect();
        args.directory
            .metrics()
            .max_concurrent(args.controller, args.config.workers);
        Ok(QueueActorState {
            controller: args.controller,
            queue: QueueState::new(args.config.backoff.clone(), Instant::now()),
            config: args.config,
            reconciler: args.reconciler,
            slots,
            abandoned: HashMap::new(),
            next_run: 0,
            draining: None,
            timer: None,
            myself: CountedRef::new(myself, args.mailbox.clone()),
            mailbox: args.mailbox,
            stats: args.stats,
            directory: args.directory,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<QueueMsg>,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        for slot in 0..state.slots.len() {
            state.spawn_into(&myself, slot).await;
        }
        state.after_message(Instant::now());
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<QueueMsg>,
        msg: QueueMsg,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        let now = Instant::now();
        let replacements = match msg {
            QueueMsg::Enqueue { key, cause } => state.on_enqueue(key, cause, now),
            QueueMsg::Done { run, key, finish } => state.on_done(run, key, finish, now),
            QueueMsg::Tick => {
                state.timer = None; // it fired: the next wake must be armed anew
                state.on_tick(now)
            }
            QueueMsg::Keys(reply) => state.on_keys(reply, now),
            QueueMsg::Drain(reply) => state.on_drain(reply),
        };
        state.perform(&myself, replacements, now).await;
        state.mailbox.record_handled();
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<QueueMsg>,
        evt: SupervisionEvent,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        let replacements = match evt {
            SupervisionEvent::ActorTerminated(cell, _, reason) => {
                state.on_worker_exit(cell.get_id(), reason.unwrap_or_else(|| "stopped".into()))
            }
            SupervisionEvent::ActorFailed(cell, err) => state.on_worker_exit(cell.get_id(), err.to_string()),
            _ => Vec::new(),
        };
        state.perform(&myself, replacements, Instant::now()).await;
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: ActorRef<QueueMsg>,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some((_, timer)) = state.timer.take() {
            timer.abort();
        }
        // Workers are idle after a drain; otherwise stopping them aborts their runs.
        myself
            .stop_children_and_wait(Some("work queue stopped".into()), Some(Duration::from_secs(5)))
            .await;
        state.stats.send_replace(QueueStats::inactive());
        state
            .directory
            .metrics()
            .queue_gauges(state.controller, 0, 0, 0.0, 0.0);
        Ok(())
    }
}

// === impl QueueActorState ===

impl QueueActorState {
    fn on_enqueue(&mut self, key: ObjectKey, cause: Cause, now: Instant) -> Vec<Replace> {
        let before = self.queue.counters().adds;
        self.queue.add(key, cause, now, random_unit());
        let added = self.queue.counters().adds - before;
        if added > 0 {
            self.directory.metrics().queue_added(self.controller, added);
        }
        Vec::new()
    }

    fn on_done(&mut self, run: u64, key: ObjectKey, finish: Finish, now: Instant) -> Vec<Replace> {
        let mut replacements = Vec::new();
        let (finish, since) = if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.run.as_ref().is_some_and(|r| r.run == run))
        {
            let slot = &mut self.slots[i];
            let since = slot.run.take().map(|r| r.since);
            slot.unreplaceable = None;
            if finish == Finish::Aborted(AbortCause::Panicked) {
                replacements.push(Replace {
                    slot: i,
                    old: slot.worker.take(),
                    reason: format!("reconcile of {key} panicked"),
                    kill: false,
                });
            }
            (finish, since)
        } else if self.abandoned.remove(&run).is_some() {
            // The run outlived its killed worker: whatever it returned, it was abandoned.
            (Finish::Aborted(AbortCause::Killed), None)
        } else {
            tracing::debug!(run, %key, "completion for an unknown run ignored");
            return replacements;
        };
        let secs = since.map_or(0.0, |s| now.saturating_duration_since(s).as_secs_f64());
        let (label, ended) = match &finish {
            Finish::Reconciled(outcome @ Outcome::Error { .. }) => (outcome.result_label(), Ended::WithError),
            Finish::Reconciled(outcome) => (outcome.result_label(), Ended::Cleanly),
            Finish::TimedOut => ("error", Ended::TimedOut),
            Finish::Aborted(AbortCause::Panicked) => ("error", Ended::Panicked),
            Finish::Aborted(_) => ("error", Ended::WithError),
        };
        self.directory
            .metrics()
            .reconciled(self.controller, label, secs, ended);
        let next = self.queue.finish(&key, &finish, now, random_unit());
        if matches!(next, Next::RetryAt(_) | Next::RefreshAt(_)) {
            // controller-runtime counts every add with a delay, timed refreshes included.
            self.directory.metrics().queue_retried(self.controller);
        }
        if let Next::RetryAt(at) = next {
            // The reason is a fixed label; the reconciler's message is not logged here.
            let reason = match &finish {
                Finish::Reconciled(Outcome::Error { reason, .. }) => reason,
                Finish::Reconciled(Outcome::RateLimited { .. }) => &"rate_limited",
                Finish::TimedOut => &"timed_out",
                Finish::Aborted(cause) => &cause.as_str(),
                Finish::Reconciled(Outcome::Done { .. } | Outcome::RequeueAfter(_)) => &"none",
            };
            tracing::info!(%key, reason, attempts = self.queue.attempts(&key), retry_in = ?at - now, "reconcile failed; retrying");
        }
        replacements
    }

    fn on_tick(&mut self, now: Instant) -> Vec<Replace> {
        let limit = self.config.reconcile_timeout + self.config.kill_grace;
        let mut replacements = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(run) = slot.run.as_ref() else {
                if slot.worker.is_none() {
                    let reason = "retrying a failed worker start".to_owned();
                    replacements.push(Replace {
                        slot: i,
                        old: None,
                        reason,
                        kill: false,
                    });
                }
                continue;
            };
            let busy = now.saturating_duration_since(run.since);
            if busy < limit {
                continue;
            }
            if self.abandoned.len() >= self.config.max_abandoned {
                slot.unreplaceable = Some(format!(
                    "{} stuck on {} for {:.1}s (deadline + grace {:.1}s); not replaced: {} abandoned \
                     reconciles still running (limit {})",
                    slot.name,
                    run.key,
                    busy.as_secs_f64(),
                    limit.as_secs_f64(),
                    self.abandoned.len(),
                    self.config.max_abandoned
                ));
                continue;
            }
            let run = slot.run.take().expect("checked above");
            let reason = format!(
                "stuck on {} for {:.1}s (deadline + grace)",
                run.key,
                busy.as_secs_f64()
            );
            self.abandoned.insert(run.run, run.key);
            slot.unreplaceable = None;
            replacements.push(Replace {
                slot: i,
                old: slot.worker.take(),
                reason,
                kill: true,
            });
        }
        replacements
    }

    fn on_keys(&mut self, reply: RpcReplyPort<Vec<KeyInfo>>, now: Instant) -> Vec<Replace> {
        // The caller may have timed out: nothing to do then.
        let _ = reply.send(self.queue.keys(now));
        Vec::new()
    }

    fn on_drain(&mut self, reply: RpcReplyPort<()>) -> Vec<Replace> {
        self.draining.get_or_insert_with(Vec::new).push(reply);
        Vec::new()
    }

    fn after_message(&mut self, now: Instant) {
        // Due keys count as ready even while every worker is busy (exact depth, and no timer
        // left armed in the past).
        self.queue.promote_due(now);
        if self.draining.is_some() && self.slots.iter().all(|s| s.run.is_none()) {
            for reply in self.draining.as_mut().map(std::mem::take).unwrap_or_default() {
                // The drainer may have given up waiting: fine.
                let _ = reply.send(());
            }
        }
        self.arm_timer(now);
        let view = self.view();
        view.record_gauges(self.controller, self.directory.metrics(), now);
        self.stats.send_replace(view);
    }

    fn view(&self) -> QueueStats {
        QueueStats {
            active: true,
            started_at: self.queue.started_at(),
            depth: self.queue.depth(),
            delayed: self.queue.delayed(),
            processing: self.queue.processing(),
            oldest_ready_since: self.queue.oldest_ready_since(),
            next_due: self.queue.next_due(),
            last_completed_at: self.queue.last_completed_at(),
            counters: self.queue.counters(),
            workers: self
                .slots
                .iter()
                .map(|s| WorkerView {
                    name: s.name.clone(),
                    key: s.run.as_ref().map(|r| r.key.to_string()),
                    since: s.run.as_ref().map(|r| r.since),
                })
                .collect(),
            abandoned: self.abandoned.len(),
            unreplaceable: self
                .slots
                .iter()
                .filter_map(|s| s.unreplaceable.clone())
                .collect(),
        }
    }
}

mod pool;
mod timer;

#[cfg(test)]
mod tests;
