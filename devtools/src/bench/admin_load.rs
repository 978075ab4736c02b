//! `ferrvault-dev bench admin-load` (issue 12): what abusive clients of the operator's own HTTP
//! ports do to its liveness probe. With `--admin-objects` FerrVaultSecrets synced, `/healthz` is
//! probed every 100 ms as the kubelet does (a new connection, a 1 s timeout) for a quiet phase,
//! then again while
//! - `--slow-connections` slow-loris connections are held open on each port (metrics, probes):
//!   each sends a request line and one header, then one more header line every 5 s, never
//!   finishing its headers;
//! - `--metrics-flooders` clients request `/metrics` back to back.
//!
//! Reported per run: probe p99 quiet and under load, probes that failed (error, timeout or not
//! 200), the slow connections the operator accepted, `/metrics` answers served, and the RSS
//! growth from before the load to its end. This measures whatever the binary does; it asserts
//! nothing.

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::{io::AsyncWriteExt, net::TcpStream, task::JoinSet, time::Instant};

use super::{
    child,
    driver::{Driver, LaunchOptions},
    scale_run::STOP_GRACE,
    stats::{Spread, percentile},
    watchers::ReadyCounter,
};
use ferrvault_testkit::bench_world::{NS, World};

/// The kubelet's default probe timeout (`timeoutSeconds: 1`).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// Pause between two probes.
const PROBE_EVERY: Duration = Duration::from_millis(100);
/// Pause between two header lines of a slow connection.
const DRIP_EVERY: Duration = Duration::from_secs(5);

/// Flags of `bench admin-load` (shared with `bench all`).
#[derive(Clone, Debug, clap::Args)]
pub struct AdminLoadArgs {
    /// Slow-loris connections held on each port.
    #[arg(long, default_value_t = 1000)]
    pub slow_connections: usize,
    /// Clients requesting `/metrics` back to back.
    #[arg(long, default_value_t = 8)]
    pub metrics_flooders: usize,
    /// Seconds of load (the quiet phase lasts a quarter of it).
    #[arg(long = "admin-load-seconds", id = "admin-load-seconds", default_value_t = 20)]
    pub seconds: u64,
    /// FerrVaultSecrets synced first.
    #[arg(long = "admin-objects", id = "admin-objects", default_value_t = 100)]
    pub objects: usize,
    /// Runs.
    #[arg(long = "admin-runs", id = "admin-runs", default_value_t = 3)]
    pub runs: usize,
}

impl AdminLoadArgs {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        format!(
            "--slow-connections {} --metrics-flooders {} --admin-load-seconds {} --admin-objects {} --admin-runs {}",
            self.slow_connections, self.metrics_flooders, self.seconds, self.objects, self.runs
        )
    }
}

/// One run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AdminLoadSample {
    /// Probe p99 before the load, seconds.
    pub quiet_p99_seconds: Option<f64>,
    /// Probe p99 under load (failed probes count as the timeout), seconds.
    pub load_p99_seconds: Option<f64>,
    /// Probes sent under load.
    pub probes: u64,
    /// Probes under load that failed.
    pub failures: u64,
    /// Slow connections opened (both ports; the kernel completes a handshake before the
    /// operator accepts).
    pub slow_connections_open: u64,
    /// `/metrics` answers the flood got.
    pub metrics_served: u64,
    /// RSS at the end of the load ÷ RSS before it − 1, percent.
    pub rss_growth_percent: f64,
}

/// The whole benchmark, over the runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdminLoadReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// Probe p99 before the load, ms.
    pub quiet_p99_ms: Spread,
    /// Probe p99 under load, ms.
    pub load_p99_ms: Spread,
    /// Failed probes under load.
    pub failures: Spread,
    /// Probes sent under load per run.
    pub probes: Spread,
    /// Slow connections opened.
    pub slow_connections_open: Spread,
    /// RSS growth, percent.
    pub rss_growth_percent: Spread,
    /// Every run.
    pub samples: Vec<AdminLoadSample>,
}

/// Runs and prints the table.
///
/// # Errors
/// A simulator or the operator failed to start, or the objects never became Ready.
pub async fn run(args: &AdminLoadArgs, binary: Option<&std::path::Path>) -> Result<AdminLoadReport, String> {
    let binary = child::operator_binary(binary)?;
    let mut samples = Vec::new();
    for _ in 0..args.runs.max(1) {
        samples.push(measure(args, &binary).await?);
    }
    let spread =
        |f: &dyn Fn(&AdminLoadSample) -> Option<f64>| Spread::of(&samples.iter().map(f).collect::<Vec<_>>());
    let report = AdminLoadReport {
        flags: args.flags(),
        quiet_p99_ms: spread(&|s| s.quiet_p99_seconds.map(|p| p * 1000.0)),
        load_p99_ms: spread(&|s| s.load_p99_seconds.map(|p| p * 1000.0)),
        failures: spread(&|s| Some(s.failures as f64)),
        probes: spread(&|s| Some(s.probes as f64)),
        slow_connections_open: spread(&|s| Some(s.slow_connections_open as f64)),
        rss_growth_percent: spread(&|s| Some(s.rss_growth_percent)),
        samples,
    };
    println!(
        "\nprobe p99 quiet {} ms, under load {} ms; failed probes {} of {}; slow connections opened {}; RSS growth {}%",
        report.quiet_p99_ms.show(1),
        report.load_p99_ms.show(1),
        report.failures.show(0),
        report.probes.show(0),
        report.slow_connections_open.show(0),
        report.rss_growth_percent.show(1)
    );
    Ok(report)
}

