//! One `bench scale` measurement: one driver, one size, one run, on fresh simulators.
//!
//! - **sync**: N FerrVaultSecrets exist before the driver starts; time from the launch until a
//!   watch here sees every one Ready=True; resource use at that moment; work counted from the
//!   launch until the driver's writes have stopped after that (writes not needed for Ready,
//!   such as Events, may follow it: [`wait_until_quiet`]).
//! - **restart**: the driver is stopped (SIGTERM) and started again, so all N objects are queued
//!   again with nothing due (synced seconds earlier, refresh 1h). Once the new process has
//!   listed them (its FerrVaultSecret watch is open, per the audit), `--probes` new objects are
//!   created in another namespace, one every `--probe-interval-ms`, and each one's latency runs
//!   from its create to its target Secret appearing in a watch. Work is counted from the launch
//!   until the last probe is written. (An object created while the list is still running reaches
//!   any list-then-watch client only after the list, so it would measure the list, not the queue.)

use std::{path::Path, time::Duration};

use kube::Api;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    driver::{Driver, DriverProcess, LaunchOptions},
    stats::percentile_with_missing,
    watchers::{ReadyCounter, SecretArrivals},
    work::{Work, WorkMeter},
};
use ferrvault_operator::api::FerrVaultSecret;
use ferrvault_testkit::bench_world::{self as world, DRIVER_IDENTITY, NS, PROBE_NS, World};
use ferrvault_testkit::proc_stats::ProcStats;

/// How long a stopping child may take before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(30);
/// How long a restarted driver may take to list its backlog.
const LIST_TIMEOUT: Duration = Duration::from_secs(120);
/// The driver counts as quiet once the audit shows none of its writes for this long.
const QUIET: Duration = Duration::from_secs(1);
/// Longest wait for the driver to become quiet.
const QUIET_TIMEOUT: Duration = Duration::from_secs(30);

/// How one measurement is taken.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Reconciles at once.
    pub concurrency: usize,
    /// New objects created under the restart backlog.
    pub probes: usize,
    /// Pause between two probe creates.
    pub probe_interval: Duration,
    /// Give up on a phase (all Ready, probes written) after this long.
    pub timeout: Duration,
}

/// One driver at one size in one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScaleSample {
    /// Which run (0-based).
    pub run: usize,
    /// Seconds from launch to all Ready; `None` when the timeout came first.
    pub ready_seconds: Option<f64>,
    /// Objects Ready when the phase ended.
    pub ready: usize,
    /// Resource use of the process once all were Ready.
    pub sync: ProcStats,
    /// What the driver did until all were Ready.
    pub sync_work: Work,
    /// Resource use of the restarted process after the probes.
    pub backlog: ProcStats,
    /// What the restarted driver did until the probes were written.
    pub restart_work: Work,
    /// Median probe latency, seconds; probes never written count as the slowest (`None` when
    /// the median is one of them).
    pub probe_p50_seconds: Option<f64>,
    /// 99th-percentile probe latency, seconds, counted the same way.
    pub probe_p99_seconds: Option<f64>,
    /// Probes whose Secret was written before the timeout.
    pub probes_written: usize,
}

