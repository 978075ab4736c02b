//! `ferrvault-dev bench scale`: N FerrVaultSecrets over `CONNECTIONS` connections against
//! an unlimited FerrVault, synced by the operator process and, side by side, by the same
//! reconcile logic under a plain `kube_runtime::Controller` process (same simulators, same
//! machine, same concurrency).
//!
//! Per driver and size:
//! - **time to all Ready**: from launching the process until every object's status says
//!   Ready=True (seen through a watch in this process);
//! - **reconciles/s**: objects made Ready per second over that time;
//! - **peak RSS** (`VmHWM`) and **CPU seconds** (`utime + stime`) of the process at that point;
//! - **new-object latency** under a full backlog: the process is stopped (SIGTERM) and started
//!   again, so every one of the N objects is queued again; once the new process has listed
//!   them all (its watch of FerrVaultSecrets is open, per the Kubernetes simulator's audit) and
//!   FerrVault sees its requests, `--probes` new objects are created (one every
//!   `--probe-interval-ms`) in another namespace, and each one's latency runs from its create to
//!   its target Secret appearing in a watch. p50 and p99 over the probes. (An object created
//!   while the list is still running reaches any list-then-watch client only after the list.)

use std::{path::PathBuf, time::Duration};

use kube::Api;
use serde::Serialize;
use tokio::time::Instant;

use super::{
    child::{self, Spawned},
    driver::{Driver, percentile},
    proc_stats::ProcStats,
    world::{self, NS, PROBE_NS, ReadyCounter, SecretArrivals, World},
};
use ferrvault_operator::api::FerrVaultSecret;

/// How long a stopping child may take before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// The scale flags `bench all` shares with `bench scale`.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaleShape {
    /// Numbers of FerrVaultSecrets.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000")]
    pub sizes: Vec<usize>,
    /// Reconciles at once, the same for both drivers.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// New objects created while the backlog is queued.
    #[arg(long, default_value_t = 20)]
    pub probes: usize,
}

impl ScaleShape {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(ToString::to_string).collect();
        format!(
            "--sizes {} --concurrency {} --probes {}",
            sizes.join(","),
            self.concurrency,
            self.probes
        )
    }
}

/// Flags of `bench scale`.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaleArgs {
    /// Sizes, concurrency and probes.
    #[command(flatten)]
    pub shape: ScaleShape,
    /// Pause between two probe creates, milliseconds.
    #[arg(long, default_value_t = 100)]
    pub probe_interval_ms: u64,
    /// Give up on a phase (all Ready, probes written) after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_seconds: u64,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl ScaleArgs {
    /// The flags that reproduce this run.
    pub fn flags(&self) -> String {
        format!(
            "{} --probe-interval-ms {} --timeout-seconds {}",
            self.shape.flags(),
            self.probe_interval_ms,
            self.timeout_seconds
        )
    }
}

/// One driver at one size.
#[derive(Clone, Debug, Serialize)]
pub struct ScaleRow {
    /// Which driver.
    pub driver: Driver,
    /// FerrVaultSecrets.
    pub objects: usize,
    /// Seconds from launch to all Ready; `None` when the timeout came first.
    pub ready_seconds: Option<f64>,
    /// Objects Ready when the phase ended.
    pub ready: usize,
    /// Objects made Ready per second.
    pub reconciles_per_second: Option<f64>,
    /// Resource use of the process once all were Ready.
    pub sync: ProcStats,
    /// Resource use of the restarted process after the probes.
    pub backlog: ProcStats,
    /// Median probe latency, seconds.
    pub probe_p50_seconds: Option<f64>,
    /// 99th-percentile probe latency, seconds.
    pub probe_p99_seconds: Option<f64>,
    /// Probes whose Secret was written before the timeout.
    pub probes_written: usize,
    /// Probes created.
    pub probes: usize,
}

/// Operator ÷ plain Controller at one size (lower is better for all three).
#[derive(Clone, Debug, Serialize)]
pub struct Ratio {
    /// FerrVaultSecrets.
    pub objects: usize,
    /// Time to all Ready.
    pub ready_time: Option<f64>,
    /// Peak RSS during the sync.
    pub peak_rss: Option<f64>,
    /// New-object p99 under the backlog.
    pub probe_p99: Option<f64>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct ScaleReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// Rows, by size then driver.
    pub rows: Vec<ScaleRow>,
    /// Ratios per size.
    pub ratios: Vec<Ratio>,
}

impl ScaleReport {
    /// The row of `driver` at `objects`.
    pub fn row(&self, driver: Driver, objects: usize) -> Option<&ScaleRow> {
        self.rows
            .iter()
            .find(|r| r.driver == driver && r.objects == objects)
    }
}

/// Runs every size with both drivers and prints the tables.
///
/// # Errors
/// A simulator or child process failed to start.
pub async fn run(args: &ScaleArgs) -> Result<ScaleReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    println!("{}", header());
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for &n in &args.shape.sizes {
        let mut pair = Vec::new();
        for driver in Driver::BOTH {
            let row = measure(driver, n, args, &binary).await?;
            println!("{}", format_row(&row));
            pair.push(row);
        }
        ratios.push(ratio(&pair[0], &pair[1]));
        rows.extend(pair);
    }
    println!("\nratios, ferrvault-operator / plain Controller (lower is better)");
    println!(
        "{:>8}  {:>14}  {:>9}  {:>12}",
        "objects", "time to Ready", "peak RSS", "new-obj p99"
    );
    for r in &ratios {
        println!(
            "{:>8}  {:>14}  {:>9}  {:>12}",
            r.objects,
            opt(r.ready_time, 2),
            opt(r.peak_rss, 2),
            opt(r.probe_p99, 2)
        );
    }
    Ok(ScaleReport {
        flags: args.flags(),
        rows,
        ratios,
    })
}

