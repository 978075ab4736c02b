//! `ferrvault-dev bench memory`: does the operator's memory follow the Secrets it does
//! not manage? With `--objects` FerrVaultSecrets synced and the process settled, its RSS is the
//! baseline; then `--unrelated` Secrets of `--unrelated-bytes` each are created in another
//! namespace, and after `--settle-seconds` the RSS is read again. Growth = after ÷ baseline − 1.
//! The two `kube_runtime::Controller` baselines run the same steps for comparison (kube-runtime
//! 5 watches `owns`ed Secrets as metadata only, so their data never reaches it either). Each
//! driver runs `--runs` times in rotating order; figures are medians with min–max.

use std::{path::PathBuf, time::Duration};

use serde::{Deserialize, Serialize};

use super::{
    child,
    driver::{Driver, LaunchOptions},
    stats::{Spread, turn_order},
    watchers::ReadyCounter,
};
use ferrvault_testkit::bench_world::{NS, World};
use ferrvault_testkit::proc_stats::ProcStats;

/// Namespace of the unrelated Secrets.
const UNRELATED_NS: &str = "unrelated";

/// The memory flags `bench all` shares with `bench memory`.
#[derive(Clone, Debug, clap::Args)]
pub struct UnrelatedLoad {
    /// Unrelated Secrets created after the baseline.
    #[arg(long, default_value_t = 1000)]
    pub unrelated: usize,
    /// Size of each unrelated Secret's data (default: 1 MiB less 1 KiB, under the Secret limit).
    #[arg(long, default_value_t = 1024 * 1024 - 1024)]
    pub unrelated_bytes: usize,
    /// Seconds to let the process settle before each reading.
    #[arg(long, default_value_t = 10)]
    pub settle_seconds: u64,
    /// Runs per driver.
    #[arg(long = "memory-runs", id = "memory-runs", default_value_t = 3)]
    pub runs: usize,
}

impl UnrelatedLoad {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        format!(
            "--unrelated {} --unrelated-bytes {} --settle-seconds {} --memory-runs {}",
            self.unrelated, self.unrelated_bytes, self.settle_seconds, self.runs
        )
    }
}

/// Flags of `bench memory`.
#[derive(Clone, Debug, clap::Args)]
pub struct MemoryArgs {
    /// FerrVaultSecrets synced before the baseline.
    #[arg(long, default_value_t = 100)]
    pub objects: usize,
    /// Unrelated Secrets, their size and the settling time.
    #[command(flatten)]
    pub load: UnrelatedLoad,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl MemoryArgs {
    /// The flags that reproduce this run.
    pub fn flags(&self) -> String {
        format!("--objects {} {}", self.objects, self.load.flags())
    }
}

/// One driver's readings in one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemorySample {
    /// After the sync, before the unrelated Secrets.
    pub baseline: ProcStats,
    /// After the unrelated Secrets.
    pub after: ProcStats,
    /// `after.rss / baseline.rss − 1`.
    pub growth: f64,
}

/// One driver over the runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemoryRow {
    /// Which driver.
    pub driver: Driver,
    /// RSS before the unrelated Secrets, MiB.
    pub baseline_mib: Spread,
    /// RSS after them, MiB.
    pub after_mib: Spread,
    /// Growth, percent.
    pub growth_percent: Spread,
    /// Every run.
    pub samples: Vec<MemorySample>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemoryReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// One row per driver.
    pub rows: Vec<MemoryRow>,
}

impl MemoryReport {
    /// The row of `driver`.
    pub fn row(&self, driver: Driver) -> Option<&MemoryRow> {
        self.rows.iter().find(|r| r.driver == driver)
    }
}

/// Runs both drivers and prints the table.
///
/// # Errors
/// A simulator or child failed, or the objects never became Ready.
pub async fn run(args: &MemoryArgs) -> Result<MemoryReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let mut samples: Vec<(Driver, MemorySample)> = Vec::new();
    for run in 0..args.load.runs.max(1) {
        for driver in turn_order(&Driver::ALL, run) {
            samples.push((driver, measure(driver, args, &binary).await?));
        }
    }
    println!(
        "{:<20}  {:>20}  {:>20}  {:>20}",
        "driver", "before (MiB)", "after (MiB)", "growth (%)"
    );
    let mut rows = Vec::new();
    for driver in Driver::ALL {
        let runs: Vec<MemorySample> = samples
            .iter()
            .filter(|(d, _)| *d == driver)
            .map(|(_, s)| s.clone())
            .collect();
        let spread = |f: &dyn Fn(&MemorySample) -> f64| Spread::of_values(runs.iter().map(f));
        let row = MemoryRow {
            driver,
            baseline_mib: spread(&|s| s.baseline.rss_mib()),
            after_mib: spread(&|s| s.after.rss_mib()),
            growth_percent: spread(&|s| s.growth * 100.0),
            samples: runs,
        };
        println!(
            "{:<20}  {:>20}  {:>20}  {:>20}",
            driver.label(),
            row.baseline_mib.show(1),
            row.after_mib.show(1),
            row.growth_percent.show(1)
        );
        rows.push(row);
    }
    Ok(MemoryReport {
        flags: args.flags(),
        rows,
    })
}

async fn measure(
    driver: Driver,
    args: &MemoryArgs,
    binary: &std::path::Path,
) -> Result<MemorySample, String> {
    let settle = Duration::from_secs(args.load.settle_seconds);
    let world = World::start().await?;
    world.create_namespace(UNRELATED_NS).await?;
    world.create_secrets(NS, "s", 0..args.objects).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let mut child = driver
        .launch(binary, &world.kubeconfig, &LaunchOptions::unlimited(4))
        .await?;
    if !ready.wait_for(args.objects, Duration::from_secs(300)).await {
        return Err(format!(
            "{}: only {} of {} objects Ready",
            driver.label(),
            ready.ready(),
            args.objects
        ));
    }
    tokio::time::sleep(settle).await;
    let baseline = child.process.stats().ok_or("the process exited")?;
    world
        .create_unrelated_secrets(UNRELATED_NS, args.load.unrelated, args.load.unrelated_bytes)
        .await?;
    tokio::time::sleep(settle).await;
    let after = child.process.stats().ok_or("the process exited")?;
    child.process.stop(Duration::from_secs(30)).await;
    Ok(MemorySample {
        baseline,
        after,
        growth: after.rss_bytes as f64 / baseline.rss_bytes.max(1) as f64 - 1.0,
    })
}
