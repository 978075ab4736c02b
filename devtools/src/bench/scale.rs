//! `ferrvault-dev bench scale`: N FerrVaultSecrets over `CONNECTIONS` connections against an
//! unlimited FerrVault, synced by each driver ([`Driver`]: this operator, the competent and the
//! naive `kube_runtime::Controller`), same simulators, same machine, same concurrency.
//!
//! Every size is measured `--runs` times per driver, the drivers taking turns in a rotating
//! order ([`turn_order`]); every figure is the median with its min–max ([`Spread`]). What one
//! measurement takes is in [`super::scale_run`]; besides time, memory and latency it counts the
//! driver's work ([`Work`]). The memory slope per object is a least-squares fit of the median
//! peak RSS over the sizes measured.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{
    child,
    driver::Driver,
    scale_run::{self, ScaleSample},
    stats::{Spread, slope, turn_order},
    work::WorkSpread,
};

/// The scale flags `bench all` shares with `bench scale`.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaleShape {
    /// Numbers of FerrVaultSecrets, measured with every driver.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000")]
    pub sizes: Vec<usize>,
    /// Reconciles at once, the same for every driver.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// New objects created while the backlog is queued.
    #[arg(long, default_value_t = 20)]
    pub probes: usize,
    /// Runs per driver and size (every figure is their median and min–max).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Drivers to measure.
    #[arg(long, value_delimiter = ',', value_enum, default_values_t = Driver::SCALE)]
    pub drivers: Vec<Driver>,
    /// Also measure this operator alone at this many objects (100000 for the largest target);
    /// 0 skips it. The baselines are left out there: at their rate it would take an hour.
    #[arg(long, default_value_t = 0)]
    pub huge_size: usize,
}

impl ScaleShape {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(ToString::to_string).collect();
        let drivers: Vec<&str> = self.drivers.iter().map(|d| d.flag()).collect();
        format!(
            "--sizes {} --concurrency {} --probes {} --runs {} --drivers {} --huge-size {}",
            sizes.join(","),
            self.concurrency,
            self.probes,
            self.runs,
            drivers.join(","),
            self.huge_size
        )
    }

    /// Every (size, drivers) pass: the sizes with the chosen drivers, then the huge size with
    /// this operator alone and the floor (when chosen: it is what the huge target is judged
    /// against, and cheap).
    pub fn passes(&self) -> Vec<(usize, Vec<Driver>)> {
        let mut passes: Vec<(usize, Vec<Driver>)> =
            self.sizes.iter().map(|&n| (n, self.drivers.clone())).collect();
        if self.huge_size > 0 {
            let huge = [Driver::Operator, Driver::Floor]
                .into_iter()
                .filter(|d| *d == Driver::Operator || self.drivers.contains(d))
                .collect();
            passes.push((self.huge_size, huge));
        }
        passes
    }
}

/// Flags of `bench scale`.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaleArgs {
    /// Sizes, concurrency, probes, runs and drivers.
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
    /// How each measurement is taken.
    pub fn plan(&self) -> scale_run::Plan {
        scale_run::Plan {
            concurrency: self.shape.concurrency,
            probes: self.shape.probes,
            probe_interval: std::time::Duration::from_millis(self.probe_interval_ms),
            timeout: std::time::Duration::from_secs(self.timeout_seconds),
        }
    }

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

/// One driver at one size, over the runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Which driver.
    pub driver: Driver,
    /// FerrVaultSecrets.
    pub objects: usize,
    /// Seconds from launch to all Ready.
    pub ready_seconds: Spread,
    /// Objects made Ready per second.
    pub reconciles_per_second: Spread,
    /// Peak RSS (`VmHWM`) once all were Ready, MiB.
    pub peak_rss_mib: Spread,
    /// CPU seconds until all were Ready.
    pub cpu_seconds: Spread,
    /// Median new-object latency under the restart backlog, ms.
    pub probe_p50_ms: Spread,
    /// 99th-percentile new-object latency under the restart backlog, ms.
    pub probe_p99_ms: Spread,
    /// Fewest probes written in a run.
    pub probes_written: usize,
    /// Probes created per run.
    pub probes: usize,
    /// Work until all were Ready.
    pub sync_work: WorkSpread,
    /// Work of the restarted process until the probes were written.
    pub restart_work: WorkSpread,
    /// Every run.
    pub samples: Vec<ScaleSample>,
}

/// This operator ÷ one baseline at one size, on medians (lower is better for all three).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ratio {
    /// FerrVaultSecrets.
    pub objects: usize,
    /// The baseline.
    pub baseline: Driver,
    /// Time to all Ready.
    pub ready_time: Option<f64>,
    /// Peak RSS during the sync.
    pub peak_rss: Option<f64>,
    /// New-object p99 under the backlog.
    pub probe_p99: Option<f64>,
}

