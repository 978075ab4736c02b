//! Per-token rate limiting: the pure budgets (a token bucket, a sliding window) and the table of
//! budgets the server consults.
//!
//! The bucket is the server-side model of FerrVault's "60 req/min per SAT" limit (reference §2.5),
//! scaled by configuration. Budgets take explicit instants so they are tested without sleeping.
//!
//! # Modes ([`LimiterMode`])
//! - **Token bucket** (default). With `rejected_requests_spend_budget` ("debt" mode), a rejected
//!   request also takes a token, so the bucket goes negative without bound. Clients that retry
//!   faster than the refill rate then never see a full token again: the livelock of the incident
//!   behind issue 3. Without it, rejected requests are free.
//! - **Capped debt**: rejected requests spend budget too, but the bucket never goes below
//!   `-max_debt` tokens, so a client that stops hammering is admitted again after at most
//!   `(max_debt + 1) / rate` seconds.
//! - **Sliding window**: at most `per_second × window_seconds` accepted requests in any rolling
//!   window of `window_seconds` (the burst is not used); rejected requests are free.

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// A bucket's shape: refill rate and capacity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateLimit {
    /// Tokens added per second. Must be finite and > 0.
    pub per_second: f64,
    /// Capacity: how many requests a full bucket admits back to back. Must be ≥ 1.
    pub burst: u32,
}

impl Default for RateLimit {
    /// 1 request/s with a burst of 5, the model the Go operator's tests used (reference §2.5).
    fn default() -> Self {
        Self {
            per_second: 1.0,
            burst: 5,
        }
    }
}

impl RateLimit {
    /// Checks the limit can be enforced.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.per_second.is_finite() && self.per_second > 0.0) {
            return Err(format!(
                "per_second must be finite and > 0, got {}",
                self.per_second
            ));
        }
        if self.burst == 0 {
            return Err("burst must be at least 1".to_owned());
        }
        Ok(())
    }
}

/// How every token's [`RateLimit`] is enforced (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LimiterMode {
    /// A token bucket; rejections are free, or spend budget without bound in debt mode.
    #[default]
    TokenBucket,
    /// A token bucket whose rejections spend budget down to `-max_debt` tokens, never further.
    CappedDebt {
        /// The deepest the bucket may go, in tokens.
        max_debt: u32,
    },
    /// At most `per_second × window_seconds` (rounded, at least 1) accepted requests in any
    /// rolling window of `window_seconds`; rejections are free.
    SlidingWindow {
        /// The window's length. Must be finite and > 0.
        window_seconds: f64,
    },
}

impl LimiterMode {
    /// Checks the mode can be enforced.
    ///
    /// # Errors
    /// A message naming the bad field.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::SlidingWindow { window_seconds }
                if !(window_seconds.is_finite() && *window_seconds > 0.0) =>
            {
                Err(format!(
                    "window_seconds must be finite and > 0, got {window_seconds}"
                ))
            }
            _ => Ok(()),
        }
    }
}

/// What a rejected request costs a token bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RejectionCost {
    /// Nothing.
    Free,
    /// One token, without bound (debt mode).
    Debt,
    /// One token, but the bucket never goes below minus this many tokens.
    CappedDebt(f64),
}

/// What the bucket decided about one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admission {
    /// A token was taken; serve the request.
    Accepted,
    /// No whole token was available; answer 429.
    Rejected {
        /// How long until a whole token will be available if nothing else is spent meanwhile.
        retry_after: Duration,
    },
}

/// A token bucket that may go negative in debt mode.
///
/// # Invariants
/// `tokens <= burst`; `tokens` only goes below 0 through a rejection in debt mode.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    /// The current shape.
    limit: RateLimit,
    /// Tokens available at `updated` (fractional; negative means debt).
    tokens: f64,
    /// When `tokens` was last brought up to date.
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(limit: RateLimit, now: Instant) -> Self {
        Self {
            limit,
            tokens: f64::from(limit.burst),
            updated: now,
        }
    }

    /// The current shape.
    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Tokens available at `now` (negative in debt).
    pub fn tokens_at(&mut self, now: Instant) -> f64 {
        self.refill(now);
        self.tokens
    }

    /// Changes the shape, keeping what was earned so far but never more than the new burst.
    pub fn reconfigure(&mut self, limit: RateLimit, now: Instant) {
        self.refill(now);
        self.limit = limit;
        self.tokens = self.tokens.min(f64::from(limit.burst));
    }

    /// Decides one request at `now`; a rejection costs `rejection`.
    pub fn try_acquire(&mut self, now: Instant, rejection: RejectionCost) -> Admission {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Admission::Accepted;
        }
        match rejection {
            RejectionCost::Free => {}
            RejectionCost::Debt => self.tokens -= 1.0,
            // Down to the floor, never further; `min` keeps a bucket already below it where it is.
            RejectionCost::CappedDebt(max_debt) => {
                self.tokens = (self.tokens - 1.0).max(-max_debt).min(self.tokens)
            }
        }
        let missing = 1.0 - self.tokens;
        Admission::Rejected {
            retry_after: Duration::from_secs_f64(missing / self.limit.per_second),
        }
    }

    fn refill(&mut self, now: Instant) {
        // `saturating_duration_since`: an instant from before `updated` earns nothing.
        let earned = now.saturating_duration_since(self.updated).as_secs_f64() * self.limit.per_second;
        self.tokens = (self.tokens + earned).min(f64::from(self.limit.burst));
        self.updated = self.updated.max(now);
        debug_assert!(
            self.tokens <= f64::from(self.limit.burst),
            "tokens <= burst violated"
        );
    }
}

