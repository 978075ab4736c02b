//! The work queue's bookkeeping (pure: no actors, no clocks, no randomness of its own).
//!
//! client-go workqueue semantics:
//! - a key waits at most once however many events arrive (events coalesce);
//! - a key is never handed out twice at once: an event for a key being processed marks it
//!   dirty, and it is queued again when that processing finishes;
//! - delayed keys (refreshes, backoff) wait in one ordered timer map, not in sleeping tasks;
//! - two lanes: `Changed` keys are handed out before any `Refresh` key, FIFO within a lane;
//! - the `Refresh` lane can be held ([`QueueState::hold_refresh`]) until every watch has
//!   listed once: a start's backlog then cannot take the workers a new object needs while its
//!   passes could only wait for the lists (controller-runtime holds every worker instead);
//! - fairness across namespaces ([`fair_share`]): one namespace holds at most `share` workers,
//!   and a free worker goes to the namespace holding the fewest, round robin;
//! - per-key error and rate-limit backoff, forgotten on success.
//!
//! # Invariants
//! - A key's [`KeyState`] says where it is: in the ready set (`Ready`), in `delayed`
//!   (`Delayed`), on a worker (`Processing`), or nowhere (`Idle`, kept for its backoff only).
//!   A change during processing is the `dirty` lane of `Processing`, so it cannot exist
//!   elsewhere.
//! - `ready_since` has exactly one entry per ready key, so `depth()` and the oldest age are
//!   exact; `processing` counts the `Processing` records.
//! - `held` has exactly one entry per `Held` key, and is empty unless the lane is held. Held
//!   keys are not ready: they count in no age, so a slow list never reads as a stall.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
};

use tokio::time::Instant;

use self::fair_share::FairShare;
pub(crate) use self::runs::{AbortCause, Dispatch, Finish, Next};
pub use self::{
    fair_share::NamespaceShare,
    runs::{KeyInfo, QueueCounters},
};
use crate::{
    backoff::BackoffConfig,
    key::{Cause, Lane, ObjectKey},
    reconciler::Outcome,
};

/// Where one key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyState {
    /// Neither waiting nor running: kept only because it carries backoff.
    Idle,
    /// Due now, waiting for a worker in `lane` (FIFO number `seq`) since `since`.
    Ready { lane: Lane, seq: u64, since: Instant },
    /// Waiting for `due` (a backoff or a refresh).
    Delayed { due: Instant, seq: u64, lane: Lane },
    /// Due in the `Refresh` lane while that lane is held (FIFO number `seq`).
    Held { seq: u64 },
    /// On a worker since `since`. `dirty`: a change arrived meanwhile, to queue in this lane
    /// when the run ends. `holds_worker`: the run still occupies a worker of its namespace's
    /// share (false once its stuck worker was replaced and the run abandoned).
    Processing {
        since: Instant,
        dirty: Option<Lane>,
        holds_worker: bool,
    },
}

#[derive(Debug)]
struct Record {
    state: KeyState,
    /// Errors (including timeouts and aborts) in a row.
    failures: u32,
    /// Rate limits in a row.
    throttles: u32,
}

impl Record {
    fn is_forgettable(&self) -> bool {
        self.state == KeyState::Idle && self.failures == 0 && self.throttles == 0
    }
}

/// The queue proper. All methods take `now` (and `unit` randomness in `[0, 1)`) as values.
#[derive(Debug)]
pub(crate) struct QueueState {
    /// Backoff and jitter settings.
    config: BackoffConfig,
    /// When this queue incarnation started (progress baseline).
    started_at: Instant,
    /// Monotonic tie-breaker: FIFO order within a lane and within one due time.
    seq: u64,
    /// Every key that waits, runs, or still carries backoff.
    /// Keyed by a shared key: the timer map points at the same one (most keys wait there, for
    /// their next refresh, so a second copy of every key would be most of the queue's memory).
    records: HashMap<Arc<ObjectKey>, Record>,
    /// Keys due now, by namespace, lane and FIFO order.
    ready: FairShare,
    /// The `since` of every ready key, to read the oldest age exactly.
    ready_since: BTreeSet<(Instant, u64)>,
    /// Keys due later, by due time: the timer structure.
    delayed: BTreeMap<(Instant, u64), Arc<ObjectKey>>,
    /// Whether `Refresh` keys wait in `held` instead of `ready`.
    refresh_held: bool,
    /// `Refresh` keys due while the lane is held, in FIFO order.
    held: BTreeMap<u64, Arc<ObjectKey>>,
    /// Keys on a worker.
    processing: usize,
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
    /// An empty queue starting at `now`, letting one namespace hold at most `share` workers.
    pub(crate) fn new(config: BackoffConfig, share: usize, now: Instant) -> Self {
        Self {
            config,
            started_at: now,
            seq: 0,
            records: HashMap::new(),
            ready: FairShare::new(share),
            ready_since: BTreeSet::new(),
            delayed: BTreeMap::new(),
            refresh_held: false,
            held: BTreeMap::new(),
            processing: 0,
            counters: QueueCounters::default(),
            last_completed_at: None,
        }
    }

