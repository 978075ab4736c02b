//! Backoff and jitter arithmetic (pure: randomness comes in as a `unit` value in `[0, 1)`).
//!
//! - Errors: exponential from `error_base` doubling to `error_max`, jittered ±10%
//!   (never above `error_max`).
//! - Rate limiting: `rate_base` doubling to `rate_max`, jittered uniformly over `[d/2, d)` so
//!   many throttled keys do not retry in lockstep, and never sooner than the server asked.
//! - Refresh: the requested interval ±10%.
//!
//! Per-key failure counts live in the work queue; both are forgotten on success.

use std::time::Duration;

/// Backoff settings (flags of the runtime).
#[derive(Clone, Debug, PartialEq)]
pub struct BackoffConfig {
    /// First error retry delay (default 1s).
    pub error_base: Duration,
    /// Longest error retry delay (default 5m).
    pub error_max: Duration,
    /// First rate-limited retry delay (default 5s).
    pub rate_base: Duration,
    /// Longest rate-limited retry delay (default 5m).
    pub rate_max: Duration,
    /// Relative refresh jitter (default 0.1 = ±10%).
    pub refresh_jitter: f64,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            error_base: Self::DEFAULT_ERROR_BASE,
            error_max: Self::DEFAULT_MAX,
            rate_base: Self::DEFAULT_RATE_BASE,
            rate_max: Self::DEFAULT_MAX,
            refresh_jitter: 0.1,
        }
    }
}

impl BackoffConfig {
    /// Default first error delay.
    pub const DEFAULT_ERROR_BASE: Duration = Duration::from_secs(1);
    /// Default first rate-limited delay.
    pub const DEFAULT_RATE_BASE: Duration = Duration::from_secs(5);
    /// Default ceiling of both paths.
    pub const DEFAULT_MAX: Duration = Duration::from_secs(300);

    /// Delay before retry number `failures` (1-based) after an error.
    pub fn error_delay(&self, failures: u32, unit: f64) -> Duration {
        let d = exponential(self.error_base, self.error_max, failures);
        scale(d, 0.9 + 0.2 * unit).min(self.error_max)
    }

    /// Delay before retry number `throttles` (1-based) after a rate limit, never below
    /// the server's `retry_after`.
    pub fn rate_limited_delay(&self, throttles: u32, retry_after: Option<Duration>, unit: f64) -> Duration {
        let d = exponential(self.rate_base, self.rate_max, throttles);
        let jittered = scale(d, 0.5 + 0.5 * unit);
        jittered.max(retry_after.unwrap_or_default())
    }

    /// A refresh interval with ±`refresh_jitter` applied.
    pub fn refresh_delay(&self, interval: Duration, unit: f64) -> Duration {
        scale(
            interval,
            1.0 - self.refresh_jitter + 2.0 * self.refresh_jitter * unit,
        )
    }
}

/// `base · 2^(n-1)`, capped at `max` (n = 0 is treated as 1).
fn exponential(base: Duration, max: Duration, n: u32) -> Duration {
    let shift = n.saturating_sub(1).min(31);
    base.saturating_mul(1u32 << shift).min(max)
}

fn scale(d: Duration, factor: f64) -> Duration {
    d.mul_f64(factor.clamp(0.0, 2.0))
}

/// A uniform random value in `[0, 1)` for the functions above.
pub(crate) fn random_unit() -> f64 {
    use rand::RngExt;
    rand::rng().random_range(0.0..1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn error_delay_should_double_from_one_second_to_five_minutes() {
        let c = BackoffConfig::default();
        let mid: Vec<_> = (1..=10).map(|n| c.error_delay(n, 0.5)).collect();
        assert_eq!(&mid[..4], &[S(1), S(2), S(4), S(8)]);
        assert_eq!(c.error_delay(9, 0.5), S(256));
        assert_eq!(c.error_delay(10, 0.5), S(300));
        assert_eq!(c.error_delay(1000, 0.999), S(300));
    }

    #[test]
    fn error_delay_should_jitter_within_ten_percent() {
        let c = BackoffConfig::default();
        assert_eq!(c.error_delay(3, 0.0), Duration::from_millis(3600));
        assert!(c.error_delay(3, 0.999) < Duration::from_millis(4400));
    }

    #[test]
    fn rate_limited_delay_should_jitter_over_the_lower_half_and_respect_retry_after() {
        let c = BackoffConfig::default();
        assert_eq!(c.rate_limited_delay(1, None, 0.0), Duration::from_millis(2500));
        assert!(c.rate_limited_delay(1, None, 0.999) < S(5));
        assert_eq!(c.rate_limited_delay(2, None, 0.0), S(5));
        assert_eq!(c.rate_limited_delay(20, None, 0.0), S(150));
        assert!(c.rate_limited_delay(20, None, 0.999) < S(300));
        assert_eq!(c.rate_limited_delay(1, Some(S(30)), 0.0), S(30));
    }

    #[test]
    fn refresh_delay_should_stay_within_ten_percent_of_the_interval() {
        let c = BackoffConfig::default();
        assert_eq!(c.refresh_delay(S(3600), 0.0), S(3240));
        assert_eq!(c.refresh_delay(S(3600), 0.5), S(3600));
        assert!(c.refresh_delay(S(3600), 0.999) < S(3960));
    }

    #[test]
    fn random_unit_should_stay_in_the_unit_interval() {
        for _ in 0..1000 {
            let u = random_unit();
            assert!((0.0..1.0).contains(&u), "{u}");
        }
    }
}
