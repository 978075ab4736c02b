//! `ferrvault-dev bench fairness` (issue 12): does one tenant's backlog on a slow token delay
//! another tenant? Tenant A (namespace `bench`, token 0) has `--backlog` FerrVaultSecrets on a
//! token FerrVault limits to 1 request/s (burst 5); tenant B (namespace `bench-probe`, token 1,
//! the same limit) creates `--fairness-probes` objects, one every `--fairness-probe-interval-ms`
//! (below its budget), once the driver has listed A's backlog. B's latency runs from each create
//! to its target Secret appearing in a watch. Every driver is configured with the server's true
//! budget (`--ferrvault-rate 1 --ferrvault-burst 5`) and 16 reconciles at once.

use std::time::Duration;

use kube::Api;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    child,
    driver::{Driver, LaunchOptions},
    scale_run::{STOP_GRACE, latencies, wait_until_listed},
    stats::{Spread, percentile_with_missing, turn_order},
    watchers::{ReadyCounter, SecretArrivals},
};
use ferrvault_operator::api::FerrVaultSecret;
use ferrvault_testkit::bench_world::{NS, PROBE_NS, World, secret_spec};

/// FerrVault's per-token budget in this benchmark (both tokens), requests per second.
const TOKEN_RATE: f64 = 1.0;
/// Its burst.
const TOKEN_BURST: u32 = 5;
/// Tenant A's connection (token).
const A_CONNECTION: usize = 0;
/// Tenant B's connection (another token).
const B_CONNECTION: usize = 1;

/// Flags of `bench fairness` (shared with `bench all`).
#[derive(Clone, Debug, clap::Args)]
pub struct FairnessArgs {
    /// Tenant A's FerrVaultSecrets on the 1 request/s token.
    #[arg(long, default_value_t = 1000)]
    pub backlog: usize,
    /// Tenant B's new objects.
    #[arg(long = "fairness-probes", id = "fairness-probes", default_value_t = 20)]
    pub probes: usize,
    /// Pause between two of B's creates, milliseconds.
    #[arg(
        long = "fairness-probe-interval-ms",
        id = "fairness-probe-interval-ms",
        default_value_t = 1500
    )]
    pub probe_interval_ms: u64,
    /// How long B's objects may take before they count as not written.
    #[arg(
        long = "fairness-timeout-seconds",
        id = "fairness-timeout-seconds",
        default_value_t = 120
    )]
    pub timeout_seconds: u64,
    /// Runs per driver.
    #[arg(long = "fairness-runs", id = "fairness-runs", default_value_t = 3)]
    pub runs: usize,
    /// Drivers to measure.
    #[arg(long = "fairness-drivers", id = "fairness-drivers", value_delimiter = ',', value_enum,
          default_values_t = [Driver::Operator, Driver::CompetentController])]
    pub drivers: Vec<Driver>,
}

impl FairnessArgs {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        let drivers: Vec<&str> = self.drivers.iter().map(|d| d.flag()).collect();
        format!(
            "--backlog {} --fairness-probes {} --fairness-probe-interval-ms {} --fairness-timeout-seconds {} --fairness-runs {} --fairness-drivers {}",
            self.backlog,
            self.probes,
            self.probe_interval_ms,
            self.timeout_seconds,
            self.runs,
            drivers.join(",")
        )
    }
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FairnessSample {
    /// B's median latency, seconds; objects never written count as the slowest (`None` when
    /// the median is one of them).
    pub p50_seconds: Option<f64>,
    /// B's p99 latency, seconds, counted the same way.
    pub p99_seconds: Option<f64>,
    /// Every latency of B's written objects, seconds.
    pub latencies: Vec<f64>,
    /// B's objects written before the timeout.
    pub probes_written: usize,
    /// A's objects Ready when B's were done.
    pub backlog_ready: usize,
}

/// One driver over the runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FairnessRow {
    /// Which driver.
    pub driver: Driver,
    /// A's backlog.
    pub backlog: usize,
    /// B's median latency, ms.
    pub p50_ms: Spread,
    /// B's p99 latency, ms.
    pub p99_ms: Spread,
    /// Fewest of B's objects written in a run.
    pub probes_written: usize,
    /// A's objects Ready when B's were done (or timed out).
    pub backlog_ready: Spread,
    /// B's objects per run.
    pub probes: usize,
    /// Every run.
    pub samples: Vec<FairnessSample>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FairnessReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// One row per driver.
    pub rows: Vec<FairnessRow>,
}

