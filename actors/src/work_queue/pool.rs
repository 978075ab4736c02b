//! The worker pool of a work queue: slots, dispatch of ready keys to idle workers, deadlines of
//! running keys, and replacement of workers that exited, panicked or were stuck.
//!
//! Self-contained: it knows the queue only as the [`DoneSink`] its runs report to and the
//! [`QueueState`] it takes keys from.
//!
//! # Guarantees
//! - A slot holds at most one run, so the pool never runs more reconciles than it has slots.
//! - A worker busy past `reconcile_timeout + kill_grace` is killed and replaced at once; its run
//!   is *abandoned*: its key stays processing in the queue until the run really ends (so it is
//!   never run twice at once), but its namespace gets the worker back. At most
//!   `max_abandoned` runs may be abandoned at a time (each may hold a runtime thread); past
//!   that, a stuck worker is not replaced and [`Pool::unreplaceable`] says why.

use std::{collections::HashMap, sync::Arc, time::Duration};

use tokio::time::Instant;

use crate::{
    directory::ActorKind,
    fence::Fence,
    key::ObjectKey,
    mailbox::CountedRef,
    queue_state::{AbortCause, Finish, QueueState},
    queue_view::{QueueConfig, WorkerView},
    reconciler::SharedReconciler,
    seams::DoneSink,
    spawn::Spawner,
    worker::{DoneGuard, Job, Worker, WorkerArgs, WorkerMsg},
};

/// The run a slot holds.
struct SlotRun {
    run: u64,
    key: ObjectKey,
    since: Instant,
}

/// One place in the pool: at most one worker, at most one run.
struct Slot {
    /// Logical name of the worker in this slot.
    name: String,
    /// The live worker; `None` while being replaced or after a failed start.
    worker: Option<CountedRef<WorkerMsg>>,
    /// The run it holds.
    run: Option<SlotRun>,
    /// Why its stuck worker could not be replaced (or started).
    unreplaceable: Option<String>,
}

/// A worker to replace (and the old one to stop or kill).
pub(super) struct Replace {
    slot: usize,
    old: Option<CountedRef<WorkerMsg>>,
    reason: String,
    kill: bool,
}

/// How a run the pool handed out ended, as the queue should count it.
pub(super) struct Ended {
    /// Its finish (`Aborted(Killed)` for a run that outlived its replaced worker).
    pub(super) finish: Finish,
    /// When it started, if its worker still held it.
    pub(super) since: Option<Instant>,
}

/// The pool.
pub(super) struct Pool {
    slots: Vec<Slot>,
    /// Runs of killed workers that have not ended: run id → key.
    abandoned: HashMap<u64, ObjectKey>,
    next_run: u64,
    reconciler: SharedReconciler,
    fence: Fence,
    timeout: Duration,
    kill_grace: Duration,
    max_abandoned: usize,
    /// Spawns workers under the queue, in its runtime's directory.
    spawner: Spawner,
    /// Where runs report their end (the queue).
    done: Arc<dyn DoneSink>,
}

impl Pool {
    /// `config.workers` empty slots named `<controller>/worker-<i>`.
    pub(super) fn new(
        controller: &str,
        config: &QueueConfig,
        reconciler: SharedReconciler,
        fence: Fence,
        spawner: Spawner,
        done: Arc<dyn DoneSink>,
    ) -> Self {
        let slots = (0..config.workers)
            .map(|i| Slot {
                name: format!("{controller}/worker-{i}"),
                worker: None,
                run: None,
                unreplaceable: None,
            })
            .collect();
        Self {
            slots,
            abandoned: HashMap::new(),
            next_run: 0,
            reconciler,
            fence,
            timeout: config.reconcile_timeout,
            kill_grace: config.kill_grace,
            max_abandoned: config.max_abandoned,
            spawner,
            done,
        }
    }

    /// Start a worker in every slot.
    pub(super) async fn start(&mut self) {
        for slot in 0..self.slots.len() {
            self.spawn_into(slot).await;
        }
    }

    /// A linked worker exited (ractor supervision): replace it unless we replaced it already.
    pub(super) fn on_worker_exit(&mut self, id: ractor::ActorId, reason: String) -> Vec<Replace> {
        let Some(i) = self
            .slots
            .iter()
            .position(|s| s.worker.as_ref().is_some_and(|w| w.cell().get_id() == id))
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

    /// Run `run` of `key` reported `finish`: free its slot (replacing a worker whose
    /// reconcile panicked). `None` for a run the pool does not know (a duplicate report).
    pub(super) fn ended(
        &mut self,
        run: u64,
        key: &ObjectKey,
        finish: Finish,
    ) -> Option<(Ended, Vec<Replace>)> {
        let mut replacements = Vec::new();
        if let Some(i) = self
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
            return Some((Ended { finish, since }, replacements));
        }
        // A run that outlived its killed worker: whatever it returned, it was abandoned.
        self.abandoned.remove(&run).map(|_| {
            let ended = Ended {
                finish: Finish::Aborted(AbortCause::Killed),
                since: None,
            };
            (ended, replacements)
        })
    }

