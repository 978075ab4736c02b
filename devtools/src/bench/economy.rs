//! `ferrvault-dev bench economy`: the requests a driver makes when there is little or nothing
//! to do, counted by the simulators (see [`super::work`]).
//!
//! - **restart with nothing due**: `--restart-objects` FerrVaultSecrets (refresh 1h) synced,
//!   the driver stopped and started again; from the new launch until `--quiet-seconds` after it
//!   listed them, its budgeted FerrVault requests and Kubernetes writes (every driver).
//! - **refresh wave**: K FerrVaultSecrets on one (token, vault), refreshed every
//!   `--wave-refresh-seconds`, FerrVault unchanged. From all Ready (and the sync's trailing
//!   Events written: [`wait_until_quiet`]) until every object's
//!   `ferrvault_secret_last_sync_timestamp_seconds` moved past that moment (one refresh wave):
//!   FerrVault requests for the vault, Kubernetes writes and GETs per object (this operator:
//!   the wave is read from its metrics).
//!
//! Every row runs `--economy-runs` times (drivers in rotating order); figures are medians with
//! min–max.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{
    child,
    driver::{Driver, DriverProcess, LaunchOptions},
    metrics_text,
    scale_run::{STOP_GRACE, wait_until_listed, wait_until_quiet},
    stats::{Spread, turn_order},
    watchers::ReadyCounter,
    work::{Work, WorkMeter, WorkSpread},
};
use ferrvault_testkit::bench_world::{NS, World, secret_spec};

/// How long the initial sync may take.
const SYNC_TIMEOUT: Duration = Duration::from_secs(600);

/// Flags of `bench economy` (shared with `bench all`).
#[derive(Clone, Debug, clap::Args)]
pub struct EconomyArgs {
    /// FerrVaultSecrets synced before the restart.
    #[arg(long, default_value_t = 1000)]
    pub restart_objects: usize,
    /// Seconds the restarted driver is watched after it listed its objects.
    #[arg(long, default_value_t = 10)]
    pub quiet_seconds: u64,
    /// FerrVaultSecrets on one (token, vault) for the refresh-wave rows.
    #[arg(long, value_delimiter = ',', default_value = "29,1000")]
    pub wave_sizes: Vec<usize>,
    /// Refresh interval of those objects, seconds.
    #[arg(long, default_value_t = 20)]
    pub wave_refresh_seconds: u64,
    /// Runs per row.
    #[arg(long = "economy-runs", id = "economy-runs", default_value_t = 3)]
    pub runs: usize,
}

impl EconomyArgs {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        let sizes: Vec<String> = self.wave_sizes.iter().map(ToString::to_string).collect();
        format!(
            "--restart-objects {} --quiet-seconds {} --wave-sizes {} --wave-refresh-seconds {} --economy-runs {}",
            self.restart_objects,
            self.quiet_seconds,
            sizes.join(","),
            self.wave_refresh_seconds,
            self.runs
        )
    }
}

/// One driver restarted with nothing due.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RestartRow {
    /// Which driver.
    pub driver: Driver,
    /// Objects synced before the restart.
    pub objects: usize,
    /// Budgeted FerrVault requests after the restart.
    pub ferrvault_budgeted: Spread,
    /// Kubernetes writes after the restart.
    pub kube_writes: Spread,
    /// Everything counted.
    pub work: WorkSpread,
}

/// One refresh wave of K objects on one (token, vault).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WaveRow {
    /// K.
    pub objects: usize,
    /// FerrVault requests for the vault during the wave.
    pub ferrvault_per_wave: Spread,
    /// Kubernetes writes per object.
    pub kube_writes_per_object: Spread,
    /// Kubernetes GETs per object.
    pub kube_gets_per_object: Spread,
    /// Everything counted.
    pub work: WorkSpread,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EconomyReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// Restart rows, one per driver.
    pub restart: Vec<RestartRow>,
    /// Wave rows, one per K.
    pub waves: Vec<WaveRow>,
}

/// Runs every row and prints the tables.
///
/// # Errors
/// A simulator or child failed to start, or objects never became Ready.
pub async fn run(args: &EconomyArgs, binary: Option<&std::path::Path>) -> Result<EconomyReport, String> {
    let binary = child::operator_binary(binary)?;
    let mut restarts: Vec<(Driver, Work)> = Vec::new();
    for run in 0..args.runs.max(1) {
        for driver in turn_order(&Driver::ALL, run) {
            restarts.push((driver, restart(driver, args, &binary).await?));
        }
    }
    let restart = Driver::ALL
        .iter()
        .map(|&driver| {
            let runs: Vec<&Work> = restarts
                .iter()
                .filter(|(d, _)| *d == driver)
                .map(|(_, w)| w)
                .collect();
            let work = WorkSpread::of(&runs);
            RestartRow {
                driver,
                objects: args.restart_objects,
                ferrvault_budgeted: work.ferrvault_budgeted,
                kube_writes: work.kube_writes,
                work,
            }
        })
        .collect();
    let mut waves = Vec::new();
    for &k in &args.wave_sizes {
        let mut runs = Vec::new();
        for _ in 0..args.runs.max(1) {
            runs.push(wave(k, args, &binary).await?);
        }
        waves.push(wave_row(k, &runs));
    }
    let report = EconomyReport {
        flags: args.flags(),
        restart,
        waves,
    };
    print(&report);
    Ok(report)
}