    /// From now on, `Refresh` keys wait unseen by any worker until [`Self::release_refresh`];
    /// `Changed` keys run as before.
    pub(crate) fn hold_refresh(&mut self) {
        self.refresh_held = true;
    }

    /// End the hold: every held key becomes ready at `now`, in the order it came; returns how
    /// many.
    pub(crate) fn release_refresh(&mut self, now: Instant) -> usize {
        self.refresh_held = false;
        let held = std::mem::take(&mut self.held);
        for key in held.values() {
            self.set_state(key, KeyState::Idle);
            self.set_ready(key, Lane::Refresh, now);
        }
        held.len()
    }

    /// `key` was queued for `cause` (its lane: [`Cause::lane`]).
    ///
    /// Coalesces with a waiting entry (upgrading `Refresh` to `Changed`); marks a processing key
    /// dirty; moves a delayed key to ready at once. A key never seen is ready at once, so a
    /// restart's whole list starts as fast as the pool runs it, and a brand-new object (a
    /// `Changed` key) still goes ahead of that backlog.
    pub(crate) fn add(&mut self, key: ObjectKey, cause: Cause, now: Instant) {
        let lane = cause.lane();
        let Some(rec) = self.records.get_mut(&key) else {
            self.counters.adds += 1;
            self.records.insert(
                Arc::new(key.clone()),
                Record {
                    state: KeyState::Idle,
                    failures: 0,
                    throttles: 0,
                },
            );
            self.set_ready(&key, lane, now);
            return;
        };
        match rec.state {
            KeyState::Processing {
                since,
                dirty,
                holds_worker,
            } => {
                let dirty = match dirty {
                    None => {
                        self.counters.adds += 1;
                        lane
                    }
                    Some(old) => {
                        self.counters.coalesced += 1;
                        upgrade(old, lane)
                    }
                };
                rec.state = KeyState::Processing {
                    since,
                    dirty: Some(dirty),
                    holds_worker,
                };
            }
            KeyState::Idle => {
                self.counters.adds += 1;
                self.set_ready(&key, lane, now);
            }
            KeyState::Ready { lane: old, .. } => {
                self.counters.coalesced += 1;
                if old == Lane::Refresh && lane == Lane::Changed {
                    self.clear_wait(&key);
                    self.set_ready(&key, lane, now);
                }
            }
            KeyState::Held { .. } => {
                self.counters.coalesced += 1;
                if lane == Lane::Changed {
                    self.clear_wait(&key);
                    self.set_ready(&key, lane, now);
                }
            }
            KeyState::Delayed { lane: old, .. } => {
                self.counters.coalesced += 1;
                self.clear_wait(&key);
                self.set_ready(&key, upgrade(old, lane), now);
            }
        }
    }

