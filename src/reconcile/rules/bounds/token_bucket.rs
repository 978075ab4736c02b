//! A token bucket as pure arithmetic over the instants its caller passes: `burst` tokens, refilled
//! at `per_second`. The write budget keeps one per namespace
//! ([`write_budget`](crate::reconcile::write::write_budget)); the Event spam filter one per object
//! (client-go's `EventSourceObjectSpamFilter`, see `events/ledger.rs`).
//!
//! The rate is passed to every call rather than stored in the bucket: a bucket is two words, so
//! one per object costs little.
//!
//! # Guarantees
//! - Over any window of `t` seconds, the takes [`TokenBucket::try_take`] allows number at most
//!   `burst + per_second × t`, and with [`TokenBucket::spend`] the tokens spent exceed that by
//!   at most the debt the bucket was left in.
//! - Debt is repaid by the refill before a take succeeds again.
//! - An instant earlier than the last one seen refills nothing: time never runs backwards here.

use std::time::Duration;

use tokio::time::Instant;

/// How fast a bucket refills and how much it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Tokens added per second (positive).
    pub per_second: f64,
    /// The most tokens the bucket holds (at least 1).
    pub burst: f64,
}

impl Rate {
    /// How long the refill takes to add `tokens`.
    pub fn time_for(&self, tokens: f64) -> Duration {
        Duration::from_secs_f64((tokens / self.per_second).clamp(0.0, MAX_WAIT_SECS))
    }
}

/// The longest wait a bucket ever answers (a day): the arithmetic never overflows a
/// [`Duration`], and a bucket that far in debt is a configuration error anyway.
const MAX_WAIT_SECS: f64 = 86_400.0;

/// The state of one bucket: its tokens (negative when in debt) as of `updated`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenBucket {
    tokens: f64,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub(crate) fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: rate.burst,
            updated: now,
        }
    }

    /// Takes one token if there is one at `now`.
    pub(crate) fn try_take(&mut self, rate: Rate, now: Instant) -> bool {
        self.refill(rate, now);
        let taken = self.tokens >= 1.0;
        if taken {
            self.tokens -= 1.0;
        }
        taken
    }

    /// Spends `tokens` at `now`, into debt if need be.
    pub(crate) fn spend(&mut self, rate: Rate, now: Instant, tokens: f64) {
        self.refill(rate, now);
        self.tokens -= tokens;
    }

    /// How long from `now` until the bucket holds `tokens` (zero when it does already).
    pub(crate) fn wait_for(&mut self, rate: Rate, now: Instant, tokens: f64) -> Duration {
        self.refill(rate, now);
        rate.time_for(tokens - self.tokens)
    }

    /// Whether the bucket is full at `now`, so that forgetting it changes nothing.
    pub(crate) fn is_full(&self, rate: Rate, now: Instant) -> bool {
        let mut bucket = *self;
        bucket.refill(rate, now);
        bucket.tokens >= rate.burst
    }

    fn refill(&mut self, rate: Rate, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_second).min(rate.burst);
        self.updated = self.updated.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: Rate = Rate {
        per_second: 2.0,
        burst: 3.0,
    };

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn takes_should_follow_the_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::full(RATE, t0);
        // (at, allowed)
        let table = [
            (0, true),
            (0, true),
            (0, true),
            (0, false),
            (250, false),
            (500, true),
            (500, false),
            (1_500, true),
            (1_500, true),
            (1_500, false),
            (60_000, true),
            (60_000, true),
            (60_000, true),
            (60_000, false),
        ];
        for (at, allowed) in table {
            assert_eq!(bucket.try_take(RATE, t0 + ms(at)), allowed, "at {at} ms");
        }
    }

    #[test]
    fn takes_over_any_window_should_stay_within_burst_plus_rate_times_the_window() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::full(RATE, t0);
        let allowed: Vec<u64> = (0..10_000)
            .step_by(7)
            .filter(|at| bucket.try_take(RATE, t0 + ms(*at)))
            .collect();
        for (i, start) in allowed.iter().enumerate() {
            for window in [0, 500, 1_000, 3_000] {
                let within = allowed[i..]
                    .iter()
                    .take_while(|at| **at <= start + window)
                    .count();
                let bound = RATE.burst + RATE.per_second * window as f64 / 1000.0;
                assert!(
                    within as f64 <= bound,
                    "{within} takes in {window} ms from {start}"
                );
            }
        }
    }

    #[test]
    fn debt_should_be_repaid_before_a_take_succeeds_again() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::full(RATE, t0);
        bucket.spend(RATE, t0, 5.0);
        // 3 - 5 = -2: three tokens of refill (1.5 s) until one is there again.
        assert_eq!(bucket.wait_for(RATE, t0, 1.0), ms(1_500));
        assert!(!bucket.try_take(RATE, t0 + ms(1_499)));
        assert!(bucket.try_take(RATE, t0 + ms(1_500)));
    }

    #[test]
    fn wait_should_be_zero_when_the_tokens_are_there_and_bounded_otherwise() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::full(RATE, t0);
        assert_eq!(bucket.wait_for(RATE, t0, 1.0), Duration::ZERO);
        bucket.spend(RATE, t0, 1e12);
        assert_eq!(bucket.wait_for(RATE, t0, 1.0), Duration::from_secs(86_400));
    }

    #[test]
    fn an_earlier_instant_should_refill_nothing() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let mut bucket = TokenBucket::full(RATE, t0);
        bucket.spend(RATE, t0, 3.0);
        assert!(!bucket.try_take(RATE, t0 - Duration::from_secs(5)));
        assert!(
            bucket.try_take(RATE, t0 + ms(500)),
            "refilled from t0, not from the earlier instant"
        );
    }

    #[test]
    fn a_bucket_should_be_full_once_refilled_to_its_burst() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::full(RATE, t0);
        assert!(bucket.is_full(RATE, t0));
        bucket.spend(RATE, t0, 2.0);
        assert!(!bucket.is_full(RATE, t0 + ms(999)));
        assert!(bucket.is_full(RATE, t0 + ms(1_000)));
    }
}
