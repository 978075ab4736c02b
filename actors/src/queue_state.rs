//! The work queue's bookkeeping (pure: no actors, no clocks, no randomness of its own).
//!
//! client-go workqueue semantics:
//! - a key waits at most once however many events arrive (events coalesce);
//! - a key is never handed out twice at once: an event for a key being processed marks it
//!   dirty, and it is queued again when that processing finishes;
//! - delayed keys (refreshes, backoff) wait in one ordered timer map, not in sleeping tasks;
//! - two lanes: `Changed` keys are handed out before any `Refresh` key, FIFO within a lane;
//! - per-key error and rate-limit backoff, forgotten on success.
//!
//! # Invariants
//! - A key is in at most one of `ready` / `delayed`, and its `Record::wait` says which.
//! - A processing key is in neither (`wait` is `Idle`); `dirty` is only set while processing.
//! - `ready_since` has exactly one entry per `ready` entry, so `depth()` and the oldest age
//!   are exact.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    time::Duration,
};

use serde::Serialize;
use tokio::time::Instant;

use crate::{
    backoff::BackoffConfig,
    key::{Cause, Lane, ObjectKey},
    reconciler::Outcome,
};

/// How a processing run of a key ended, as reported to the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The reconciler returned.
    Reconciled(Outcome),
    /// The reconcile overran `--reconcile-timeout` and was cancelled.
    TimedOut,
    /// The run ended without an outcome.
    Aborted(AbortCause),
}

/// Why a run ended without an outcome (bounded: used as a metric label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortCause {
    /// The reconcile panicked.
    Panicked,
    /// Its worker was killed (stuck past deadline + grace, or shutdown ran out of grace).
    Killed,
    /// The dispatch never reached a live worker (its mailbox was dropped).
    Lost,
}

impl AbortCause {
    /// A fixed label.
    pub fn as_str(self) -> &'static str {
        match self {
            AbortCause::Panicked => "panicked",
            AbortCause::Killed => "killed",
            AbortCause::Lost => "lost",
        }
    }
}

/// A key handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The key to reconcile.
    pub key: ObjectKey,
    /// The lane it waited in.
    pub lane: Lane,
    /// How long it waited in `ready` (the queue-duration metric).
    pub waited: Duration,
    /// Failures and throttles in a row before this attempt.
    pub attempt: u32,
}

/// What `finish` scheduled next for the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing: the key waits for its next event.
    Idle,
    /// Queued again at once (a change arrived while it was processing).
    ReadyNow,
    /// Retried after backoff at this time (`retry` counted).
    RetryAt(Instant),
    /// Refreshed at this time.
    RefreshAt(Instant),
}

/// Counters since the queue started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounters {
    /// Keys newly made to wait (coalesced events not counted), as client-go's `adds`.
    pub adds: u64,
    /// Events that found their key already waiting or marked dirty.
    pub coalesced: u64,
    /// Backoff retries scheduled (errors, throttles, timeouts, aborts).
    pub retries: u64,
    /// Runs finished, whatever their outcome.
    pub completed: u64,
}

/// One key's place in the queue, for the queue handle and the tree dump.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyInfo {
    /// The key, displayed.
    pub key: String,
    /// `ready`, `delayed`, `processing` or `processing+dirty`.
    pub state: &'static str,
    /// Failures and throttles in a row.
    pub attempts: u32,
    /// For delayed keys: how long until due (negative = overdue), in seconds.
    pub due_in_secs: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Idle,
    Ready {
        lane: Lane,
        seq: u64,
        since: Instant,
    },
    Delayed {
        due: Instant,
        seq: u64,
        lane: Lane,
        first_pass: bool,
    },
}

#[derive(Debug)]
struct Record {
    /// Where the key waits (never `Ready`/`Delayed` while `processing` is set).
    wait: Wait,
    /// When its current run started.
    processing: Option<Instant>,
    /// A change arrived during processing: queue it in this lane when the run finishes.
    dirty: Option<Lane>,
    /// Errors (including timeouts and aborts) in a row.
    failures: u32,
    /// Rate limits in a row.
    throttles: u32,
}

impl Record {
    fn is_forgettable(&self) -> bool {
        self.wait == Wait::Idle && self.processing.is_none() && self.failures == 0 && self.throttles == 0
    }
}