/// Measures `driver` at `n` objects.
///
/// # Errors
/// A simulator or the child failed to start.
pub async fn measure(
    driver: Driver,
    n: usize,
    run: usize,
    plan: &Plan,
    binary: &Path,
) -> Result<ScaleSample, String> {
    let timeout = plan.timeout;
    let options = LaunchOptions::unlimited(plan.concurrency);
    let world = World::start().await?;
    world.create_secrets(NS, "s", 0..n).await?;
    let mut ready = ReadyCounter::start(&world.client, NS);
    let meter = WorkMeter::start(&world, None).await;
    let mut child = driver.launch(binary, &world.kubeconfig, &options).await?;
    let all = ready.wait_for(n, timeout).await;
    let elapsed = child.process.started.elapsed().as_secs_f64();
    let sync = child.process.stats().unwrap_or_default();
    wait_until_quiet(&world).await;
    let sync_work = meter.finish(&world, &child).await;
    let ready_count = ready.ready();
    child.process.stop(STOP_GRACE).await;

    let arrivals = SecretArrivals::start(&world.client, PROBE_NS);
    let meter = WorkMeter::start(&world, None).await;
    let mut child = driver.launch(binary, &world.kubeconfig, &options).await?;
    wait_until_listed(&world, &child).await;
    let latencies = probe(&world, &arrivals, plan).await?;
    let backlog = child.process.stats().unwrap_or_default();
    let restart_work = meter.finish(&world, &child).await;
    child.process.stop(STOP_GRACE).await;
    let missing = plan.probes - latencies.len();
    Ok(ScaleSample {
        run,
        ready_seconds: all.then_some(elapsed),
        ready: ready_count,
        sync,
        sync_work,
        backlog,
        restart_work,
        probe_p50_seconds: percentile_with_missing(&latencies, missing, 50.0),
        probe_p99_seconds: percentile_with_missing(&latencies, missing, 99.0),
        probes_written: latencies.len(),
    })
}

/// Whether the driver's watch of FerrVaultSecrets is open (so it listed them all).
pub fn watching_secrets(world: &World) -> bool {
    world
        .kube
        .audit()
        .iter()
        .any(|e| e.identity == DRIVER_IDENTITY && e.verb == "watch" && e.resource == "ferrvaultsecrets")
}

/// Waits (up to [`LIST_TIMEOUT`]) until the restarted driver has listed its backlog.
pub async fn wait_until_listed(world: &World, child: &DriverProcess) {
    let deadline = Instant::now() + LIST_TIMEOUT;
    while Instant::now() < deadline {
        if child.process.stats().is_none() || watching_secrets(world) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (up to [`QUIET_TIMEOUT`]) until the cluster has seen no write for [`QUIET`] (its
/// list `resourceVersion`, read by the benchmark's own client, stands still): the writes that
/// follow Ready (Events) are counted with the phase, not lost between phases. (The audit's
/// length cannot tell: it stops growing once full.)
pub async fn wait_until_quiet(world: &World) {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(world.client.clone());
    let version = || async {
        api.list_metadata(&kube::api::ListParams::default().limit(1))
            .await
            .ok()
            .and_then(|list| list.metadata.resource_version)
    };
    let deadline = Instant::now() + QUIET_TIMEOUT;
    let (mut last, mut since) = (version().await, Instant::now());
    while Instant::now() < deadline && since.elapsed() < QUIET {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = version().await;
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}

/// Creates the probes and returns the latency (seconds) of each one whose Secret appeared.
async fn probe(world: &World, arrivals: &SecretArrivals, plan: &Plan) -> Result<Vec<f64>, String> {
    let api = Api::<FerrVaultSecret>::namespaced(world.client.clone(), PROBE_NS);
    let mut created = Vec::new();
    for i in 0..plan.probes {
        let name = format!("probe-{i:05}");
        let at = Instant::now();
        world::create_secret(&api, &name, i).await?;
        created.push((name, at));
        tokio::time::sleep(plan.probe_interval).await;
    }
    Ok(latencies(arrivals, &created, plan.timeout).await)
}

/// Waits up to `timeout` for every created Secret and returns the latencies of those seen.
pub async fn latencies(
    arrivals: &SecretArrivals,
    created: &[(String, Instant)],
    timeout: Duration,
) -> Vec<f64> {
    let deadline = Instant::now() + timeout;
    loop {
        let latencies: Vec<f64> = created
            .iter()
            .filter_map(|(name, at)| arrivals.seen(name).map(|seen| (seen - *at).as_secs_f64()))
            .collect();
        if latencies.len() == created.len() || Instant::now() >= deadline {
            return latencies;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
