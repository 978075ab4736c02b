//! How a client reacts to a 429: this operator's limiter, or one of the Go operator's retry
//! policies (reference §3.6).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How resources react to a 429.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// This operator's client.
    Limiter,
    /// Fixed 20s requeue.
    GoFixed20s,
    /// Per-resource 5s→5m jittered backoff.
    GoBackoff5s5m,
}

impl Policy {
    /// All policies, in table order.
    pub const ALL: [Policy; 3] = [Policy::Limiter, Policy::GoFixed20s, Policy::GoBackoff5s5m];

    /// Table label.
    pub fn label(self) -> &'static str {
        match self {
            Policy::Limiter => "limiter (this client)",
            Policy::GoFixed20s => "go: fixed 20s",
            Policy::GoBackoff5s5m => "go: 5s->5m jittered",
        }
    }

    /// Unscaled wait of a Go policy after the `attempt`-th consecutive 429 (0-based), with
    /// `unit` in `[0, 1)` choosing the point inside the jitter range. `None` for the limiter.
    pub fn go_delay(self, attempt: u32, unit: f64) -> Option<Duration> {
        match self {
            Policy::Limiter => None,
            Policy::GoFixed20s => Some(Duration::from_secs(20)),
            Policy::GoBackoff5s5m => {
                let d = (Duration::from_secs(5) * (1u32 << attempt.min(8))).min(Duration::from_secs(300));
                Some(d / 2 + (d / 2).mul_f64(unit.clamp(0.0, 1.0)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_backoff_should_double_from_5s_to_a_5m_cap_with_half_range_jitter() {
        let p = Policy::GoBackoff5s5m;
        let lows: Vec<u64> = [0, 1, 2, 5, 6, 99]
            .iter()
            .map(|&a| p.go_delay(a, 0.0).unwrap().as_secs())
            .collect();
        assert_eq!(lows, [2, 5, 10, 80, 150, 150]);
        assert!(p.go_delay(0, 0.999).unwrap() < Duration::from_secs(5));
        assert_eq!(Policy::GoFixed20s.go_delay(7, 0.5), Some(Duration::from_secs(20)));
        assert_eq!(Policy::Limiter.go_delay(0, 0.5), None);
    }
}