/// The queue proper. All methods take `now` (and `unit` randomness in `[0, 1)`) as values.
#[derive(Debug)]
pub struct QueueState {
    /// Backoff and jitter settings.
    config: BackoffConfig,
    /// When this queue incarnation started (first-pass window, progress baseline).
    started_at: Instant,
    /// New keys given a first-pass slot so far (the next one's slot index).
    first_pass_keys: u64,
    /// Monotonic tie-breaker: FIFO order within a lane and within one due time.
    seq: u64,
    /// Every key that waits, runs, or still carries backoff.
    records: HashMap<ObjectKey, Record>,
    /// Keys due now, `Changed` lane first, FIFO within a lane.
    ready: BTreeMap<(u8, u64), ObjectKey>,
    /// The `since` of every `ready` entry, to read the oldest age exactly.
    ready_since: BTreeSet<(Instant, u64)>,
    /// Keys due later, by due time: the timer structure.
    delayed: BTreeMap<(Instant, u64), ObjectKey>,
    /// Counters since start.
    counters: QueueCounters,
    /// When a run last finished.
    last_completed_at: Option<Instant>,
}

fn rank(lane: Lane) -> u8 {
    match lane {
        Lane::Changed => 0,
        Lane::Refresh => 1,
    }
}

impl QueueState {
    /// An empty queue starting at `now`.
    pub fn new(config: BackoffConfig, now: Instant) -> Self {
        Self {
            config,
            started_at: now,
            first_pass_keys: 0,
            seq: 0,
            records: HashMap::new(),
            ready: BTreeMap::new(),
            ready_since: BTreeSet::new(),
            delayed: BTreeMap::new(),
            counters: QueueCounters::default(),
            last_completed_at: None,
        }
    }

    /// `key` was queued for `cause` (its lane: [`Cause::lane`]).
    ///
    /// Coalesces with a waiting entry (upgrading `Refresh` to `Changed`); marks a processing key
    /// dirty; moves a delayed key to ready at once, except a first-pass slot, which it keeps
    /// (upgraded to `Changed` by an event). A key first listed within `first_pass_spread` of
    /// the start gets such a slot; an event for a key never seen is ready at once, so a brand-new
    /// object never waits for a restart's backlog.
    pub fn add(&mut self, key: ObjectKey, cause: Cause, now: Instant, unit: f64) {
        let lane = cause.lane();
        let in_first_pass = now < self.started_at + self.config.first_pass_spread;
        let Some(rec) = self.records.get_mut(&key) else {
            self.counters.adds += 1;
            self.records.insert(
                key.clone(),
                Record {
                    wait: Wait::Idle,
                    processing: None,
                    dirty: None,
                    failures: 0,
                    throttles: 0,
                },
            );
            if cause == Cause::Listed && in_first_pass {
                let due = now + self.config.first_pass_delay(self.first_pass_keys, unit);
                self.first_pass_keys += 1;
                self.set_delayed(&key, due, lane, true);
            } else {
                self.set_ready(&key, lane, now);
            }
            return;
        };
        if rec.processing.is_some() {
            match rec.dirty {
                None => {
                    self.counters.adds += 1;
                    rec.dirty = Some(lane);
                }
                Some(old) => {
                    self.counters.coalesced += 1;
                    if old == Lane::Refresh && lane == Lane::Changed {
                        rec.dirty = Some(Lane::Changed);
                    }
                }
            }
            return;
        }
        match rec.wait {
            Wait::Idle => {
                self.counters.adds += 1;
                self.set_ready(&key, lane, now);
            }
            Wait::Ready { lane: old, .. } => {
                self.counters.coalesced += 1;
                if old == Lane::Refresh && lane == Lane::Changed {
                    self.clear_wait(&key);
                    self.set_ready(&key, lane, now);
                }
            }
            Wait::Delayed {
                first_pass: true,
                lane: old,
                due,
                ..
            } => {
                self.counters.coalesced += 1;
                if old == Lane::Refresh && lane == Lane::Changed {
                    self.clear_wait(&key);
                    self.set_delayed(&key, due, lane, true);
                }
            }
            Wait::Delayed { lane: old, .. } => {
                self.counters.coalesced += 1;
                self.clear_wait(&key);
                let best = if old == Lane::Changed { old } else { lane };
                self.set_ready(&key, best, now);
            }
        }
    }

