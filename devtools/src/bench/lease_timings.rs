//! The leader-election timings of the replicas `bench failover` and `bench shards` launch: one
//! set of flags for both commands, the operator flags they become, and the takeover target.

use serde::{Deserialize, Serialize};

/// Slack over lease duration + retry period in the takeover target.
pub const KILL_SLACK_SECONDS: f64 = 0.5;

/// The leader-election timings every replica gets, whole seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
pub struct LeaseTimings {
    /// `--leader-elect-lease-duration` of every replica, whole seconds.
    #[arg(long = "lease-duration-seconds", value_name = "SECONDS", default_value_t = 5)]
    pub duration: u64,
    /// `--leader-elect-renew-deadline`, whole seconds.
    #[arg(long = "renew-deadline-seconds", value_name = "SECONDS", default_value_t = 3)]
    pub renew_deadline: u64,
    /// `--leader-elect-retry-period`, whole seconds.
    #[arg(long = "retry-period-seconds", value_name = "SECONDS", default_value_t = 1)]
    pub retry_period: u64,
}

impl LeaseTimings {
    /// The flags' defaults: a takeover within seconds, as the benchmarks' targets assume.
    pub const DEFAULT: Self = Self {
        duration: 5,
        renew_deadline: 3,
        retry_period: 1,
    };

    /// The `bench` flags that reproduce these timings.
    pub fn flags(&self) -> String {
        format!(
            "--lease-duration-seconds {} --renew-deadline-seconds {} --retry-period-seconds {}",
            self.duration, self.renew_deadline, self.retry_period
        )
    }

    /// The operator's `--leader-elect-*` timing flags.
    pub fn operator_flags(&self) -> [String; 3] {
        [
            format!("--leader-elect-lease-duration={}s", self.duration),
            format!("--leader-elect-renew-deadline={}s", self.renew_deadline),
            format!("--leader-elect-retry-period={}s", self.retry_period),
        ]
    }

    /// The takeover target: lease duration + retry period + [`KILL_SLACK_SECONDS`].
    pub fn takeover_bound_seconds(&self) -> f64 {
        (self.duration + self.retry_period) as f64 + KILL_SLACK_SECONDS
    }
}
