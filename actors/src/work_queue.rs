//! A controller's work queue: dedup, per-key serialisation, delays, backoff, priority, and the
//! pool of workers it dispatches to (its linked children).
//!
//! Receives `Enqueue` from watchers (through the controllers' `KeySink`), `Done` from the
//! [`DoneGuard`](crate::worker::DoneGuard) of every run, `Tick` from its one timer,
//! `WatchesListed` from its watch on the term's [`ListedGate`](crate::listed_gate), `Keys` and
//! `Drain` from the runtime. Sends `Run` to idle workers. Publishes [`QueueStats`] on a
//! `watch` channel after every message (read by health, the tree dump and metrics).
//!
//! # Guarantees
//! - The semantics of [`QueueState`]: a key waits once, runs on one worker at a time,
//!   `Changed` before `Refresh`, one namespace never holds more than its share of workers,
//!   delays in one timer map.
//! - `Refresh` keys are held until every watch of the term has listed once (a queue restarted
//!   after that starts released).
//! - One timer is armed, for the earliest of: the next due key, the next deadline + grace of a
//!   running key, a retry of a worker that could not be replaced.
//! - A worker busy past `reconcile_timeout + kill_grace` is killed and replaced at once, so one
//!   stuck key never blocks the others (see [`pool`]). Its key stays "processing" until the
//!   abandoned run really ends (its task is aborted at its next await), so a key is never
//!   reconciled twice at once even by a zombie; that run then counts as `Aborted(Killed)` and
//!   is retried with backoff.
//! - A reconcile panic replaces its worker (counted as a restart) and retries the key.
//!
//! # Failure
//! A panic here fails the queue; the controllers actor restarts it with an empty queue (keys
//! come back from the watchers' next events and the first pass).

use std::{sync::Arc, time::Duration};

use ractor::{ActorProcessingErr, RpcReplyPort, SupervisionEvent};
use tokio::{sync::watch, task::JoinHandle, time::Instant};

use self::pool::{Pool, Replace};
use crate::{
    backoff::random_unit,
    directory::Directory,
    fence::Fence,
    key::{Cause, ObjectKey},
    mailbox::CountedRef,
    metrics::Ended,
    queue_state::{AbortCause, Finish, KeyInfo, Next, QueueState},
    queue_view::{QueueConfig, QueueStats},
    reconciler::{Outcome, SharedReconciler},
    seams::DoneSink,
    spawn::{RuntimeActor, Spawner},
};

/// Messages to a work queue.
pub(crate) enum QueueMsg {
    /// From watchers (via `KeySink`): `key` changed; queue it (coalesced).
    Enqueue {
        /// The affected object.
        key: ObjectKey,
        /// Why: decides the lane.
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
    /// Every watch of the term has listed: release the `Refresh` lane.
    WatchesListed,
    /// From the queue handle: every known key with its state.
    Keys(RpcReplyPort<Vec<KeyInfo>>),
    /// From the controllers actor on shutdown or leadership loss: stop dispatching; the reply
    /// comes once no run is in flight.
    Drain(RpcReplyPort<()>),
}

/// Runs report their end into the queue's mailbox.
impl DoneSink for CountedRef<QueueMsg> {
    fn done(&self, run: u64, key: ObjectKey, finish: Finish) {
        // The queue may be gone (shutdown): then nobody needs the completion.
        let _ = self.cast(QueueMsg::Done { run, key, finish });
    }
}

/// Work queue arguments.
pub(crate) struct QueueArgs {
    /// The controller name (`ObjectKey::controller` of its keys).
    pub controller: &'static str,
    /// Its reconciler.
    pub reconciler: SharedReconciler,
    /// Settings.
    pub config: QueueConfig,
    /// Where to publish stats (outlives incarnations).
    pub stats: Arc<watch::Sender<QueueStats>>,
    /// Names, restarts, metrics (workers are registered here too).
    pub directory: Arc<Directory>,
    /// Runs are cancelled when it lapses.
    pub fence: Fence,
    /// Turns true once every watch of the term has listed.
    pub watches_listed: watch::Receiver<bool>,
}

type TimerTask = JoinHandle<Result<(), ractor::MessagingErr<QueueMsg>>>;

/// Work queue state.
pub(crate) struct QueueActorState {
    controller: &'static str,
    /// The pure queue.
    queue: QueueState,
    /// The workers and their runs.
    pool: Pool,
    /// Stop dispatching; reply to these once no slot holds a run.
    draining: Option<Vec<RpcReplyPort<()>>>,
    /// The one armed timer and when it fires.
    timer: Option<(Instant, TimerTask)>,
    /// Waits for every watch to list, while the `Refresh` lane is held.
    listing: Option<JoinHandle<()>>,
    myself: CountedRef<QueueMsg>,
    stats: Arc<watch::Sender<QueueStats>>,
    directory: Arc<Directory>,
}

/// The work queue actor.
pub(crate) struct WorkQueue;

impl RuntimeActor for WorkQueue {
    type Msg = QueueMsg;
    type State = QueueActorState;
    type Arguments = QueueArgs;

    async fn pre_start(
        &self,
        myself: CountedRef<QueueMsg>,
        args: QueueArgs,
    ) -> Result<QueueActorState, ActorProcessingErr> {
        args.directory
            .metrics()
            .max_concurrent(args.controller, args.config.workers);
        let spawner = Spawner::under(myself.cell(), args.directory.clone());
        let pool = Pool::new(
            args.controller,
            &args.config,
            args.reconciler,
            args.fence,
            spawner,
            Arc::new(myself.clone()),
        );
        let mut queue = QueueState::new(
            args.config.backoff.clone(),
            args.config.namespace_share,
            Instant::now(),
        );
        let mut listed = args.watches_listed;
        let all_listed = *listed.borrow_and_update();
        let listing = (!all_listed).then(|| {
            queue.hold_refresh();
            let myself = myself.clone();
            tokio::spawn(async move {
                // An error means the gate is gone: the term is ending and so is this queue.
                if listed.wait_for(|all| *all).await.is_ok() {
                    let _ = myself.cast(QueueMsg::WatchesListed);
                }
            })
        });
        Ok(QueueActorState {
            controller: args.controller,
            queue,
            pool,
            draining: None,
            timer: None,
            listing,
            myself,
            stats: args.stats,
            directory: args.directory,
        })
    }