    /// Move every delayed key due at `now` to ready; returns how many moved.
    pub(crate) fn promote_due(&mut self, now: Instant) -> usize {
        let mut moved = 0;
        while let Some(entry) = self.delayed.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            let Some(KeyState::Delayed { lane, .. }) = self.records.get(&key).map(|r| r.state) else {
                panic!("delayed entry without a Delayed record violated: {key}");
            };
            self.set_state(&key, KeyState::Idle);
            self.set_ready(&key, lane, now);
            moved += 1;
        }
        moved
    }

    /// Hand out the next ready key by the fairness rules (after promoting due ones), marking it
    /// processing; `None` when nothing is ready or every namespace with a ready key holds its
    /// share of workers.
    pub(crate) fn pop(&mut self, now: Instant) -> Option<Dispatch> {
        self.promote_due(now);
        let (key, _, _) = self.ready.pop()?;
        let rec = self
            .records
            .get_mut(&key)
            .expect("ready key without record violated");
        let KeyState::Ready { lane, seq, since } = rec.state else {
            panic!("ready entry without a Ready record violated: {key}");
        };
        rec.state = KeyState::Processing {
            since: now,
            dirty: None,
            holds_worker: true,
        };
        self.processing += 1;
        self.ready_since.remove(&(since, seq));
        Some(Dispatch {
            attempt: rec.failures + rec.throttles,
            key,
            lane,
            waited: now.saturating_duration_since(since),
        })
    }

    /// The worker running `key` was replaced while the run goes on (it ignores cancellation):
    /// the key stays processing, so it is never run twice at once, but its namespace gets the
    /// worker back.
    pub(crate) fn abandon(&mut self, key: &ObjectKey) {
        let Some(Record {
            state: KeyState::Processing { holds_worker, .. },
            ..
        }) = self.records.get_mut(key)
        else {
            return;
        };
        if std::mem::replace(holds_worker, false) {
            self.ready.release(&key.namespace);
        }
    }

    /// The run of `key` ended with `finish` at `now`: schedule what comes next.
    ///
    /// Success forgets backoff; a dirty key then runs again at once. A failure keeps the key
    /// in backoff even when dirty (the retry picks the change up), so a throttled object that
    /// keeps changing cannot hammer the server.
    ///
    /// # Panics
    /// If `key` is not processing (a duplicate or forged completion).
    pub(crate) fn finish(&mut self, key: &ObjectKey, finish: &Finish, now: Instant, unit: f64) -> Next {
        let config = self.config.clone();
        let rec = self
            .records
            .get_mut(key)
            .expect("finish for an unknown key violated: one run per dispatch");
        let KeyState::Processing {
            dirty, holds_worker, ..
        } = std::mem::replace(&mut rec.state, KeyState::Idle)
        else {
            panic!("finish for a key not processing violated: {key}");
        };
        if holds_worker {
            self.ready.release(&key.namespace);
        }
        self.processing -= 1;
        self.counters.completed += 1;
        self.last_completed_at = Some(now);
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
                self.set_delayed(key, due, Lane::Changed);
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
                self.set_delayed(key, due, Lane::Refresh);
                Next::RefreshAt(due)
            }
            (None, None, Finish::Reconciled(Outcome::RequeueAfter(after))) => {
                let due = now + *after;
                self.set_delayed(key, due, Lane::Refresh);
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

    fn set_state(&mut self, key: &ObjectKey, state: KeyState) {
        self.records
            .get_mut(key)
            .expect("record for a waiting key violated")
            .state = state;
    }

    /// Make `key` ready in `lane` at `now`; held instead when that lane is held.
    fn set_ready(&mut self, key: &ObjectKey, lane: Lane, now: Instant) {
        let seq = self.next_seq();
        if lane == Lane::Refresh && self.refresh_held {
            self.held.insert(seq, self.shared(key));
            self.set_state(key, KeyState::Held { seq });
            return;
        }
        self.ready.insert(key.clone(), rank(lane), seq);
        self.ready_since.insert((now, seq));
        self.set_state(
            key,
            KeyState::Ready {
                lane,
                seq,
                since: now,
            },
        );
    }

    /// The record's own copy of `key`, shared with the timer map or the held list.
    fn shared(&self, key: &ObjectKey) -> Arc<ObjectKey> {
        let (shared, _) = self
            .records
            .get_key_value(key)
            .expect("record for a waiting key violated");
        shared.clone()
    }

    fn set_delayed(&mut self, key: &ObjectKey, due: Instant, lane: Lane) {
        let seq = self.next_seq();
        self.delayed.insert((due, seq), self.shared(key));
        self.set_state(key, KeyState::Delayed { due, seq, lane });
    }

    /// Take a waiting key out of the ready set or the timer map (back to `Idle`).
    fn clear_wait(&mut self, key: &ObjectKey) {
        let rec = self
            .records
            .get_mut(key)
            .expect("record for a waiting key violated");
        match std::mem::replace(&mut rec.state, KeyState::Idle) {
            KeyState::Idle => {}
            KeyState::Ready { lane, seq, since } => {
                self.ready.remove(key, rank(lane), seq);
                self.ready_since.remove(&(since, seq));
            }
            KeyState::Delayed { due, seq, .. } => {
                self.delayed.remove(&(due, seq));
            }
            KeyState::Held { seq } => {
                self.held.remove(&seq);
            }
            processing @ KeyState::Processing { .. } => {
                rec.state = processing;
                panic!("clearing the wait of a processing key violated: {key}");
            }
        }
    }
}

/// The better of two lanes for one key.
fn upgrade(old: Lane, new: Lane) -> Lane {
    if old == Lane::Changed { old } else { new }
}

mod fair_share;
#[cfg(test)]
mod fairness_tests;
mod figures;
#[cfg(test)]
mod hold_tests;
mod runs;
#[cfg(test)]
mod tests;
