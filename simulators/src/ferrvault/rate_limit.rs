//! Per-token rate limiting: a pure token bucket, and the table of buckets the server consults.
//!
//! The bucket is the server-side model of FerrVault's "60 req/min per SAT" limit (reference §2.5),
//! scaled by configuration. It takes explicit instants so it is tested without sleeping.
//!
//! # Debt mode
//! With `rejected_requests_spend_budget`, a rejected request also takes a token, so the bucket goes
//! negative. Clients that retry faster than the refill rate then never see a full token again: the
//! livelock of the incident behind issue 3. Without it, rejected requests are free.

use std::{collections::HashMap, sync::Mutex, time::Duration};

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

    /// Decides one request at `now`.
    pub fn try_acquire(&mut self, now: Instant, rejected_requests_spend_budget: bool) -> Admission {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Admission::Accepted;
        }
        if rejected_requests_spend_budget {
            self.tokens -= 1.0;
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
    /// Debt mode switch.
    rejected_requests_spend_budget: bool,
    /// Buckets keyed like `overrides`.
    buckets: HashMap<String, TokenBucket>,
}

impl RateLimiter {
    /// A limiter with the given default, overrides and debt switch.
    pub fn new(default: RateLimit, overrides: HashMap<String, RateLimit>, debt: bool) -> Self {
        Self {
            state: Mutex::new(LimiterState {
                default,
                overrides,
                rejected_requests_spend_budget: debt,
                buckets: HashMap::new(),
            }),
        }
    }

    /// Decides one request of the token known as `key`.
    pub fn admit(&self, key: &str, now: Instant) -> Admission {
        let mut state = self.lock();
        let limit = state.overrides.get(key).copied().unwrap_or(state.default);
        let debt = state.rejected_requests_spend_budget;
        state
            .buckets
            .entry(key.to_owned())
            .or_insert_with(|| TokenBucket::new(limit, now))
            .try_acquire(now, debt)
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
mod tests {
    use super::*;

    const ONE_PER_SECOND_BURST_5: RateLimit = limit(1.0, 5);

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// A one-per-second bucket whose burst of 5 was just taken at `now`.
    fn drained(now: Instant) -> TokenBucket {
        let mut bucket = TokenBucket::new(ONE_PER_SECOND_BURST_5, now);
        for _ in 0..5 {
            assert_eq!(bucket.try_acquire(now, false), Admission::Accepted);
        }
        bucket
    }

    const fn limit(per_second: f64, burst: u32) -> RateLimit {
        RateLimit { per_second, burst }
    }

    fn rejected(retry_after_secs: f64) -> Admission {
        Admission::Rejected {
            retry_after: secs(retry_after_secs),
        }
    }

    #[test]
    fn bucket_should_admit_a_full_burst_then_reject_with_the_time_to_the_next_token() {
        let t0 = Instant::now();
        let mut bucket = drained(t0);
        assert_eq!(bucket.try_acquire(t0, false), rejected(1.0));
        let later = t0 + secs(0.25);
        assert_eq!(bucket.try_acquire(later, false), rejected(0.75));
    }

    #[test]
    fn bucket_should_refill_at_its_rate_and_never_above_burst() {
        let t0 = Instant::now();
        let mut bucket = drained(t0);
        assert_eq!(bucket.try_acquire(t0 + secs(1.0), false), Admission::Accepted);
        assert!((bucket.tokens_at(t0 + secs(1000.0)) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn bucket_without_debt_should_not_charge_rejected_requests() {
        let t0 = Instant::now();
        let mut bucket = drained(t0);
        for _ in 0..10 {
            assert!(matches!(
                bucket.try_acquire(t0 + secs(0.5), false),
                Admission::Rejected { .. }
            ));
        }
        assert_eq!(bucket.try_acquire(t0 + secs(1.0), false), Admission::Accepted);
    }

    #[test]
    fn bucket_in_debt_mode_should_charge_rejected_requests_and_push_retry_after_out() {
        let t0 = Instant::now();
        let mut bucket = drained(t0);
        assert_eq!(bucket.try_acquire(t0, true), rejected(2.0));
        assert_eq!(bucket.try_acquire(t0, true), rejected(3.0));
        assert!((bucket.tokens_at(t0) + 2.0).abs() < 1e-9);
        // One second later a non-debt bucket would admit; this one is still 2 tokens short.
        assert_eq!(bucket.try_acquire(t0 + secs(1.0), true), rejected(3.0));
    }

    #[test]
    fn bucket_in_debt_mode_should_livelock_clients_retrying_faster_than_the_refill() {
        let t0 = Instant::now();
        let mut bucket = drained(t0);
        // 1.45 requests/s against 1/s: the incident's arithmetic (reference §2.5).
        let accepted = (1..=1000)
            .map(|i| t0 + secs(f64::from(i) / 1.45))
            .filter(|&now| bucket.try_acquire(now, true) == Admission::Accepted)
            .count();
        assert_eq!(
            accepted, 0,
            "debt mode should never admit a client that outruns the refill"
        );
    }

    #[test]
    fn bucket_should_keep_earned_tokens_capped_at_the_new_burst_when_reconfigured() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(ONE_PER_SECOND_BURST_5, t0);
        bucket.reconfigure(limit(0.5, 2), t0);
        assert!((bucket.tokens_at(t0) - 2.0).abs() < 1e-9);
        assert_eq!(bucket.try_acquire(t0, false), Admission::Accepted);
        assert_eq!(bucket.try_acquire(t0, false), Admission::Accepted);
        assert_eq!(bucket.try_acquire(t0, false), rejected(2.0));
    }

    #[test]
    fn limiter_should_keep_one_bucket_per_token_and_apply_overrides_at_runtime() {
        let t0 = Instant::now();
        let limiter = RateLimiter::new(limit(1.0, 1), HashMap::new(), false);
        assert_eq!(limiter.admit("a", t0), Admission::Accepted);
        assert_eq!(limiter.admit("b", t0), Admission::Accepted);
        assert!(matches!(limiter.admit("a", t0), Admission::Rejected { .. }));
        limiter.set_token_limit("a", limit(0.5, 1), t0);
        assert_eq!(limiter.admit("a", t0 + secs(1.0)), rejected(1.0));
        assert_eq!(limiter.admit("a", t0 + secs(2.0)), Admission::Accepted);
        assert_eq!(limiter.limit_for("b"), limit(1.0, 1));
    }

    #[test]
    fn rate_limit_should_refuse_zero_rate_and_zero_burst() {
        assert!(limit(0.0, 5).validate().is_err());
        assert!(limit(f64::NAN, 5).validate().is_err());
        assert!(limit(1.0, 0).validate().is_err());
        assert!(RateLimit::default().validate().is_ok());
    }
}