    /// Kill and replace workers stuck past deadline + grace (their keys are abandoned in
    /// `queue`), and retry slots without a worker.
    pub(super) fn check_deadlines(&mut self, queue: &mut QueueState, now: Instant) -> Vec<Replace> {
        let limit = self.timeout + self.kill_grace;
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
            if self.abandoned.len() >= self.max_abandoned {
                slot.unreplaceable = Some(format!(
                    "{} stuck on {} for {:.1}s (deadline + grace {:.1}s); not replaced: {} abandoned \
                     reconciles still running (limit {})",
                    slot.name,
                    run.key,
                    busy.as_secs_f64(),
                    limit.as_secs_f64(),
                    self.abandoned.len(),
                    self.max_abandoned
                ));
                continue;
            }
            let run = slot.run.take().expect("checked above");
            let reason = format!(
                "stuck on {} for {:.1}s (deadline + grace)",
                run.key,
                busy.as_secs_f64()
            );
            queue.abandon(&run.key);
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

    /// Stop or kill the old workers and start their replacements (each counted as a restart).
    pub(super) async fn replace(&mut self, replacements: Vec<Replace>) {
        for r in replacements {
            if let Some(old) = r.old {
                if r.kill {
                    old.cell().kill();
                } else {
                    old.cell().stop(Some(r.reason.clone()));
                }
            }
            self.spawner
                .directory()
                .restarted(&self.slots[r.slot].name, r.reason);
            self.spawn_into(r.slot).await;
        }
    }

    /// Hand ready keys from `queue` to idle workers; returns how long each waited.
    pub(super) fn dispatch(&mut self, queue: &mut QueueState, now: Instant) -> Vec<Duration> {
        let mut waits = Vec::new();
        for slot in self.slots.iter_mut().filter(|s| s.run.is_none()) {
            let Some(worker) = slot.worker.clone() else {
                continue;
            };
            let Some(d) = queue.pop(now) else { break };
            self.next_run += 1;
            let run = self.next_run;
            waits.push(d.waited);
            slot.run = Some(SlotRun {
                run,
                key: d.key.clone(),
                since: now,
            });
            let job = Job {
                guard: DoneGuard::new(run, d.key.clone(), self.done.clone()),
                key: d.key,
                attempt: d.attempt,
            };
            // A dead worker hands the job back: dropping it fires its guard (`Aborted(Lost)`).
            let _ = worker.cast(WorkerMsg::Run(job));
        }
        waits
    }

    /// No slot holds a run (abandoned runs hold none).
    pub(super) fn is_idle(&self) -> bool {
        self.slots.iter().all(|s| s.run.is_none())
    }

    /// The earliest of: a running key's deadline + grace, and a 1s retry of a slot without a
    /// worker or with an unreplaceable stuck one (their deadlines are in the past and would
    /// make the timer fire in a loop).
    pub(super) fn next_wake(&self, now: Instant) -> Option<Instant> {
        let limit = self.timeout + self.kill_grace;
        let deadlines = self
            .slots
            .iter()
            .filter(|s| s.unreplaceable.is_none())
            .filter_map(|s| s.run.as_ref().map(|r| r.since + limit));
        let retry = self
            .slots
            .iter()
            .any(|s| s.unreplaceable.is_some() || s.worker.is_none())
            .then(|| now + Duration::from_secs(1));
        deadlines.chain(retry).min()
    }

    /// Every slot as published.
    pub(super) fn workers(&self) -> Vec<WorkerView> {
        self.slots
            .iter()
            .map(|s| WorkerView {
                name: s.name.clone(),
                key: s.run.as_ref().map(|r| r.key.to_string()),
                since: s.run.as_ref().map(|r| r.since),
            })
            .collect()
    }

    /// Runs whose worker was killed but which have not ended.
    pub(super) fn abandoned(&self) -> usize {
        self.abandoned.len()
    }

    /// Why stuck workers could not be replaced (empty when all is well).
    pub(super) fn unreplaceable(&self) -> Vec<String> {
        self.slots
            .iter()
            .filter_map(|s| s.unreplaceable.clone())
            .collect()
    }

    async fn spawn_into(&mut self, slot: usize) {
        let args = WorkerArgs {
            reconciler: self.reconciler.clone(),
            timeout: self.timeout,
            fence: self.fence.clone(),
        };
        let slot = &mut self.slots[slot];
        match self
            .spawner
            .spawn(slot.name.clone(), ActorKind::Worker, Worker, args)
            .await
        {
            Ok(worker) => slot.worker = Some(worker),
            Err(err) => {
                slot.unreplaceable = Some(format!("{} could not be started: {err}", slot.name));
            }
        }
    }
}