    /// Move every delayed key due at `now` to ready; returns how many moved.
    pub fn promote_due(&mut self, now: Instant) -> usize {
        let mut moved = 0;
        while let Some(entry) = self.delayed.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            let Some(Wait::Delayed { lane, .. }) = self.records.get(&key).map(|r| r.wait) else {
                panic!("delayed entry without a Delayed record violated: {key}");
            };
            self.set_wait(&key, Wait::Idle);
            self.set_ready(&key, lane, now);
            moved += 1;
        }
        moved
    }

    /// Hand out the next ready key (after promoting due ones), marking it processing.
    pub fn pop(&mut self, now: Instant) -> Option<Dispatch> {
        self.promote_due(now);
        let (_, key) = self.ready.pop_first()?;
        let rec = self
            .records
            .get_mut(&key)
            .expect("ready key without record violated");
        let Wait::Ready { lane, seq, since } = rec.wait else {
            panic!("ready entry without a Ready record violated: {key}");
        };
        rec.wait = Wait::Idle;
        rec.processing = Some(now);
        self.ready_since.remove(&(since, seq));
        Some(Dispatch {
            attempt: rec.failures + rec.throttles,
            key,
            lane,
            waited: now.saturating_duration_since(since),
        })
    }

    /// The run of `key` ended with `finish` at `now`: schedule what comes next.
    ///
    /// Success forgets backoff; a dirty key then runs again at once. A failure keeps the key
    /// in backoff even when dirty (the retry picks the change up), so a throttled object that
    /// keeps changing cannot hammer the server.
    ///
    /// # Panics
    /// If `key` is not processing (a duplicate or forged completion).
    pub fn finish(&mut self, key: &ObjectKey, finish: &Finish, now: Instant, unit: f64) -> Next {
        let config = self.config.clone();
        let rec = self
            .records
            .get_mut(key)
            .expect("finish for an unknown key violated: one run per dispatch");
        assert!(
            rec.processing.take().is_some(),
            "finish for a key not processing violated: {key}"
        );
        self.counters.completed += 1;
        self.last_completed_at = Some(now);
        let dirty = rec.dirty.take();
        let retry_due = match finish {
            Finish::Reconciled(Outcome::Done { .. } | Outcome::RequeueAfter(_)) => {
                rec.failures = 0;
                rec.throttles = 0;
                None
            }
            Finish::Reconciled(Outcome::RateLimited { retry_after }) => {
                rec.throttles += 1;
                Some(now + config.rate_limited_delay(rec.throttles, *retry_after, unit))
            }
            Finish::Reconciled(Outcome::Error { .. }) | Finish::TimedOut | Finish::Aborted(_) => {
                rec.failures += 1;
                Some(now + config.error_delay(rec.failures, unit))
            }
        };
        let next = match (retry_due, dirty, finish) {
            (Some(due), _, _) => {
                self.counters.retries += 1;
                self.set_delayed(key, due, Lane::Changed, false);
                Next::RetryAt(due)
            }
            (None, Some(lane), _) => {
                self.set_ready(key, lane, now);
                Next::ReadyNow
            }
            (
                None,
                None,
                Finish::Reconciled(Outcome::Done {
                    refresh_after: Some(every),
                }),
            ) => {
                let due = now + config.refresh_delay(*every, unit);
                self.set_delayed(key, due, Lane::Refresh, false);
                Next::RefreshAt(due)
            }
            (None, None, Finish::Reconciled(Outcome::RequeueAfter(after))) => {
                let due = now + *after;
                self.set_delayed(key, due, Lane::Refresh, false);
                Next::RefreshAt(due)
            }
            (None, None, _) => Next::Idle,
        };
        if self.records.get(key).is_some_and(Record::is_forgettable) {
            self.records.remove(key);
        }
        next
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn set_wait(&mut self, key: &ObjectKey, wait: Wait) {
        self.records
            .get_mut(key)
            .expect("record for a waiting key violated")
            .wait = wait;
    }

    fn set_ready(&mut self, key: &ObjectKey, lane: Lane, now: Instant) {
        let seq = self.next_seq();
        self.ready.insert((rank(lane), seq), key.clone());
        self.ready_since.insert((now, seq));
        self.set_wait(
            key,
            Wait::Ready {
                lane,
                seq,
                since: now,
            },
        );
    }

    fn set_delayed(&mut self, key: &ObjectKey, due: Instant, lane: Lane, first_pass: bool) {
        let seq = self.next_seq();
        self.delayed.insert((due, seq), key.clone());
        self.set_wait(
            key,
            Wait::Delayed {
                due,
                seq,
                lane,
                first_pass,
            },
        );
    }

    fn clear_wait(&mut self, key: &ObjectKey) {
        let rec = self
            .records
            .get_mut(key)
            .expect("record for a waiting key violated");
        match std::mem::replace(&mut rec.wait, Wait::Idle) {
            Wait::Idle => {}
            Wait::Ready { lane, seq, since } => {
                self.ready.remove(&(rank(lane), seq));
                self.ready_since.remove(&(since, seq));
            }
            Wait::Delayed { due, seq, .. } => {
                self.delayed.remove(&(due, seq));
            }
        }
    }
}

mod figures;
#[cfg(test)]
mod tests;