/// Runs every driver and prints the table.
///
/// # Errors
/// A simulator or child failed to start.
pub async fn run(args: &FairnessArgs, binary: Option<&std::path::Path>) -> Result<FairnessReport, String> {
    let binary = child::operator_binary(binary)?;
    let mut samples: Vec<(Driver, FairnessSample)> = Vec::new();
    for run in 0..args.runs.max(1) {
        for driver in turn_order(&args.drivers, run) {
            samples.push((driver, measure(driver, args, &binary).await?));
        }
    }
    let rows = args
        .drivers
        .iter()
        .map(|&driver| {
            let runs: Vec<FairnessSample> = samples
                .iter()
                .filter(|(d, _)| *d == driver)
                .map(|(_, s)| s.clone())
                .collect();
            let spread = |f: &dyn Fn(&FairnessSample) -> Option<f64>| {
                Spread::of(&runs.iter().map(f).collect::<Vec<_>>())
            };
            FairnessRow {
                driver,
                backlog: args.backlog,
                p50_ms: spread(&|s| s.p50_seconds.map(|p| p * 1000.0)),
                p99_ms: spread(&|s| s.p99_seconds.map(|p| p * 1000.0)),
                probes_written: runs.iter().map(|s| s.probes_written).min().unwrap_or(0),
                backlog_ready: spread(&|s| Some(s.backlog_ready as f64)),
                probes: args.probes,
                samples: runs,
            }
        })
        .collect();
    let report = FairnessReport {
        flags: args.flags(),
        rows,
    };
    println!(
        "\n{:<20}  {:>8}  {:>22}  {:>22}  {:>8}",
        "driver", "backlog", "B p50 (ms)", "B p99 (ms)", "B synced"
    );
    for r in &report.rows {
        println!(
            "{:<20}  {:>8}  {:>22}  {:>22}  {:>8}",
            r.driver.label(),
            r.backlog,
            r.p50_ms.show(0),
            r.p99_ms.show(0),
            format!("{}/{}", r.probes_written, r.probes)
        );
    }
    Ok(report)
}

async fn measure(
    driver: Driver,
    args: &FairnessArgs,
    binary: &std::path::Path,
) -> Result<FairnessSample, String> {
    let world = World::start().await?;
    for connection in [A_CONNECTION, B_CONNECTION] {
        world.limit_token(connection, TOKEN_RATE, TOKEN_BURST);
    }
    world
        .create_secrets_with(NS, "a", 0..args.backlog, |_| secret_spec(A_CONNECTION, "1h"))
        .await?;
    let backlog = ReadyCounter::start(&world.client, NS);
    let arrivals = SecretArrivals::start(&world.client, PROBE_NS);
    let options = LaunchOptions {
        ferrvault_rate: TOKEN_RATE,
        ferrvault_burst: TOKEN_BURST,
        ..LaunchOptions::unlimited(16)
    };
    let mut child = driver.launch(binary, &world.kubeconfig, &options).await?;
    wait_until_listed(&world, &child).await;
    let api = Api::<FerrVaultSecret>::namespaced(world.client.clone(), PROBE_NS);
    let mut created = Vec::new();
    for i in 0..args.probes {
        let name = format!("b-{i:05}");
        let at = Instant::now();
        api.create(
            &kube::api::PostParams::default(),
            &FerrVaultSecret::new(&name, secret_spec(B_CONNECTION, "1h")),
        )
        .await
        .map_err(|e| format!("create {name}: {e}"))?;
        created.push((name, at));
        tokio::time::sleep(Duration::from_millis(args.probe_interval_ms)).await;
    }
    let seen = latencies(&arrivals, &created, Duration::from_secs(args.timeout_seconds)).await;
    let backlog_ready = backlog.ready();
    child.process.stop(STOP_GRACE).await;
    let missing = args.probes - seen.len();
    Ok(FairnessSample {
        p50_seconds: percentile_with_missing(&seen, missing, 50.0),
        p99_seconds: percentile_with_missing(&seen, missing, 99.0),
        probes_written: seen.len(),
        backlog_ready,
        latencies: seen,
    })
}