/// Peak RSS growth per object of one driver.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MemorySlope {
    /// Which driver.
    pub driver: Driver,
    /// KiB per FerrVaultSecret; `None` with fewer than two sizes.
    pub kib_per_object: Option<f64>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScaleReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// The phase timeout: where an unfinished run stopped.
    pub timeout_seconds: u64,
    /// Rows, by size then driver.
    pub rows: Vec<ScaleRow>,
    /// Ratios per size and baseline.
    pub ratios: Vec<Ratio>,
    /// Memory slope per driver.
    pub memory_slopes: Vec<MemorySlope>,
}

impl ScaleReport {
    /// The row of `driver` at `objects`.
    pub fn row(&self, driver: Driver, objects: usize) -> Option<&ScaleRow> {
        self.rows
            .iter()
            .find(|r| r.driver == driver && r.objects == objects)
    }

    /// The ratio of this operator to `baseline` at `objects`.
    pub fn ratio(&self, baseline: Driver, objects: usize) -> Option<&Ratio> {
        self.ratios
            .iter()
            .find(|r| r.baseline == baseline && r.objects == objects)
    }

    /// The memory slope of `driver`.
    pub fn slope(&self, driver: Driver) -> Option<f64> {
        self.memory_slopes
            .iter()
            .find(|s| s.driver == driver)
            .and_then(|s| s.kib_per_object)
    }
}

/// Runs every size with every driver `--runs` times and prints the tables.
///
/// # Errors
/// A simulator or child process failed to start.
pub async fn run(args: &ScaleArgs) -> Result<ScaleReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let mut rows = Vec::new();
    for (n, drivers) in args.shape.passes() {
        let mut samples: Vec<(Driver, ScaleSample)> = Vec::new();
        for run in 0..args.shape.runs.max(1) {
            for driver in turn_order(&drivers, run) {
                let sample = scale_run::measure(driver, n, run, &args.plan(), &binary).await?;
                println!(
                    "{n:>7} objects  run {}  {:<20}  Ready {}",
                    run + 1,
                    driver.label(),
                    sample
                        .ready_seconds
                        .map_or_else(|| format!("{}/{n}", sample.ready), |s| format!("{s:.1}s"))
                );
                samples.push((driver, sample));
            }
        }
        for &driver in &drivers {
            let of_driver: Vec<ScaleSample> = samples
                .iter()
                .filter(|(d, _)| *d == driver)
                .map(|(_, s)| s.clone())
                .collect();
            rows.push(aggregate(driver, n, args.shape.probes, of_driver));
        }
    }
    let report = ScaleReport {
        flags: args.flags(),
        timeout_seconds: args.timeout_seconds,
        ratios: ratios(&rows),
        memory_slopes: args
            .shape
            .drivers
            .iter()
            .map(|&driver| MemorySlope {
                driver,
                kib_per_object: memory_slope(&rows, driver),
            })
            .collect(),
        rows,
    };
    print(&report);
    Ok(report)
}

/// The row of `driver` at `objects` from its runs.
pub fn aggregate(driver: Driver, objects: usize, probes: usize, samples: Vec<ScaleSample>) -> ScaleRow {
    let spread =
        |f: &dyn Fn(&ScaleSample) -> Option<f64>| Spread::of(&samples.iter().map(f).collect::<Vec<_>>());
    ScaleRow {
        driver,
        objects,
        ready_seconds: spread(&|s| s.ready_seconds),
        reconciles_per_second: spread(&|s| s.ready_seconds.map(|t| objects as f64 / t.max(1e-9))),
        peak_rss_mib: spread(&|s| Some(s.sync.peak_rss_mib())),
        cpu_seconds: spread(&|s| Some(s.sync.cpu_seconds)),
        probe_p50_ms: spread(&|s| s.probe_p50_seconds.map(|p| p * 1000.0)),
        probe_p99_ms: spread(&|s| s.probe_p99_seconds.map(|p| p * 1000.0)),
        probes_written: samples.iter().map(|s| s.probes_written).min().unwrap_or(0),
        probes,
        sync_work: WorkSpread::of(&samples.iter().map(|s| &s.sync_work).collect::<Vec<_>>()),
        restart_work: WorkSpread::of(&samples.iter().map(|s| &s.restart_work).collect::<Vec<_>>()),
        samples,
    }
}

