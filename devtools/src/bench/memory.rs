//! `ferrvault-dev bench memory`: does the operator's memory follow the Secrets it does
//! not manage? With `--objects` FerrVaultSecrets synced and the process settled, its RSS is the
//! baseline; then `--unrelated` Secrets of `--unrelated-bytes` each are created in another
//! namespace, and after `--settle-seconds` the RSS is read again. Growth = after ÷ baseline − 1.
//! The plain `kube_runtime::Controller` (which `owns` Secrets with a full-object watch, as
//! kube-rs operators usually do) runs the same steps for comparison.

use std::{path::PathBuf, time::Duration};

use serde::Serialize;

use super::{
    child,
    driver::Driver,
    proc_stats::ProcStats,
    world::{NS, ReadyCounter, World},
};

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
}

impl UnrelatedLoad {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        format!(
            "--unrelated {} --unrelated-bytes {} --settle-seconds {}",
            self.unrelated, self.unrelated_bytes, self.settle_seconds
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

/// One driver's readings.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryRow {
    /// Which driver.
    pub driver: Driver,
    /// After the sync, before the unrelated Secrets.
    pub baseline: ProcStats,
    /// After the unrelated Secrets.
    pub after: ProcStats,
    /// `after.rss / baseline.rss − 1`.
    pub growth: f64,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize)]
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
    println!(
        "{:<18}  {:>13}  {:>13}  {:>8}  {:>10}",
        "driver", "baseline MiB", "after MiB", "growth", "peak MiB"
    );
    let mut rows = Vec::new();
    for driver in Driver::BOTH {
        let row = measure(driver, args, &binary).await?;
        println!(
            "{:<18}  {:>13.1}  {:>13.1}  {:>7.1}%  {:>10.1}",
            driver.label(),
            row.baseline.rss_mib(),
            row.after.rss_mib(),
            row.growth * 100.0,
            row.after.peak_rss_mib()
        );
        rows.push(row);
    }
    Ok(MemoryReport {
        flags: args.flags(),
        rows,
    })
}

async fn measure(driver: Driver, args: &MemoryArgs, binary: &std::path::Path) -> Result<MemoryRow, String> {
    let settle = Duration::from_secs(args.load.settle_seconds);
    let world = World::start().await?;
    world.create_namespace(UNRELATED_NS).await?;
    world.create_secrets(NS, "s", 0..args.objects).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let mut child = driver.launch(binary, &world.kubeconfig, 4, &[], &[]).await?;
    if !ready.wait_for(args.objects, Duration::from_secs(300)).await {
        return Err(format!(
            "{}: only {} of {} objects Ready",
            driver.label(),
            ready.ready(),
            args.objects
        ));
    }
    tokio::time::sleep(settle).await;
    let baseline = child.stats().ok_or("the process exited")?;
    world
        .create_unrelated_secrets(UNRELATED_NS, args.load.unrelated, args.load.unrelated_bytes)
        .await?;
    tokio::time::sleep(settle).await;
    let after = child.stats().ok_or("the process exited")?;
    child.stop(Duration::from_secs(30)).await;
    Ok(MemoryRow {
        driver,
        baseline,
        after,
        growth: after.rss_bytes as f64 / baseline.rss_bytes.max(1) as f64 - 1.0,
    })
}