    async fn post_start(
        &self,
        _: CountedRef<QueueMsg>,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        state.pool.start().await;
        state.after_message(Instant::now());
        Ok(())
    }

    async fn handle(
        &self,
        _: CountedRef<QueueMsg>,
        msg: QueueMsg,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        let now = Instant::now();
        let replacements = match msg {
            QueueMsg::Enqueue { key, cause } => state.on_enqueue(key, cause, now),
            QueueMsg::Done { run, key, finish } => state.on_done(run, &key, finish, now),
            QueueMsg::Tick => {
                state.timer = None; // it fired: the next wake must be armed anew
                state.pool.check_deadlines(&mut state.queue, now)
            }
            QueueMsg::WatchesListed => {
                let released = state.queue.release_refresh(now);
                tracing::debug!(
                    controller = state.controller,
                    released,
                    "every watch listed; refresh lane released"
                );
                Vec::new()
            }
            QueueMsg::Keys(reply) => {
                // The caller may have timed out: nothing to do then.
                let _ = reply.send(state.queue.keys(now));
                Vec::new()
            }
            QueueMsg::Drain(reply) => {
                state.draining.get_or_insert_with(Vec::new).push(reply);
                Vec::new()
            }
        };
        state.perform(replacements, now).await;
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _: CountedRef<QueueMsg>,
        evt: SupervisionEvent,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        let replacements = match evt {
            SupervisionEvent::ActorTerminated(cell, _, reason) => state
                .pool
                .on_worker_exit(cell.get_id(), reason.unwrap_or_else(|| "stopped".into())),
            SupervisionEvent::ActorFailed(cell, err) => {
                state.pool.on_worker_exit(cell.get_id(), err.to_string())
            }
            _ => Vec::new(),
        };
        state.perform(replacements, Instant::now()).await;
        Ok(())
    }

    async fn post_stop(
        &self,
        myself: CountedRef<QueueMsg>,
        state: &mut QueueActorState,
    ) -> Result<(), ActorProcessingErr> {
        if let Some((_, timer)) = state.timer.take() {
            timer.abort();
        }
        if let Some(listing) = state.listing.take() {
            listing.abort();
        }
        // Workers are idle after a drain; otherwise stopping them aborts their runs.
        myself
            .cell()
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
        self.queue.add(key, cause, now);
        let added = self.queue.counters().adds - before;
        if added > 0 {
            self.directory.metrics().queue_added(self.controller, added);
        }
        Vec::new()
    }

    fn on_done(&mut self, run: u64, key: &ObjectKey, finish: Finish, now: Instant) -> Vec<Replace> {
        let Some((ended, replacements)) = self.pool.ended(run, key, finish) else {
            tracing::debug!(run, %key, "completion for an unknown run ignored");
            return Vec::new();
        };
        let finish = ended.finish;
        let secs = ended
            .since
            .map_or(0.0, |s| now.saturating_duration_since(s).as_secs_f64());
        let (label, ending) = match &finish {
            Finish::Reconciled(outcome @ Outcome::Error { .. }) => (outcome.result_label(), Ended::WithError),
            Finish::Reconciled(outcome) => (outcome.result_label(), Ended::Cleanly),
            Finish::TimedOut => ("error", Ended::TimedOut),
            Finish::Aborted(AbortCause::Panicked) => ("error", Ended::Panicked),
            Finish::Aborted(_) => ("error", Ended::WithError),
        };
        self.directory
            .metrics()
            .reconciled(self.controller, label, secs, ending);
        let next = self.queue.finish(key, &finish, now, random_unit());
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
            tracing::info!(%key, reason, attempts = self.queue.attempts(key), retry_in = ?at - now, "reconcile failed; retrying");
        }
        replacements
    }

    /// Replace workers, dispatch (unless draining), then publish and re-arm the timer.
    async fn perform(&mut self, replacements: Vec<Replace>, now: Instant) {
        self.pool.replace(replacements).await;
        if self.draining.is_none() {
            for waited in self.pool.dispatch(&mut self.queue, now) {
                self.directory
                    .metrics()
                    .queue_dispatched(self.controller, waited.as_secs_f64());
            }
        }
        self.after_message(now);
    }

    fn after_message(&mut self, now: Instant) {
        // Due keys count as ready even while every worker is busy (exact depth, and no timer
        // left armed in the past).
        self.queue.promote_due(now);
        if self.draining.is_some() && self.pool.is_idle() {
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
            held_for_lists: self.queue.held_for_lists(),
            processing: self.queue.processing(),
            oldest_ready_since: self.queue.oldest_ready_since(),
            next_due: self.queue.next_due(),
            last_completed_at: self.queue.last_completed_at(),
            counters: self.queue.counters(),
            workers: self.pool.workers(),
            abandoned: self.pool.abandoned(),
            unreplaceable: self.pool.unreplaceable(),
            namespace_share: self.queue.share(),
            namespaces_waiting: self.queue.namespaces_waiting(),
            held_by_share: self.queue.held_by_share(),
            namespaces: self.queue.namespaces_holding(),
        }
    }
}

mod pool;
mod timer;

#[cfg(test)]
mod tests;
