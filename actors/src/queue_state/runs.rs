//! What the queue hands out and hears back: a [`Dispatch`] to a worker, the [`Finish`] of a
//! run, the [`Next`] schedule of its key; and what it publishes ([`QueueCounters`],
//! [`KeyInfo`]).

use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use crate::{
    key::{Lane, ObjectKey},
    reconciler::Outcome,
};

/// How a processing run of a key ended, as reported to the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
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
pub(crate) enum AbortCause {
    /// The reconcile panicked.
    Panicked,
    /// Its worker was killed (stuck past deadline + grace, or shutdown ran out of grace).
    Killed,
    /// The dispatch never reached a live worker (its mailbox was dropped).
    Lost,
    /// The write fence lapsed: this replica could no longer prove it leads.
    Fenced,
}

impl AbortCause {
    /// A fixed label.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AbortCause::Panicked => "panicked",
            AbortCause::Killed => "killed",
            AbortCause::Lost => "lost",
            AbortCause::Fenced => "fenced",
        }
    }
}

/// A key handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dispatch {
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
pub(crate) enum Next {
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
    /// `ready`, `held` (a `Refresh` key due before every watch listed), `delayed`,
    /// `processing` or `processing+dirty`.
    pub state: &'static str,
    /// Failures and throttles in a row.
    pub attempts: u32,
    /// For delayed keys: how long until due (negative = overdue), in seconds.
    pub due_in_secs: Option<f64>,
}
