//! The per-credential outbound token bucket with AIMD adaptation. Pure: every method takes the
//! current instant, nothing sleeps and nothing is shared. The crate-private `pacer` module wraps it for
//! concurrent callers.
//!
//! # Model
//! - Tokens refill at `rate` per second up to `capacity`; a request spends one token.
//! - `capacity` is the server's burst minus [`HEADROOM_TOKENS`]: we never spend the server's
//!   last token, so the few hundred microseconds between "token taken here" and "request
//!   counted there" cannot turn into a 429 when both buckets run dry together.
//! - A 429 empties the bucket and pauses it until the server's `Retry-After` (or one token
//!   interval without one). Each fresh 429 halves `rate` (never below
//!   [`MIN_RATE_FRACTION`] of the configured rate); a 429 answering a request sent before the
//!   last cut is an echo of the same congestion and only extends the pause.
//! - Each success raises `rate` by [`INCREASE_FRACTION`] of the configured rate, never above it.
//!
//! # Invariants
//! - `0 <= tokens <= capacity`, `min_rate <= rate <= configured_rate`.
//! - While paused, no token is handed out and none accrues.

use std::time::Duration;

use tokio::time::Instant;

/// Server tokens we leave unspent as a safety margin against send-time jitter.
pub const HEADROOM_TOKENS: u32 = 1;
/// Factor applied to the rate on a fresh 429.
pub const DECREASE_FACTOR: f64 = 0.5;
/// Additive increase per success, as a fraction of the configured rate. Small on purpose: a
/// server that is secretly slower than configured is then probed about once every
/// `ln 2 / INCREASE_FRACTION` ≈ 140 successes, which keeps 429s well under 1–2% of requests.
pub const INCREASE_FRACTION: f64 = 1.0 / 200.0;
/// Floor of the adapted rate, as a fraction of the configured rate (1/s → 1/min).
pub const MIN_RATE_FRACTION: f64 = 1.0 / 60.0;
/// Tolerance for floating-point refill arithmetic.
const EPSILON: f64 = 1e-9;

/// One credential's bucket.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    /// The rate the operator was configured with (the server's advertised budget).
    configured_rate: f64,
    /// The server's burst, as configured.
    burst: u32,
    /// Tokens we may hold: `burst - HEADROOM_TOKENS`, at least 1.
    capacity: f64,
    /// Current adapted rate, tokens per second.
    rate: f64,
    /// Tokens available as of `updated`.
    tokens: f64,
    /// Last instant the refill was computed for.
    updated: Instant,
    /// While set and in the future, nothing is handed out and nothing accrues.
    paused_until: Option<Instant>,
    /// When the rate was last cut; 429s for requests issued before it are echoes.
    last_cut: Option<Instant>,
    /// 429s reported so far.
    rate_limited_total: u64,
}

impl TokenBucket {
    /// A full bucket. `rate` must be positive and finite; `burst` at least 1.
    pub fn new(rate_per_second: f64, burst: u32, now: Instant) -> Self {
        assert!(
            rate_per_second.is_finite() && rate_per_second > 0.0,
            "rate must be positive"
        );
        let capacity = f64::from(burst.saturating_sub(HEADROOM_TOKENS).max(1));
        Self {
            configured_rate: rate_per_second,
            burst,
            capacity,
            rate: rate_per_second,
            tokens: capacity,
            updated: now,
            paused_until: None,
            last_cut: None,
            rate_limited_total: 0,
        }
    }

