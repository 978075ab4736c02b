//! `ferrvault-dev bench all`: every benchmark of issue 7 in one run (rate limit, scale
//! with the plain-Controller comparison, memory under unrelated Secrets, failover), then the
//! targets as met / not met. Writes `report.json` (everything, with the machine and the
//! command) and PNG plots into the results folder it names, and prints each table.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{
    driver::Driver,
    failover::{self, FailoverArgs, FailoverReport, Signal},
    memory::{self, MemoryArgs, MemoryReport, UnrelatedLoad},
    plot::{Chart, Series, line_chart},
    rate_limit::{self, Policy, RateLimitArgs},
    scale::{self, ScaleArgs, ScaleReport, ScaleShape},
    targets::{self, Target},
};

/// Flags of `bench all`.
#[derive(Clone, Debug, clap::Args)]
pub struct AllArgs {
    /// Results folder (default: `bench-results/<UTC timestamp>/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Scale: sizes, concurrency and probes.
    #[command(flatten)]
    pub scale: ScaleShape,
    /// Rate limit: numbers of resources on one token.
    #[arg(long, value_delimiter = ',', default_value = "29,200,1000")]
    pub rate_sizes: Vec<usize>,
    /// Rate limit: speed-up factor (see `bench rate-limit --help`).
    #[arg(long, default_value_t = 50.0)]
    pub time_scale: f64,
    /// Memory: the unrelated Secrets.
    #[command(flatten)]
    pub memory: UnrelatedLoad,
    /// Failover: SIGKILL rounds, and as many SIGTERM rounds.
    #[arg(long, default_value_t = 10)]
    pub kills: usize,
    /// Failover: operator processes.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl AllArgs {
    /// The command that reproduces this run (results folder included).
    pub fn command(&self, out: &Path) -> String {
        let rate_sizes: Vec<String> = self.rate_sizes.iter().map(ToString::to_string).collect();
        format!(
            "ferrvault-dev bench all --out {} {} --rate-sizes {} --time-scale {} {} --kills {} --replicas {}",
            out.display(),
            self.scale.flags(),
            rate_sizes.join(","),
            self.time_scale,
            self.memory.flags(),
            self.kills,
            self.replicas
        )
    }
}

/// The machine a run measured.
#[derive(Clone, Debug, Serialize)]
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
            memory_gib: super::proc_stats::status_field_bytes(&meminfo, "MemTotal")
                .map_or(0.0, |b| b as f64 / (1u64 << 30) as f64),
        }
    }
}

/// Everything `bench all` measured.
#[derive(Clone, Debug, Serialize)]
pub struct AllReport {
    /// The reproducing command.
    pub command: String,
    /// Where it ran.
    pub machine: Machine,
    /// `bench rate-limit`.
    pub rate_limit: rate_limit::Report,
    /// `bench scale`.
    pub scale: ScaleReport,
    /// `bench memory`.
    pub memory: MemoryReport,
    /// `bench failover`.
    pub failover: FailoverReport,
    /// The targets and their verdicts.
    pub targets: Vec<Target>,
}

fn section(title: &str) {
    println!("\n== {title} ==");
}

