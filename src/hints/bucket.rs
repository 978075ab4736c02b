//! How many hints the endpoint takes: one token bucket for the whole endpoint, drawn from before
//! a body is read or a MAC computed, so a flood (signed or not) costs a 429 each.
//!
//! # Guarantees
//! - At most [`HINT_BURST`] hints at once, then [`HINTS_PER_SECOND`] on average.
//! - A refused request learns how long until a token is back (`Retry-After`).
//!
//! Pure: the caller passes the time.

use std::time::Duration;

use tokio::time::Instant;

/// Hints taken at once. A CI pipeline that sets a few dozen secrets and hints each fits.
pub(crate) const HINT_BURST: f64 = 50.0;
/// Hints taken per second, on average, once the burst is spent.
pub(crate) const HINTS_PER_SECOND: f64 = 10.0;

/// The endpoint's bucket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HintBucket {
    /// Hints it may take now, as of `at`.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Instant,
}

impl HintBucket {
    /// A full bucket at `now`.
    pub(crate) fn full(now: Instant) -> HintBucket {
        HintBucket {
            tokens: HINT_BURST,
            at: now,
        }
    }

    /// Takes one hint at `now`.
    ///
    /// # Errors
    /// How long until the bucket holds a token again, when it is empty (nothing is taken).
    pub(crate) fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * HINTS_PER_SECOND;
        self.tokens = (self.tokens + earned).min(HINT_BURST);
        self.at = now.max(self.at);
        if self.tokens < 1.0 {
            return Err(Duration::from_secs_f64((1.0 - self.tokens) / HINTS_PER_SECOND));
        }
        self.tokens -= 1.0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_should_take_its_burst_then_its_rate() {
        let start = Instant::now();
        let mut bucket = HintBucket::full(start);
        for _ in 0..50 {
            assert_eq!(bucket.take(start), Ok(()));
        }
        let wait = bucket.take(start).expect_err("spent");
        assert_eq!(wait, Duration::from_millis(100));
        assert_eq!(bucket.take(start + wait), Ok(()));
        assert!(bucket.take(start + wait).is_err());
    }
}
