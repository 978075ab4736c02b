//! The report of `bench shards` (issue 39 point 6): one row per layout over its runs, as
//! `report.json` keeps it and the targets and tables read it.

use serde::{Deserialize, Serialize};

use super::{shards_run::ShardSample, shards_world::Layout, stats::Spread};

/// One layout over its runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardRow {
    /// Replicas and shards.
    pub layout: Layout,
    /// Seconds from the launch until all Ready.
    pub ready_seconds: Spread,
    /// The largest replica's peak RSS, MiB.
    pub max_replica_rss_mib: Spread,
    /// Budgeted FerrVault requests until quiet.
    pub ferrvault_requests: Spread,
    /// Every run.
    pub samples: Vec<ShardSample>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// FerrVaultSecrets.
    pub objects: usize,
    /// The takeover target, seconds.
    pub takeover_bound_seconds: f64,
    /// The one replica, then the sharded layout.
    pub rows: Vec<ShardRow>,
}

impl ShardReport {
    /// The one-replica row and the sharded row.
    pub fn pair(&self) -> Option<(&ShardRow, &ShardRow)> {
        let single = self.rows.iter().find(|r| r.layout.replicas == 1)?;
        let sharded = self.rows.iter().find(|r| r.layout.replicas > 1)?;
        Some((single, sharded))
    }

    /// Every sharded run's takeover (`None`: the run had none).
    pub fn takeovers(&self) -> Vec<Option<&ShardSample>> {
        let Some((_, sharded)) = self.pair() else {
            return Vec::new();
        };
        sharded
            .samples
            .iter()
            .map(|s| s.takeover.as_ref().map(|_| s))
            .collect()
    }

    /// The spread of `f` over the sharded runs' takeovers.
    pub fn takeover_spread(&self, f: impl Fn(&ShardSample) -> Option<f64>) -> Spread {
        Spread::of(
            &self
                .takeovers()
                .iter()
                .map(|s| s.and_then(&f))
                .collect::<Vec<_>>(),
        )
    }
}

/// The row of `layout` from its runs.
pub fn row(layout: Layout, samples: Vec<ShardSample>) -> ShardRow {
    let spread =
        |f: &dyn Fn(&ShardSample) -> Option<f64>| Spread::of(&samples.iter().map(f).collect::<Vec<_>>());
    ShardRow {
        layout,
        ready_seconds: spread(&|s| s.ready_seconds),
        max_replica_rss_mib: spread(&|s| s.peak_rss_mib.iter().copied().reduce(f64::max)),
        ferrvault_requests: spread(&|s| Some(s.ferrvault_requests as f64)),
        samples,
    }
}