    /// Takes a token, or says when the next one will be available (at the current rate).
    pub fn try_take(&mut self, now: Instant) -> Result<(), Instant> {
        self.advance(now);
        if let Some(until) = self.paused_until {
            return Err(until + self.time_to_one_token());
        }
        if self.tokens + EPSILON >= 1.0 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            return Ok(());
        }
        Err(now + self.time_to_one_token())
    }

    /// A request on this credential succeeded: raise the rate additively.
    pub fn on_success(&mut self) {
        self.rate = (self.rate + self.configured_rate * INCREASE_FRACTION).min(self.configured_rate);
    }

    /// The server answered 429 to a request whose token was taken at `issued_at`.
    pub fn on_rate_limited(&mut self, issued_at: Instant, retry_after: Option<Duration>, now: Instant) {
        self.advance(now);
        self.rate_limited_total += 1;
        let is_fresh = self.last_cut.is_none_or(|cut| issued_at >= cut);
        if is_fresh {
            let floor = self.configured_rate * MIN_RATE_FRACTION;
            self.rate = (self.rate * DECREASE_FACTOR).max(floor);
            self.last_cut = Some(now);
        }
        self.tokens = 0.0;
        let pause = retry_after.unwrap_or_else(|| self.time_to_one_token());
        let until = now + pause;
        self.paused_until = Some(self.paused_until.map_or(until, |old| old.max(until)));
    }

    /// Tokens available at `now` (refill applied).
    pub fn tokens(&mut self, now: Instant) -> f64 {
        self.advance(now);
        self.tokens
    }

    /// The current adapted rate.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The configured rate.
    pub fn configured_rate(&self) -> f64 {
        self.configured_rate
    }

    /// The configured burst (the server's; see [`HEADROOM_TOKENS`]).
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// The end of the current pause, if any.
    pub fn paused_until(&mut self, now: Instant) -> Option<Instant> {
        self.advance(now);
        self.paused_until
    }

    /// 429s reported so far.
    pub fn rate_limited_total(&self) -> u64 {
        self.rate_limited_total
    }

    fn time_to_one_token(&self) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens).max(0.0) / self.rate).max(0.0))
    }

    /// Applies refill up to `now`; ends a pause that is over.
    fn advance(&mut self, now: Instant) {
        if let Some(until) = self.paused_until {
            if now < until {
                self.updated = self.updated.max(now);
                return;
            }
            self.paused_until = None;
            self.updated = self.updated.max(until);
        }
        if now > self.updated {
            let gained = self.rate * (now - self.updated).as_secs_f64();
            self.tokens = (self.tokens + gained).min(self.capacity);
            self.updated = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn bucket_should_hand_out_its_burst_minus_headroom_then_pace_at_the_rate() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 5, t0);
        for _ in 0..4 {
            assert!(bucket.try_take(t0).is_ok());
        }
        let ready = bucket.try_take(t0).unwrap_err();
        assert_eq!(ready, t0 + secs(1.0));
        assert!(bucket.try_take(ready).is_ok());
        assert!(bucket.try_take(ready + secs(0.5)).is_err());
        assert!(bucket.try_take(ready + secs(1.0)).is_ok());
    }

    #[test]
    fn bucket_should_never_refill_above_capacity() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(2.0, 5, t0);
        assert_eq!(bucket.tokens(t0 + secs(100.0)), 4.0);
        let mut single = TokenBucket::new(1.0, 1, t0);
        assert_eq!(single.tokens(t0), 1.0, "a burst of 1 still allows one request");
    }

    #[test]
    fn rate_limit_should_pause_until_retry_after_and_halve_the_rate() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 5, t0);
        bucket.try_take(t0).unwrap();
        bucket.on_rate_limited(t0, Some(secs(3.0)), t0);
        assert_eq!(bucket.paused_until(t0), Some(t0 + secs(3.0)));
        assert_eq!(bucket.rate(), 0.5);
        assert_eq!(bucket.try_take(t0 + secs(2.9)).unwrap_err(), t0 + secs(5.0));
        assert_eq!(bucket.tokens(t0 + secs(3.0)), 0.0, "nothing accrues while paused");
        assert!(bucket.try_take(t0 + secs(5.0)).is_ok());
        assert_eq!(bucket.rate_limited_total(), 1);
    }

    #[test]
    fn echoes_of_one_congestion_should_cut_the_rate_once() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 5, t0);
        for _ in 0..3 {
            bucket.on_rate_limited(t0, Some(secs(1.0)), t0 + secs(0.1));
        }
        assert_eq!(bucket.rate(), 0.5);
        bucket.on_rate_limited(t0 + secs(2.0), None, t0 + secs(2.1));
        assert_eq!(
            bucket.rate(),
            0.25,
            "a request sent after the cut that still hits 429 cuts again"
        );
    }

    #[test]
    fn rate_should_recover_additively_and_never_exceed_the_configured_rate() {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 5, t0);
        bucket.on_rate_limited(t0, None, t0);
        bucket.on_success();
        assert!((bucket.rate() - (0.5 + INCREASE_FRACTION)).abs() < 1e-12);
        for _ in 0..1000 {
            bucket.on_success();
        }
        assert_eq!(bucket.rate(), 1.0);
        for _ in 0..100 {
            bucket.on_rate_limited(t0 + secs(1000.0), None, t0 + secs(1000.0));
        }
        assert!(bucket.rate() >= MIN_RATE_FRACTION);
    }

    /// A server token bucket as FerrVault runs it, for the convergence model below.
    struct ServerModel {
        rate: f64,
        burst: f64,
        tokens: f64,
        at: Instant,
        debt: bool,
    }

    impl ServerModel {
        /// `Ok` or the integer-second `Retry-After` a real server sends.
        fn admit(&mut self, now: Instant) -> Result<(), Duration> {
            self.tokens = (self.tokens + self.rate * (now - self.at).as_secs_f64()).min(self.burst);
            self.at = now;
            if self.tokens >= 1.0 {
                self.tokens -= 1.0;
                return Ok(());
            }
            if self.debt {
                self.tokens -= 1.0;
            }
            Err(secs(((1.0 - self.tokens) / self.rate).ceil()))
        }
    }

    /// Drives `n` back-to-back requests through the bucket against the model; returns 429s and
    /// the finishing time.
    fn run_against(server_rate: f64, debt: bool, n: usize) -> (usize, f64) {
        let t0 = Instant::now();
        let mut bucket = TokenBucket::new(1.0, 5, t0);
        let mut server = ServerModel {
            rate: server_rate,
            burst: 5.0,
            tokens: 5.0,
            at: t0,
            debt,
        };
        let (mut now, mut done, mut rejected) = (t0, 0, 0);
        while done < n {
            match bucket.try_take(now) {
                Ok(()) => match server.admit(now) {
                    Ok(()) => {
                        bucket.on_success();
                        done += 1;
                    }
                    Err(retry_after) => {
                        rejected += 1;
                        bucket.on_rate_limited(now, Some(retry_after), now);
                    }
                },
                Err(ready) => now = ready,
            }
        }
        (rejected, (now - t0).as_secs_f64())
    }

    #[test]
    fn limiter_should_never_be_rejected_by_a_server_at_the_configured_rate() {
        for debt in [false, true] {
            let (rejected, took) = run_against(1.0, debt, 1000);
            assert_eq!(rejected, 0);
            assert!(took <= 996.0 + 1e-6, "took {took}s");
        }
    }

    #[test]
    fn limiter_should_converge_on_a_server_at_half_the_configured_rate() {
        for debt in [false, true] {
            let n = 400;
            let (rejected, took) = run_against(0.5, debt, n);
            let share = rejected as f64 / (n + rejected) as f64;
            assert!(share < 0.05, "debt={debt}: {rejected} 429s for {n} successes");
            let ideal = (n as f64 - 5.0) / 0.5;
            assert!(took < ideal * 1.25, "debt={debt}: took {took}s, ideal {ideal}s");
        }
    }
}
