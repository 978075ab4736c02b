//! The FerrVault server a rate-limit row runs against: its rate relative to the one the client
//! is configured with, its burst, and how it enforces them ([`LimiterMode`], debt mode). The
//! client always believes the server allows [`CLIENT_RATE`] requests/s with burst
//! [`CLIENT_BURST`]; a shape whose rate or burst differ is a server the client does not know.

use serde::{Deserialize, Serialize};

use ferrvault_sim::ferrvault::{LimiterMode, SimConfig};

/// The rate the client is configured with: FerrVault's 60/min per token.
pub const CLIENT_RATE: f64 = 1.0;
/// The burst the client is configured with.
pub const CLIENT_BURST: u32 = 5;
/// The burst of the servers whose burst the client does not know.
pub const UNKNOWN_BURST: u32 = 3;
/// The largest debt of a capped-debt server, in tokens.
pub const CAPPED_DEBT: u32 = 5;
/// The window of a sliding-window server, in unscaled seconds (FerrVault's "per minute").
pub const WINDOW_SECONDS: f64 = 60.0;

/// A server's rate limit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerShape {
    /// Server rate ÷ [`CLIENT_RATE`].
    pub rate_factor: f64,
    /// Server burst (token buckets).
    pub burst: u32,
    /// How the limit is enforced.
    pub mode: LimiterMode,
    /// Token bucket only: rejected requests spend budget without bound.
    pub debt: bool,
}

impl ServerShape {
    /// The server the client is configured for, debt mode on or off.
    pub fn as_configured(debt: bool) -> Self {
        Self {
            rate_factor: 1.0,
            burst: CLIENT_BURST,
            mode: LimiterMode::TokenBucket,
            debt,
        }
    }

    /// A token bucket at `rate_factor` × the configured rate with a burst the client does not know.
    pub fn misconfigured(rate_factor: f64, debt: bool) -> Self {
        Self {
            rate_factor,
            burst: UNKNOWN_BURST,
            mode: LimiterMode::TokenBucket,
            debt,
        }
    }

    /// A capped-debt server at the configured rate, burst unknown.
    pub fn capped_debt() -> Self {
        Self {
            mode: LimiterMode::CappedDebt {
                max_debt: CAPPED_DEBT,
            },
            ..Self::misconfigured(1.0, false)
        }
    }

    /// A sliding-window server: the configured rate over [`WINDOW_SECONDS`].
    pub fn sliding_window() -> Self {
        Self {
            mode: LimiterMode::SlidingWindow {
                window_seconds: WINDOW_SECONDS,
            },
            ..Self::misconfigured(1.0, false)
        }
    }

    /// Table label.
    pub fn label(&self) -> String {
        let rate = format!("{}x", self.rate_factor);
        match self.mode {
            LimiterMode::TokenBucket => format!(
                "bucket {rate} burst {}, debt {}",
                self.burst,
                if self.debt { "on" } else { "off" }
            ),
            LimiterMode::CappedDebt { max_debt } => {
                format!("capped debt {max_debt}, {rate} burst {}", self.burst)
            }
            LimiterMode::SlidingWindow { window_seconds } => {
                format!("sliding window {window_seconds}s, {rate}")
            }
        }
    }

    /// Requests per unscaled second the server admits in the long run.
    pub fn rate(&self) -> f64 {
        CLIENT_RATE * self.rate_factor
    }

    /// The fastest `n` requests can all be admitted, unscaled seconds: a bucket's burst at once
    /// then its refill rate; a window's capacity at once, then a full window per capacity.
    pub fn ideal_seconds(&self, n: usize) -> f64 {
        match self.mode {
            LimiterMode::SlidingWindow { window_seconds } => {
                let capacity = ((self.rate() * window_seconds).round() as usize).max(1);
                (n.saturating_sub(1) / capacity) as f64 * window_seconds
            }
            LimiterMode::TokenBucket | LimiterMode::CappedDebt { .. } => {
                (n.saturating_sub(self.burst as usize) as f64 / self.rate()).max(0.0)
            }
        }
    }

    /// `config` limited like this server, `scale` times faster.
    pub fn apply(&self, config: SimConfig, scale: f64) -> SimConfig {
        let mode = match self.mode {
            LimiterMode::SlidingWindow { window_seconds } => LimiterMode::SlidingWindow {
                window_seconds: window_seconds / scale,
            },
            other => other,
        };
        config
            .rate_limit(self.rate() * scale, self.burst)
            .debt_mode(self.debt)
            .limiter_mode(mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_times_should_follow_each_server_shape() {
        assert_eq!(ServerShape::as_configured(true).ideal_seconds(29), 24.0);
        assert_eq!(ServerShape::misconfigured(0.25, false).ideal_seconds(103), 400.0);
        assert_eq!(ServerShape::misconfigured(4.0, false).ideal_seconds(3), 0.0);
        // 60 per rolling minute: 100 requests need a second window's start.
        assert_eq!(ServerShape::sliding_window().ideal_seconds(100), 60.0);
        assert_eq!(ServerShape::sliding_window().ideal_seconds(60), 0.0);
        assert_eq!(ServerShape::sliding_window().ideal_seconds(121), 120.0);
        assert_eq!(ServerShape::capped_debt().ideal_seconds(103), 100.0);
    }

    #[test]
    fn labels_should_name_the_shape() {
        assert_eq!(
            ServerShape::as_configured(true).label(),
            "bucket 1x burst 5, debt on"
        );
        assert_eq!(
            ServerShape::misconfigured(0.25, false).label(),
            "bucket 0.25x burst 3, debt off"
        );
        assert_eq!(ServerShape::capped_debt().label(), "capped debt 5, 1x burst 3");
        assert_eq!(ServerShape::sliding_window().label(), "sliding window 60s, 1x");
    }
}
