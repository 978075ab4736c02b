//! The client's retry policy: which attempts happen and how long the longest call can take.
//!
//! Pure arithmetic; the HTTP layer asks it for delays and the operator asks it for
//! [`RetryPolicy::longest_call`] to refuse a `--reconcile-timeout` that would cancel healthy calls.

use std::time::Duration;

/// Retries for 5xx and transport failures (never for 4xx).
///
/// Defaults match the Go operator: 3 attempts, 100ms then 400ms between them, each delay
/// multiplied by a uniform factor in `[1 - jitter, 1 + jitter]` with `jitter = 0.25`.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts, including the first. `1` disables retries.
    pub max_attempts: u32,
    /// Delay before attempt `n + 2` is `backoff[n]`; indexes past the end reuse the last entry.
    pub backoff: Vec<Duration>,
    /// Relative jitter applied to each delay, in `[0, 1)`.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            backoff: vec![
                Duration::from_millis(100),
                Duration::from_millis(400),
                Duration::from_millis(1600),
            ],
            jitter: 0.25,
        }
    }
}

impl RetryPolicy {
    /// The delay after failed attempt number `attempt` (1-based) and before the next one.
    /// `unit` is a sample in `[-1, 1]` that picks the point inside the jitter range.
    pub fn delay_after(&self, attempt: u32, unit: f64) -> Duration {
        let Some(last) = self.backoff.len().checked_sub(1) else {
            return Duration::ZERO;
        };
        let index = usize::try_from(attempt.saturating_sub(1))
            .unwrap_or(usize::MAX)
            .min(last);
        let factor = 1.0 + self.jitter.clamp(0.0, 0.99) * unit.clamp(-1.0, 1.0);
        self.backoff[index].mul_f64(factor)
    }

    /// The longest a call can legitimately take once it is sent: every attempt running into
    /// `per_attempt`, plus every backoff at its jitter maximum.
    pub fn longest_call(&self, per_attempt: Duration) -> Duration {
        let attempts = self.max_attempts.max(1);
        let sleeps: Duration = (1..attempts).map(|attempt| self.delay_after(attempt, 1.0)).sum();
        per_attempt * attempts + sleeps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_should_stay_inside_the_jitter_range_and_reuse_the_last_entry() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay_after(1, 0.0), Duration::from_millis(100));
        assert_eq!(policy.delay_after(1, -1.0), Duration::from_millis(75));
        assert_eq!(policy.delay_after(2, 1.0), Duration::from_millis(500));
        assert_eq!(policy.delay_after(9, 0.0), Duration::from_millis(1600));
        let none = RetryPolicy {
            backoff: vec![],
            ..RetryPolicy::default()
        };
        assert_eq!(none.delay_after(1, 1.0), Duration::ZERO);
    }

    #[test]
    fn longest_call_should_match_the_go_operator_floor() {
        // 3 × 10s + (100ms + 400ms) × 1.25 = 30.625s, the reference's "about 31s".
        let floor = RetryPolicy::default().longest_call(Duration::from_secs(10));
        assert_eq!(floor, Duration::from_millis(30_625));
        let single = RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        };
        assert_eq!(
            single.longest_call(Duration::from_secs(10)),
            Duration::from_secs(10)
        );
    }
}