/// Runs everything, prints every table, writes `report.json` and the plots.
///
/// # Errors
/// A benchmark could not run, or a file could not be written.
pub async fn run(args: &AllArgs) -> Result<AllReport, String> {
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("bench-results").join(jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string())
    });
    std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let machine = Machine::detect();
    println!(
        "machine: {} CPUs, {:.1} GiB, {}",
        machine.cpus, machine.memory_gib, machine.cpu_model
    );
    section("rate limit");
    let rate = rate_limit::run(&RateLimitArgs {
        sizes: args.rate_sizes.clone(),
        time_scale: args.time_scale,
        max_ratio: 5.0,
        out: out.clone(),
    })
    .await?;
    section("scale (ferrvault-operator vs plain kube_runtime::Controller)");
    let scale = scale::run(&ScaleArgs {
        shape: args.scale.clone(),
        probe_interval_ms: 100,
        timeout_seconds: 600,
        binary: args.binary.clone(),
    })
    .await?;
    section("memory under unrelated Secrets");
    let memory = memory::run(&MemoryArgs {
        objects: 100,
        load: args.memory.clone(),
        binary: args.binary.clone(),
    })
    .await?;
    section("failover");
    let failover = failover::run(&FailoverArgs {
        replicas: args.replicas,
        kills: args.kills,
        lease_duration_seconds: 5,
        renew_deadline_seconds: 3,
        retry_period_seconds: 1,
        timeout_seconds: 60,
        binary: args.binary.clone(),
    })
    .await?;
    section("targets");
    let targets = targets::evaluate(Some(&rate), Some(&scale), Some(&memory), Some(&failover));
    targets::print(&targets);
    let report = AllReport {
        command: args.command(&out),
        machine,
        rate_limit: rate,
        scale,
        memory,
        failover,
        targets,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    let path = out.join("report.json");
    std::fs::write(&path, json).map_err(|e| format!("write {}: {e}", path.display()))?;
    for chart in charts(&report) {
        line_chart(&out.join(chart.0), &chart.1)?;
    }
    println!(
        "\nresults in {}\nreproduce with: {}",
        out.display(),
        report.command
    );
    Ok(report)
}

/// The plots: file name and chart.
fn charts(report: &AllReport) -> Vec<(&'static str, Chart<'static>)> {
    let by_size = |f: &dyn Fn(&scale::ScaleRow) -> Option<f64>| {
        Driver::BOTH
            .iter()
            .map(|&d| Series {
                name: d.label().to_owned(),
                points: report
                    .scale
                    .rows
                    .iter()
                    .filter(|r| r.driver == d)
                    .filter_map(|r| f(r).map(|y| (r.objects as f64, y)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let mut latency = by_size(&|r| r.probe_p99_seconds.map(|s| s * 1000.0));
    for s in &mut latency {
        s.name = format!("{} p99", s.name);
    }
    let rate_series = Policy::ALL
        .iter()
        .flat_map(|&p| [(p, true), (p, false)])
        .map(|(p, debt)| Series {
            name: format!("{} (debt {})", p.label(), if debt { "on" } else { "off" }),
            points: report
                .rate_limit
                .rows
                .iter()
                .filter(|r| r.policy == p && r.debt_mode == debt)
                .filter_map(|r| r.ratio.map(|ratio| (r.n as f64, ratio)))
                .collect(),
        })
        .collect();
    let failover_series = [(Signal::Kill, "SIGKILL"), (Signal::Term, "SIGTERM")]
        .iter()
        .map(|&(signal, name)| Series {
            name: name.to_owned(),
            points: report
                .failover
                .rounds
                .iter()
                .filter(|r| r.signal == signal)
                .enumerate()
                .filter_map(|(i, r)| r.takeover_seconds.map(|s| ((i + 1) as f64, s)))
                .collect(),
        })
        .collect();
    vec![
        (
            "rate-limit.png",
            Chart {
                title: "Rate limit: time to sync all / ideal (1 req/s, burst 5)",
                x_label: "resources on one token",
                y_label: "time / ideal",
                series: rate_series,
                target: Some(("1.05 x ideal", 1.05)),
            },
        ),
        (
            "scale-ready.png",
            Chart {
                title: "Start to all Ready",
                x_label: "FerrVaultSecrets",
                y_label: "seconds",
                series: by_size(&|r| r.ready_seconds),
                target: Some(("target 60s", 60.0)),
            },
        ),
        (
            "scale-rss.png",
            Chart {
                title: "Peak RSS of the process during the sync",
                x_label: "FerrVaultSecrets",
                y_label: "MiB",
                series: by_size(&|r| Some(r.sync.peak_rss_mib())),
                target: Some(("target 100 MiB", 100.0)),
            },
        ),
        (
            "scale-new-object-p99.png",
            Chart {
                title: "New object to Secret written, under the full backlog",
                x_label: "FerrVaultSecrets queued",
                y_label: "p99 milliseconds",
                series: latency,
                target: Some(("target 2000 ms", 2000.0)),
            },
        ),
        (
            "failover.png",
            Chart {
                title: "Leader takeover per round",
                x_label: "round",
                y_label: "seconds",
                series: failover_series,
                target: Some(("SIGTERM target 3s", 3.0)),
            },
        ),
    ]
}