/// The wave row of K objects from its runs (`None`: the wave did not complete).
pub fn wave_row(objects: usize, runs: &[Option<Work>]) -> WaveRow {
    let per_object = |f: &dyn Fn(&Work) -> u64| {
        Spread::of(
            &runs
                .iter()
                .map(|w| w.as_ref().map(|w| f(w) as f64 / objects.max(1) as f64))
                .collect::<Vec<_>>(),
        )
    };
    let finished: Vec<&Work> = runs.iter().flatten().collect();
    WaveRow {
        objects,
        ferrvault_per_wave: Spread::of(
            &runs
                .iter()
                .map(|w| w.as_ref().map(|w| w.ferrvault_budgeted() as f64))
                .collect::<Vec<_>>(),
        ),
        kube_writes_per_object: per_object(&Work::kube_writes),
        kube_gets_per_object: per_object(&|w| w.kube_verb("get")),
        work: WorkSpread::of(&finished),
    }
}

async fn sync(
    driver: Driver,
    world: &World,
    n: usize,
    binary: &std::path::Path,
) -> Result<DriverProcess, String> {
    let mut ready = ReadyCounter::start(&world.client, NS);
    let child = driver
        .launch(binary, &world.kubeconfig, &LaunchOptions::unlimited(16))
        .await?;
    if ready.wait_for(n, SYNC_TIMEOUT).await {
        // The sync's own trailing writes (its `Synced` Events follow Ready) belong to neither
        // row: a wave metered from Ready counted them as the wave's writes.
        wait_until_quiet(world).await;
        Ok(child)
    } else {
        Err(format!("{}: only {} of {n} Ready", driver.label(), ready.ready()))
    }
}

async fn restart(driver: Driver, args: &EconomyArgs, binary: &std::path::Path) -> Result<Work, String> {
    let world = World::start().await?;
    world.create_secrets(NS, "s", 0..args.restart_objects).await?;
    let mut first = sync(driver, &world, args.restart_objects, binary).await?;
    first.process.stop(STOP_GRACE).await;
    let meter = WorkMeter::start(&world, None).await;
    let mut child = driver
        .launch(binary, &world.kubeconfig, &LaunchOptions::unlimited(16))
        .await?;
    wait_until_listed(&world, &child).await;
    tokio::time::sleep(Duration::from_secs(args.quiet_seconds)).await;
    let work = meter.finish(&world, &child).await;
    child.process.stop(STOP_GRACE).await;
    Ok(work)
}

/// One refresh wave of `k` objects on connection 0; `None` when it did not complete.
async fn wave(k: usize, args: &EconomyArgs, binary: &std::path::Path) -> Result<Option<Work>, String> {
    let world = World::start().await?;
    let refresh = format!("{}s", args.wave_refresh_seconds);
    world
        .create_secrets_with(NS, "w", 0..k, |_| secret_spec(0, &refresh))
        .await?;
    let mut child = sync(Driver::Operator, &world, k, binary).await?;
    let ready_at = jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
    let meter = WorkMeter::start(&world, Some(&child)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(args.wave_refresh_seconds + 60);
    let metrics = child.metrics().ok_or("the operator logged no metrics address")?;
    let mut complete = false;
    while tokio::time::Instant::now() < deadline {
        if let Some(text) = metrics_text::scrape(metrics).await {
            let stamps = metrics_text::samples(&text, "ferrvault_secret_last_sync_timestamp_seconds");
            let refreshed = stamps
                .iter()
                .filter(|s| s.labels.get("namespace").is_some_and(|n| n == NS) && s.value > ready_at)
                .count();
            if refreshed >= k {
                complete = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let work = meter.finish(&world, &child).await;
    child.process.stop(STOP_GRACE).await;
    Ok(complete.then_some(work))
}

fn print(report: &EconomyReport) {
    println!(
        "\nrestart with nothing due: {:<20}  {:>22}  {:>22}  Kubernetes requests",
        "driver", "FerrVault requests", "Kubernetes writes"
    );
    for r in &report.restart {
        println!(
            "{:>7} objects           {:<20}  {:>22}  {:>22}  {}",
            r.objects,
            r.driver.label(),
            r.ferrvault_budgeted.show(0),
            r.kube_writes.show(0),
            r.work.kube_by_verb()
        );
    }
    println!(
        "\nrefresh wave, K objects on one (token, vault): {:>20}  {:>22}  {:>22}",
        "FerrVault / wave", "writes / object", "GETs / object"
    );
    for w in &report.waves {
        println!(
            "K = {:<43}  {:>20}  {:>22}  {:>22}",
            w.objects,
            w.ferrvault_per_wave.show(0),
            w.kube_writes_per_object.show(2),
            w.kube_gets_per_object.show(2)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_wave_row_should_divide_by_the_objects_and_keep_an_unfinished_wave() {
        let work = |reveals, patches, gets| Work {
            kube: BTreeMap::from([("patch".into(), patches), ("get".into(), gets)]),
            ferrvault: BTreeMap::from([("reveal".into(), reveals), ("healthz".into(), 7)]),
            ..Work::default()
        };
        let row = wave_row(10, &[Some(work(1, 10, 0)), Some(work(2, 20, 10)), None]);
        assert_eq!(row.ferrvault_per_wave.median, Some(2.0));
        assert_eq!(row.ferrvault_per_wave.unfinished, 1);
        assert_eq!(row.kube_writes_per_object.min, Some(1.0));
        assert_eq!(row.kube_gets_per_object.median, Some(1.0));
        assert_eq!(row.kube_gets_per_object.max, None);
    }
}