fn divide(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// This operator ÷ each baseline measured, per size, on medians.
pub fn ratios(rows: &[ScaleRow]) -> Vec<Ratio> {
    rows.iter()
        .filter(|r| r.driver != Driver::Operator)
        .filter_map(|base| {
            let ours = rows
                .iter()
                .find(|r| r.driver == Driver::Operator && r.objects == base.objects)?;
            Some(Ratio {
                objects: base.objects,
                baseline: base.driver,
                ready_time: divide(ours.ready_seconds.median, base.ready_seconds.median),
                peak_rss: divide(ours.peak_rss_mib.median, base.peak_rss_mib.median),
                probe_p99: divide(ours.probe_p99_ms.median, base.probe_p99_ms.median),
            })
        })
        .collect()
}

/// KiB of peak RSS per object: the slope of the median over the sizes measured.
pub fn memory_slope(rows: &[ScaleRow], driver: Driver) -> Option<f64> {
    let points: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.driver == driver)
        .filter_map(|r| r.peak_rss_mib.median.map(|m| (r.objects as f64, m * 1024.0)))
        .collect();
    slope(&points)
}

/// Formats an optional number with `digits` decimals, `-` when absent.
pub fn opt(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

fn print(report: &ScaleReport) {
    println!(
        "\n{:>7}  {:<20}  {:>20}  {:>16}  {:>20}  {:>16}  {:>20}  {:>8}",
        "objects", "driver", "Ready (s)", "recon/s", "peak MiB", "p50 (ms)", "p99 (ms)", "probes"
    );
    for r in &report.rows {
        println!(
            "{:>7}  {:<20}  {:>20}  {:>16}  {:>20}  {:>16}  {:>20}  {:>8}",
            r.objects,
            r.driver.label(),
            r.ready_seconds.show(1),
            r.reconciles_per_second.show(0),
            r.peak_rss_mib.show(1),
            r.probe_p50_ms.show(0),
            r.probe_p99_ms.show(0),
            format!("{}/{}", r.probes_written, r.probes)
        );
    }
    println!(
        "\ncounted work (medians): reconciles, Kubernetes requests by verb, budgeted FerrVault requests"
    );
    for r in &report.rows {
        for (phase, work) in [("sync", &r.sync_work), ("restart", &r.restart_work)] {
            println!(
                "{:>7}  {:<20}  {:<7}  reconciles {:>7}  FerrVault {:>7}  Kubernetes: {}",
                r.objects,
                r.driver.label(),
                phase,
                opt(work.reconciles.median, 0),
                opt(work.ferrvault_budgeted.median, 0),
                work.kube_by_verb()
            );
        }
    }
    println!("\nKubernetes writes by resource until all Ready (first run)");
    for r in &report.rows {
        let writes = r.samples.first().map_or_else(String::new, |s| {
            let per_object = |count: u64| count as f64 / r.objects.max(1) as f64;
            s.sync_work
                .kube_writes_by_resource
                .iter()
                .map(|(what, count)| format!("{what} {count} ({:.2}/object)", per_object(*count)))
                .collect::<Vec<_>>()
                .join(", ")
        });
        println!("{:>7}  {:<20}  {writes}", r.objects, r.driver.label());
    }
    for r in report.ratios.iter().filter(|r| r.baseline == Driver::Floor) {
        println!(
            "\nheadline: {} objects, all Ready, ferrvault-operator / floor = {} (target <= 1.15)",
            r.objects,
            opt(r.ready_time, 2)
        );
    }
    println!("\nratios, ferrvault-operator / baseline, on medians (lower is better)");
    for r in &report.ratios {
        println!(
            "{:>7}  vs {:<20}  Ready {:>5}  peak RSS {:>5}  new-object p99 {:>5}",
            r.objects,
            r.baseline.label(),
            opt(r.ready_time, 2),
            opt(r.peak_rss, 2),
            opt(r.probe_p99, 2)
        );
    }
    for s in &report.memory_slopes {
        println!(
            "memory slope {:<20} {} KiB/object",
            s.driver.label(),
            opt(s.kib_per_object, 2)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_size_should_run_this_operator_and_the_floor_alone_after_the_others() {
        let shape = ScaleShape {
            sizes: vec![1000, 10_000],
            concurrency: 16,
            probes: 20,
            runs: 3,
            drivers: Driver::SCALE.to_vec(),
            huge_size: 100_000,
        };
        let passes = shape.passes();
        assert_eq!(passes.len(), 3);
        assert_eq!(passes[1], (10_000, Driver::SCALE.to_vec()));
        assert_eq!(passes[2], (100_000, vec![Driver::Operator, Driver::Floor]));
        let without_floor = ScaleShape {
            drivers: Driver::ALL.to_vec(),
            ..shape.clone()
        };
        assert_eq!(without_floor.passes()[2], (100_000, vec![Driver::Operator]));
        assert!(shape.flags().ends_with("--huge-size 100000"));
        let none = ScaleShape {
            huge_size: 0,
            ..shape
        };
        assert_eq!(none.passes().len(), 2);
    }
}