async fn measure(args: &AdminLoadArgs, binary: &std::path::Path) -> Result<AdminLoadSample, String> {
    let world = World::start().await?;
    world.create_secrets(NS, "s", 0..args.objects).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let mut child = Driver::Operator
        .launch(binary, &world.kubeconfig, &LaunchOptions::unlimited(4))
        .await?;
    if !ready.wait_for(args.objects, Duration::from_secs(300)).await {
        return Err(format!(
            "only {} of {} objects Ready",
            ready.ready(),
            args.objects
        ));
    }
    let (metrics, probes) = child
        .metrics()
        .zip(child.probes())
        .ok_or("the operator logged no addresses")?;
    let load = Duration::from_secs(args.seconds);
    let (quiet, _) = probe_for(probes, load / 4).await;
    let before = child.process.stats().ok_or("the operator exited")?;
    let open = Arc::new(AtomicU64::new(0));
    let served = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + load;
    let mut attackers = JoinSet::new();
    for port in [metrics, probes] {
        for _ in 0..args.slow_connections {
            attackers.spawn(slow_loris(port, open.clone(), until));
        }
    }
    for _ in 0..args.metrics_flooders {
        attackers.spawn(flood(metrics, served.clone(), until));
    }
    let (loaded, failures) = probe_for(probes, load).await;
    let after = child.process.stats().unwrap_or_default();
    attackers.shutdown().await;
    child.process.stop(STOP_GRACE).await;
    Ok(AdminLoadSample {
        quiet_p99_seconds: percentile(&quiet, 99.0),
        load_p99_seconds: percentile(&loaded, 99.0),
        probes: loaded.len() as u64,
        failures,
        slow_connections_open: open.load(Ordering::Relaxed),
        metrics_served: served.load(Ordering::Relaxed),
        rss_growth_percent: (after.rss_bytes as f64 / before.rss_bytes.max(1) as f64 - 1.0) * 100.0,
    })
}

/// Probes `/healthz` every [`PROBE_EVERY`] for `phase`: every latency (a failure counts as
/// [`PROBE_TIMEOUT`]) and the number of failures.
async fn probe_for(addr: SocketAddr, phase: Duration) -> (Vec<f64>, u64) {
    let end = Instant::now() + phase;
    let mut latencies = Vec::new();
    let mut failures = 0;
    while Instant::now() < end {
        // A new client per probe: the kubelet opens a new connection every time.
        let client = reqwest::Client::builder()
            .timeout(PROBE_TIMEOUT)
            .build()
            .expect("a plain-HTTP client builds");
        let sent = Instant::now();
        let ok = client
            .get(format!("http://{addr}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ok {
            latencies.push(sent.elapsed().as_secs_f64());
        } else {
            failures += 1;
            latencies.push(PROBE_TIMEOUT.as_secs_f64());
        }
        tokio::time::sleep_until(sent + PROBE_EVERY).await;
    }
    (latencies, failures)
}

/// Holds one connection whose request headers never end, until `until`.
async fn slow_loris(addr: SocketAddr, open: Arc<AtomicU64>, until: Instant) {
    let Ok(Ok(mut stream)) = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(addr)).await
    else {
        return;
    };
    if stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: operator\r\n")
        .await
        .is_err()
    {
        return;
    }
    open.fetch_add(1, Ordering::Relaxed);
    while Instant::now() < until {
        tokio::time::sleep(DRIP_EVERY.min(until.saturating_duration_since(Instant::now()))).await;
        if stream.write_all(b"X-Slow: 1\r\n").await.is_err() {
            return;
        }
    }
}

/// Requests `/metrics` back to back until `until`.
async fn flood(addr: SocketAddr, served: Arc<AtomicU64>, until: Instant) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("a plain-HTTP client builds");
    while Instant::now() < until {
        if let Ok(response) = client.get(format!("http://{addr}/metrics")).send().await
            && response.bytes().await.is_ok()
        {
            served.fetch_add(1, Ordering::Relaxed);
        }
    }
}
