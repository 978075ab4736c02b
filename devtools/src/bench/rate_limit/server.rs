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
/// The burst of the small misconfigured rows (issue 39: N = 29 as in the seed's incident, where
/// learning the true budget is a larger part of the run).
pub const SMALL_BURST: u32 = 1;
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

    /// As [`ServerShape::misconfigured`] with a burst of `burst`.
    pub fn misconfigured_with_burst(rate_factor: f64, debt: bool, burst: u32) -> Self {
        Self {
            burst,
            ..Self::misconfigured(rate_factor, debt)
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

    /// Whether it is a sliding-window server.
    pub fn is_sliding_window(&self) -> bool {
        matches!(self.mode, LimiterMode::SlidingWindow { .. })
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

    /// The fastest a client honouring its configured budget ([`CLIENT_RATE`], burst
    /// [`CLIENT_BURST`]) can have `n` requests admitted, unscaled seconds: each request sent as
    /// soon as both the client's bucket and this server's limit allow it (issue 39: the yardstick
    /// of the sliding-window row, whose server admits a whole window at once, faster than any
    /// client keeping its budget could ask).
    pub fn budget_seconds(&self, n: usize) -> f64 {
        let (rate, burst) = (CLIENT_RATE, f64::from(CLIENT_BURST));
        let server_burst = f64::from(self.burst.max(1));
        let (mut tokens, mut server_tokens, mut now) = (burst, server_burst, 0.0_f64);
        let mut window: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
        for _ in 0..n {
            let mut at = now + ((1.0 - tokens) / rate).max(0.0);
            match self.mode {
                LimiterMode::SlidingWindow { window_seconds } => {
                    let capacity = ((self.rate() * window_seconds).round() as usize).max(1);
                    while window.front().is_some_and(|&sent| sent + window_seconds <= at) {
                        window.pop_front();
                    }
                    if window.len() >= capacity
                        && let Some(oldest) = window.pop_front()
                    {
                        at = at.max(oldest + window_seconds);
                    }
                    window.push_back(at);
                }
                LimiterMode::TokenBucket | LimiterMode::CappedDebt { .. } => {
                    let refilled = (server_tokens + (at - now) * self.rate()).min(server_burst);
                    at += ((1.0 - refilled) / self.rate()).max(0.0);
                    server_tokens = (server_tokens + (at - now) * self.rate()).min(server_burst) - 1.0;
                }
            }
            tokens = (tokens + (at - now) * rate).min(burst) - 1.0;
            now = at;
        }
        now
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
    fn a_client_keeping_its_budget_should_be_no_faster_than_its_budget_or_the_server() {
        // 100 at 1/s after a burst of 5: 95 s; a 60-per-minute window does not slow it more.
        assert_eq!(ServerShape::sliding_window().budget_seconds(100), 95.0);
        assert!(
            ServerShape::sliding_window().budget_seconds(100)
                > ServerShape::sliding_window().ideal_seconds(100)
        );
        // The configured server: the budget is the server's.
        assert_eq!(ServerShape::as_configured(false).budget_seconds(29), 24.0);
        // A slower server bounds it: 29 at 0.25/s after a burst of 1.
        let slow = ServerShape::misconfigured_with_burst(0.25, false, SMALL_BURST);
        assert_eq!(slow.budget_seconds(29), 112.0);
        assert_eq!(slow.budget_seconds(29), slow.ideal_seconds(29));
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