/// A sliding-window log: the instants of the accepted requests still inside the window.
///
/// # Invariants
/// `admitted.len() <= capacity` after every decision; instants are in order.
#[derive(Clone, Debug, PartialEq)]
pub struct SlidingWindow {
    window: Duration,
    capacity: usize,
    admitted: VecDeque<Instant>,
}

impl SlidingWindow {
    /// An empty window admitting `limit.per_second × window` requests per `window`.
    pub fn new(limit: RateLimit, window: Duration) -> Self {
        Self {
            window,
            capacity: Self::capacity(limit, window),
            admitted: VecDeque::new(),
        }
    }

    fn capacity(limit: RateLimit, window: Duration) -> usize {
        ((limit.per_second * window.as_secs_f64()).round() as usize).max(1)
    }

    /// Changes the rate; the requests already in the window still count.
    pub fn reconfigure(&mut self, limit: RateLimit) {
        self.capacity = Self::capacity(limit, self.window);
    }

    /// Decides one request at `now`: accepted while fewer than the capacity were accepted in
    /// the last window; otherwise rejected until the oldest of them leaves it.
    pub fn try_acquire(&mut self, now: Instant) -> Admission {
        while self.admitted.front().is_some_and(|&t| t + self.window <= now) {
            self.admitted.pop_front();
        }
        if self.admitted.len() < self.capacity {
            self.admitted.push_back(now);
            return Admission::Accepted;
        }
        let oldest = self.admitted[self.admitted.len() - self.capacity];
        Admission::Rejected {
            retry_after: (oldest + self.window).saturating_duration_since(now),
        }
    }
}

/// One token's budget, in the limiter's mode.
#[derive(Clone, Debug, PartialEq)]
enum Budget {
    Bucket(TokenBucket),
    Window(SlidingWindow),
}

impl Budget {
    fn new(limit: RateLimit, mode: LimiterMode, now: Instant) -> Self {
        match mode {
            LimiterMode::SlidingWindow { window_seconds } => {
                Self::Window(SlidingWindow::new(limit, Duration::from_secs_f64(window_seconds)))
            }
            LimiterMode::TokenBucket | LimiterMode::CappedDebt { .. } => {
                Self::Bucket(TokenBucket::new(limit, now))
            }
        }
    }

    fn reconfigure(&mut self, limit: RateLimit, now: Instant) {
        match self {
            Self::Bucket(bucket) => bucket.reconfigure(limit, now),
            Self::Window(window) => window.reconfigure(limit),
        }
    }
}

/// Every token's bucket, created on first use.
///
/// A plain `Mutex`: each decision is a few float operations and never awaits.
#[derive(Debug)]
pub struct RateLimiter {
    state: Mutex<LimiterState>,
}

#[derive(Debug)]
struct LimiterState {
    /// The shape of buckets without an override.
    default: RateLimit,
    /// Overrides keyed by token label or fingerprint.
    overrides: HashMap<String, RateLimit>,
    /// Debt mode switch (token-bucket mode only).
    rejected_requests_spend_budget: bool,
    /// How budgets are enforced.
    mode: LimiterMode,
    /// Budgets keyed like `overrides`.
    buckets: HashMap<String, Budget>,
}

impl RateLimiter {
    /// A limiter with the given default, overrides, debt switch and mode.
    pub fn new(
        default: RateLimit,
        overrides: HashMap<String, RateLimit>,
        debt: bool,
        mode: LimiterMode,
    ) -> Self {
        Self {
            state: Mutex::new(LimiterState {
                default,
                overrides,
                rejected_requests_spend_budget: debt,
                mode,
                buckets: HashMap::new(),
            }),
        }
    }

    /// Decides one request of the token known as `key`.
    pub fn admit(&self, key: &str, now: Instant) -> Admission {
        let mut state = self.lock();
        let limit = state.overrides.get(key).copied().unwrap_or(state.default);
        let mode = state.mode;
        let rejection = match mode {
            LimiterMode::CappedDebt { max_debt } => RejectionCost::CappedDebt(f64::from(max_debt)),
            _ if state.rejected_requests_spend_budget => RejectionCost::Debt,
            _ => RejectionCost::Free,
        };
        match state
            .buckets
            .entry(key.to_owned())
            .or_insert_with(|| Budget::new(limit, mode, now))
        {
            Budget::Bucket(bucket) => bucket.try_acquire(now, rejection),
            Budget::Window(window) => window.try_acquire(now),
        }
    }

    /// Sets one token's shape from now on (its bucket keeps what it had, capped at the new burst).
    pub fn set_token_limit(&self, key: &str, limit: RateLimit, now: Instant) {
        let mut state = self.lock();
        state.overrides.insert(key.to_owned(), limit);
        if let Some(bucket) = state.buckets.get_mut(key) {
            bucket.reconfigure(limit, now);
        }
    }

    /// Sets the shape of every token without an override.
    pub fn set_default_limit(&self, limit: RateLimit, now: Instant) {
        let mut state = self.lock();
        state.default = limit;
        let LimiterState {
            overrides, buckets, ..
        } = &mut *state;
        let without_override = buckets
            .iter_mut()
            .filter(|(key, _)| !overrides.contains_key(*key));
        for (_, bucket) in without_override {
            bucket.reconfigure(limit, now);
        }
    }

    /// Switches debt mode.
    pub fn set_debt_mode(&self, rejected_requests_spend_budget: bool) {
        self.lock().rejected_requests_spend_budget = rejected_requests_spend_budget;
    }

    /// The shape in force for `key`.
    pub fn limit_for(&self, key: &str) -> RateLimit {
        let state = self.lock();
        state.overrides.get(key).copied().unwrap_or(state.default)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LimiterState> {
        // A panic while holding this lock leaves only numbers behind; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
