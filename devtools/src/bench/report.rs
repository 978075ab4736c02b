//! Everything a `bench all` run measured, as written to `report.json` and read back by the
//! README tables and their test.

use serde::{Deserialize, Serialize};

use super::{
    admin_load::AdminLoadReport, economy::EconomyReport, failover::FailoverReport, fairness::FairnessReport,
    fanout::FanoutReport, freshness::FreshnessReport, memory::MemoryReport, rate_limit, scale::ScaleReport,
    shards_report::ShardReport, targets::Target,
};

/// The machine a run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    /// CPUs available to this process.
    pub cpus: usize,
    /// `model name` of `/proc/cpuinfo`.
    pub cpu_model: String,
    /// `MemTotal` of `/proc/meminfo`, GiB.
    pub memory_gib: f64,
}

impl Machine {
    /// Reads this machine.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Self {
            cpus: std::thread::available_parallelism().map_or(0, usize::from),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map_or_else(|| "unknown".to_owned(), |(_, m)| m.trim().to_owned()),
            memory_gib: ferrvault_testkit::proc_stats::status_field_bytes(&meminfo, "MemTotal")
                .map_or(0.0, |b| b as f64 / (1u64 << 30) as f64),
        }
    }
}

/// Everything `bench all` measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AllReport {
    /// The reproducing command.
    pub command: String,
    /// Where it ran.
    pub machine: Machine,
    /// `bench rate-limit`.
    pub rate_limit: rate_limit::Report,
    /// `bench scale`.
    pub scale: ScaleReport,
    /// `bench economy`.
    pub economy: EconomyReport,
    /// `bench memory`.
    pub memory: MemoryReport,
    /// `bench failover`.
    pub failover: FailoverReport,
    /// `bench fairness`.
    pub fairness: FairnessReport,
    /// `bench admin-load`.
    pub admin_load: AdminLoadReport,
    /// `bench freshness` (absent from reports written before it existed).
    #[serde(default)]
    pub freshness: Option<FreshnessReport>,
    /// `bench fanout` (absent from reports older than issue 37).
    #[serde(default)]
    pub fanout: Option<FanoutReport>,
    /// `bench shards` (absent from reports older than issue 39 point 6).
    #[serde(default)]
    pub shards: Option<ShardReport>,
    /// The targets and their verdicts.
    pub targets: Vec<Target>,
}
