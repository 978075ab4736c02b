//! One rate-limit row: what is run (a [`Config`]), each run of it (a [`Sample`]) and the row of
//! the table over the runs, with medians and min–max.

use serde::{Deserialize, Serialize};

use super::{policy::Policy, server::ServerShape};
use crate::bench::stats::Spread;

/// Which group of rows a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    /// The server the client is configured for.
    AsConfigured,
    /// A faster or slower server, burst unknown.
    Misconfigured,
    /// Capped debt, sliding window.
    OtherLimiter,
}

/// What one row runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Its group.
    pub group: Group,
    /// Resources.
    pub n: usize,
    /// The server.
    pub server: ServerShape,
    /// Policy.
    pub policy: Policy,
    /// Time scale it runs at.
    pub time_scale: f64,
}

impl Group {
    /// Every group, in the order they run.
    pub const ALL: [Self; 3] = [Self::AsConfigured, Self::Misconfigured, Self::OtherLimiter];

    /// Its spelling on the command line (and in the JSON).
    pub fn flag(self) -> &'static str {
        match self {
            Self::AsConfigured => "as-configured",
            Self::Misconfigured => "misconfigured",
            Self::OtherLimiter => "other-limiter",
        }
    }
}

impl Config {
    /// Whether `other` runs against the same server (only the policy differs).
    pub fn same_server(&self, other: &Config) -> bool {
        self.group == other.group && self.n == other.n && self.server == other.server
    }
}

/// One run of one row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Resources that synced before the run ended.
    pub succeeded: usize,
    /// Simulated seconds until all succeeded, or until the run was stopped.
    pub seconds: f64,
    /// 429s the server sent.
    pub rate_limited: u64,
    /// Requests the server received.
    pub requests: u64,
}

/// One row of the table, over its runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// What ran.
    #[serde(flatten)]
    pub config: Config,
    /// The server's ideal time for `n`, simulated seconds.
    pub ideal_seconds: f64,
    /// Simulated seconds until all succeeded (unfinished runs count as slower than any).
    pub seconds: Spread,
    /// `seconds / ideal`.
    pub ratio: Spread,
    /// 429s the server sent per run.
    pub rate_limited: Spread,
    /// Requests the server received per run.
    pub requests: Spread,
    /// Fewest resources synced in a run.
    pub fewest_synced: usize,
    /// Every run.
    pub samples: Vec<Sample>,
}

impl Row {
    /// The row of `config` from its runs.
    pub fn new(config: Config, samples: Vec<Sample>) -> Self {
        let ideal = config.server.ideal_seconds(config.n);
        let finished = |s: &Sample| s.succeeded == config.n;
        let seconds: Vec<Option<f64>> = samples.iter().map(|s| finished(s).then_some(s.seconds)).collect();
        let ratios: Vec<Option<f64>> = seconds
            .iter()
            .map(|s| s.map(|s| if ideal > 0.0 { s / ideal } else { 0.0 }))
            .collect();
        let counts = |f: &dyn Fn(&Sample) -> u64| Spread::of_values(samples.iter().map(|s| f(s) as f64));
        Self {
            config,
            ideal_seconds: ideal,
            seconds: Spread::of(&seconds),
            ratio: Spread::of(&ratios),
            rate_limited: counts(&|s| s.rate_limited),
            requests: counts(&|s| s.requests),
            fewest_synced: samples.iter().map(|s| s.succeeded).min().unwrap_or(0),
            samples,
        }
    }

    /// Every run synced every resource.
    pub fn all_finished(&self) -> bool {
        !self.samples.is_empty() && self.samples.iter().all(|s| s.succeeded == self.config.n)
    }

    /// 429s ÷ requests over every run, percent.
    pub fn rejected_percent(&self) -> f64 {
        let rejected: u64 = self.samples.iter().map(|s| s.rate_limited).sum();
        let requests: u64 = self.samples.iter().map(|s| s.requests).sum();
        rejected as f64 / requests.max(1) as f64 * 100.0
    }

    /// The lowest `time / ideal` any run reached, finished or stopped: where a plot puts an
    /// unfinished row (the true ratio is at least this).
    pub fn ratio_lower_bound(&self) -> f64 {
        self.samples
            .iter()
            .map(|s| s.seconds / self.ideal_seconds.max(1e-9))
            .fold(f64::INFINITY, f64::min)
    }

    /// `time / ideal` for a table: `-` when the ideal is zero (everything fit in the first
    /// burst or window).
    pub fn ratio_text(&self) -> String {
        if self.ideal_seconds <= 0.0 && self.ratio.unfinished == 0 {
            "-".to_owned()
        } else {
            self.ratio.show(3)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_should_keep_unfinished_runs_and_count_429s_over_every_run() {
        let config = Config {
            group: Group::AsConfigured,
            n: 10,
            server: ServerShape::as_configured(false),
            policy: Policy::Limiter,
            time_scale: 50.0,
        };
        let sample = |succeeded, seconds, rate_limited, requests| Sample {
            succeeded,
            seconds,
            rate_limited,
            requests,
        };
        let row = Row::new(
            config,
            vec![
                sample(10, 6.0, 0, 10),
                sample(10, 5.0, 1, 11),
                sample(4, 99.0, 9, 79),
            ],
        );
        assert_eq!(row.ideal_seconds, 5.0);
        assert_eq!(
            (row.seconds.median, row.seconds.max, row.seconds.unfinished),
            (Some(6.0), None, 1)
        );
        assert_eq!(row.ratio.min, Some(1.0));
        assert_eq!(row.fewest_synced, 4);
        assert!(!row.all_finished());
        assert_eq!(row.rejected_percent(), 10.0);
        assert_eq!(row.ratio_lower_bound(), 1.0);
        assert_eq!(row.ratio_text(), "1.200 (1.000–unfinished)");
    }
}