fn divide(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Operator ÷ plain for one size.
pub fn ratio(ours: &ScaleRow, plain: &ScaleRow) -> Ratio {
    Ratio {
        objects: ours.objects,
        ready_time: divide(ours.ready_seconds, plain.ready_seconds),
        peak_rss: divide(Some(ours.sync.peak_rss_mib()), Some(plain.sync.peak_rss_mib())),
        probe_p99: divide(ours.probe_p99_seconds, plain.probe_p99_seconds),
    }
}

/// Formats an optional number with `digits` decimals, `-` when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

fn header() -> String {
    format!(
        "{:>8}  {:<18}  {:>10}  {:>8}  {:>10}  {:>7}  {:>9}  {:>9}  {:>8}",
        "objects", "driver", "Ready (s)", "recon/s", "peak MiB", "CPU s", "p50 (ms)", "p99 (ms)", "probes"
    )
}

fn format_row(row: &ScaleRow) -> String {
    let ready = row
        .ready_seconds
        .map_or_else(|| format!("{}/{}", row.ready, row.objects), |s| format!("{s:.1}"));
    format!(
        "{:>8}  {:<18}  {:>10}  {:>8}  {:>10.1}  {:>7.1}  {:>9}  {:>9}  {:>8}",
        row.objects,
        row.driver.label(),
        ready,
        opt(row.reconciles_per_second, 0),
        row.sync.peak_rss_mib(),
        row.sync.cpu_seconds,
        opt(row.probe_p50_seconds.map(|s| s * 1000.0), 0),
        opt(row.probe_p99_seconds.map(|s| s * 1000.0), 0),
        format!("{}/{}", row.probes_written, row.probes)
    )
}

/// One driver at one size, on fresh simulators.
///
/// # Errors
/// A simulator or the child failed to start.
pub async fn measure(
    driver: Driver,
    n: usize,
    args: &ScaleArgs,
    binary: &std::path::Path,
) -> Result<ScaleRow, String> {
    let timeout = Duration::from_secs(args.timeout_seconds);
    let world = World::start().await?;
    world.create_secrets(NS, "s", 0..n).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let mut child = driver
        .launch(binary, &world.kubeconfig, args.shape.concurrency, &[], &[])
        .await?;
    let all = ready.wait_for(n, timeout).await;
    let elapsed = child.started.elapsed().as_secs_f64();
    let sync = child.stats().unwrap_or_default();
    let ready_count = ready.ready();
    child.stop(STOP_GRACE).await;

    let arrivals = SecretArrivals::start(&world.client, PROBE_NS);
    let before = world.fv.stats().total.requests;
    world.kube.clear_audit();
    let mut child = driver
        .launch(binary, &world.kubeconfig, args.shape.concurrency, &[], &[])
        .await?;
    wait_for_backlog_work(&world, &child, before).await;
    let latencies = probe(&world, &arrivals, args, timeout).await?;
    let backlog = child.stats().unwrap_or_default();
    child.stop(STOP_GRACE).await;
    Ok(ScaleRow {
        driver,
        objects: n,
        ready_seconds: all.then_some(elapsed),
        ready: ready_count,
        reconciles_per_second: all.then(|| n as f64 / elapsed.max(1e-9)),
        sync,
        backlog,
        probe_p50_seconds: percentile(&latencies, 50.0),
        probe_p99_seconds: percentile(&latencies, 99.0),
        probes_written: latencies.len(),
        probes: args.shape.probes,
    })
}

/// Waits (up to 60s) until the restarted process watches FerrVaultSecrets (so it listed them
/// all: the backlog is queued) and FerrVault sees its requests (the backlog is being worked).
async fn wait_for_backlog_work(world: &World, child: &Spawned, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let watching = || {
        world
            .kube
            .audit()
            .iter()
            .any(|e| e.verb == "watch" && e.resource == "ferrvaultsecrets")
    };
    while Instant::now() < deadline {
        if child.stats().is_none() || (world.fv.stats().total.requests > before && watching()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Creates the probes and returns the latency (seconds) of each one whose Secret appeared.
async fn probe(
    world: &World,
    arrivals: &SecretArrivals,
    args: &ScaleArgs,
    timeout: Duration,
) -> Result<Vec<f64>, String> {
    let api = Api::<FerrVaultSecret>::namespaced(world.client.clone(), PROBE_NS);
    let mut created = Vec::new();
    for i in 0..args.shape.probes {
        let name = format!("probe-{i:05}");
        let at = Instant::now();
        world::create_secret(&api, &name, i).await?;
        created.push((name, at));
        tokio::time::sleep(Duration::from_millis(args.probe_interval_ms)).await;
    }
    let deadline = Instant::now() + timeout;
    loop {
        let latencies: Vec<f64> = created
            .iter()
            .filter_map(|(name, at)| arrivals.seen(name).map(|seen| (seen - *at).as_secs_f64()))
            .collect();
        if latencies.len() == created.len() || Instant::now() >= deadline {
            return Ok(latencies);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
