//! What the requests sent since the last 429 say about the server's rate. Pure, like the bucket.
//!
//! A token bucket answers 200 until its reserve runs out, so all it reveals is which of our
//! requests it accepted, and that it refused the latest. Replaying our own send times through a
//! model of the server's bucket (its burst as far as we know) brackets its rate:
//! - **Lower**: the least rate at which a bucket that started as full as it can have been
//!   (its burst, or one token right after a 429) accepts every request we saw accepted.
//! - **Upper**: the greatest rate at which a bucket that started as empty as it can have been
//!   (one token in debt after a 429, empty otherwise) still refuses the latest request.
//!
//! A 429's `Retry-After` narrows how full the bucket was right after it: FerrVault sends the
//! time to its next token rounded up to whole seconds, so at rate `r` a bucket that answered
//! `RA` seconds held less than `1 − r·(RA − 1)` tokens and at least `1 − r·RA`.
//!
//! Both only ever err on the slow side. A bucket that filled up while we were slower than it
//! forgets how it started, so after a probe that overtook the server the bracket is tight: a
//! token's worth over the time the reserve took to drain.

use std::{collections::VecDeque, time::Duration};

use tokio::time::Instant;

/// Issue instants kept: enough to span any drain a probe causes.
const KEPT_ISSUES: usize = 64;
/// Bisection steps: the bracket's ends to 2⁻⁶⁰ of [`SEARCH_LIMIT`].
const SEARCH_STEPS: u32 = 60;
/// The fastest rate the search considers, requests per second.
const SEARCH_LIMIT: f64 = 1e6;

/// Requests issued since the last fresh 429 (or since the start).
#[derive(Clone, Debug, Default)]
pub(super) struct Evidence {
    /// The 429 that opened this window; `None` before any 429.
    opened_by: Option<Refusal>,
    /// Requests issued in this window.
    issued: u32,
    /// `(position, issue instant)` of the latest [`KEPT_ISSUES`] requests, oldest first.
    recent: VecDeque<(u32, Instant)>,
}

/// A 429: the issue instant of the refused request, and the `Retry-After` answered with it.
#[derive(Clone, Copy, Debug)]
struct Refusal {
    at: Instant,
    retry_after: Option<f64>,
}

/// Where the server's rate lies, requests per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Bracket {
    pub(super) lower: f64,
    /// `None` when the refusal says nothing (every request was sent at the same instant).
    pub(super) upper: Option<f64>,
}

impl Evidence {
    /// Records a request issued at `at`; returns its position in the window.
    pub(super) fn issue(&mut self, at: Instant) -> u32 {
        if self.recent.len() == KEPT_ISSUES {
            self.recent.pop_front();
        }
        let position = self.issued;
        self.recent.push_back((position, at));
        self.issued += 1;
        position
    }

    /// Starts a new window at a fresh 429 for the request issued at `rejected_at`, answered with
    /// `retry_after`.
    pub(super) fn restart(&mut self, rejected_at: Instant, retry_after: Option<Duration>) {
        let refusal = Refusal {
            at: rejected_at,
            retry_after: retry_after.map(|wait| wait.as_secs_f64()),
        };
        *self = Self {
            opened_by: Some(refusal),
            ..Self::default()
        };
    }

    /// The bracket on the server's rate, given that the request at `rejected` in this window was
    /// refused, those before it accepted, and the server's burst is at most `burst`.
    pub(super) fn bracket(&self, rejected: u32, burst: f64) -> Bracket {
        let sends: Vec<Instant> = self
            .recent
            .iter()
            .filter(|&&(position, _)| position <= rejected)
            .map(|&(_, at)| at)
            .collect();
        // The replay starts at the 429 that opened the window if the first send since is kept.
        let after_429 = self
            .opened_by
            .filter(|_| self.recent.front().is_some_and(|&(first, _)| first == 0));
        let replay = Replay {
            sends: &sends,
            burst,
            after_429,
        };
        let lower = least_rate(|rate| replay.accepts_all(rate));
        let upper = least_rate(|rate| !replay.refuses_last(rate));
        Bracket {
            lower,
            upper: (upper < SEARCH_LIMIT).then_some(upper),
        }
    }
}

/// Our sends replayed through a model of the server's bucket.
struct Replay<'a> {
    /// Issue instants, the refused request last.
    sends: &'a [Instant],
    burst: f64,
    /// The 429 the replay starts at (the server then held less than one token, at least one in
    /// debt, and what its `Retry-After` allows); `None` when it starts at an unknown level.
    after_429: Option<Refusal>,
}

impl Replay<'_> {
    /// Whether a server at `rate` that started as full as it can have been accepts every send
    /// before the last.
    fn accepts_all(&self, rate: f64) -> bool {
        let fullest = match self.after_429 {
            Some(refusal) => refusal
                .retry_after
                .map_or(1.0, |wait| (1.0 - rate * (wait - 1.0)).min(1.0)),
            None => self.burst,
        };
        self.level_at_last(rate, fullest, true).is_some()
    }

    /// Whether a server at `rate` that started as empty as it can have been refuses the last.
    fn refuses_last(&self, rate: f64) -> bool {
        let emptiest = match self.after_429 {
            Some(refusal) => refusal
                .retry_after
                .map_or(-1.0, |wait| (1.0 - rate * wait).max(-1.0)),
            None => 0.0,
        };
        self.level_at_last(rate, emptiest, false)
            .is_some_and(|level| level < 1.0)
    }

    /// The server's tokens when the last send arrives, starting at `start` tokens; `None` if
    /// `checked` and a send before it would have been refused.
    fn level_at_last(&self, rate: f64, start: f64, checked: bool) -> Option<f64> {
        let (&first, _) = self.sends.split_first()?;
        let refilled = self.after_429.map_or(0.0, |refusal| {
            rate * first.saturating_duration_since(refusal.at).as_secs_f64()
        });
        let mut level = (start + refilled).min(self.burst);
        let mut previous = first;
        for (index, &at) in self.sends.iter().enumerate() {
            level = (level + rate * (at - previous).as_secs_f64()).min(self.burst);
            previous = at;
            if index + 1 == self.sends.len() {
                return Some(level);
            }
            if checked && level < 1.0 {
                return None;
            }
            level -= 1.0;
        }
        None
    }
}

/// The least rate in `[0, SEARCH_LIMIT]` at which `holds` (monotone: false, then true), to the
/// bisection's precision; [`SEARCH_LIMIT`] if it never does.
fn least_rate(holds: impl Fn(f64) -> bool) -> f64 {
    if holds(0.0) {
        return 0.0;
    }
    let (mut fails, mut holds_at) = (0.0, SEARCH_LIMIT);
    if !holds(holds_at) {
        return SEARCH_LIMIT;
    }
    for _ in 0..SEARCH_STEPS {
        let middle = (fails + holds_at) / 2.0;
        if holds(middle) {
            holds_at = middle;
        } else {
            fails = middle;
        }
    }
    holds_at
}
