//! `ferrvault-dev bench all`: every benchmark in one run (rate limit, scale against both
//! `kube_runtime::Controller` baselines, economy, memory under unrelated Secrets, failover,
//! fairness, admin-port load, freshness of rotated values, the fan-out of one secret to many
//! namespaces, replicas × shards against one replica with a SIGKILL), then the targets as met / not met. Writes `report.json`
//! (everything, with the machine and the command), `tables.md` (the README's tables) and PNG
//! plots into the results folder it names, and prints each table with the command that
//! reproduces the whole run.

use std::path::{Path, PathBuf};

use super::{
    admin_load::{self, AdminLoadArgs},
    economy::{self, EconomyArgs},
    failover::{self, FailoverArgs},
    fairness::{self, FairnessArgs},
    fanout::{self, FanoutArgs},
    freshness::{self, FreshnessArgs},
    lease_timings::LeaseTimings,
    memory::{self, MemoryArgs, UnrelatedLoad},
    plot::line_chart,
    rate_limit::{self, Group, RateLimitArgs},
    report::{AllReport, Machine},
    scale::{self, ScaleArgs, ScaleShape},
    shards::{self, ShardArgs, ShardShape},
    tables, targets,
};

/// Flags of `bench all`.
#[derive(Clone, Debug, clap::Args)]
pub struct AllArgs {
    /// Results folder (default: `bench-results/<UTC timestamp>/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Scale: sizes, concurrency, probes, runs and drivers.
    #[command(flatten)]
    pub scale: ScaleShape,
    /// Rate limit: numbers of resources on one token (server as configured).
    #[arg(long, value_delimiter = ',', default_value = "29,200,1000")]
    pub rate_sizes: Vec<usize>,
    /// Rate limit: speed-up factor of those rows (see `bench rate-limit --help`).
    #[arg(long, default_value_t = 50.0)]
    pub time_scale: f64,
    /// Rate limit: resources of the misconfigured and other-limiter rows.
    #[arg(long, default_value_t = 100)]
    pub shape_size: usize,
    /// Rate limit: speed-up factor of the misconfigured rows (real speed: their 429s are the point).
    #[arg(long, default_value_t = 1.0)]
    pub misconfigured_time_scale: f64,
    /// Rate limit: speed-up factor of the other-limiter rows.
    #[arg(long, default_value_t = 5.0)]
    pub shape_time_scale: f64,
    /// Rate limit: resources of the misconfigured rows whose server has a burst of 1.
    #[arg(long, default_value_t = 29)]
    pub small_shape_size: usize,
    /// Rate limit: speed-up factor of this operator's sliding-window row (real speed).
    #[arg(long, default_value_t = 1.0)]
    pub window_time_scale: f64,
    /// Rate limit: runs per row.
    #[arg(long, default_value_t = 3)]
    pub rate_runs: usize,
    /// Memory: the unrelated Secrets.
    #[command(flatten)]
    pub memory: UnrelatedLoad,
    /// Economy: restart and refresh-wave rows.
    #[command(flatten)]
    pub economy: EconomyArgs,
    /// Failover: SIGKILL rounds.
    #[arg(long, default_value_t = 20)]
    pub kills: usize,
    /// Failover: SIGTERM rounds.
    #[arg(long, default_value_t = 10)]
    pub terms: usize,
    /// Failover: operator processes.
    #[arg(long, default_value_t = 3)]
    pub replicas: usize,
    /// Fairness between two tenants.
    #[command(flatten)]
    pub fairness: FairnessArgs,
    /// Load on the admin ports.
    #[command(flatten)]
    pub admin_load: AdminLoadArgs,
    /// Freshness of rotated values per change-detection mode.
    #[command(flatten)]
    pub freshness: FreshnessArgs,
    /// Fan-out: namespaces served from one secret.
    #[arg(long, default_value_t = 1000)]
    pub fanout_namespaces: usize,
    /// Fan-out: runs per shape.
    #[arg(long, default_value_t = 3)]
    pub fanout_runs: usize,
    /// Shards: objects, namespaces, replicas, shards and runs.
    #[command(flatten)]
    pub shards: ShardShape,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl AllArgs {
    /// The command that reproduces this run (results folder included).
    pub fn command(&self, out: &Path) -> String {
        let rate_sizes: Vec<String> = self.rate_sizes.iter().map(ToString::to_string).collect();
        format!(
            "ferrvault-dev bench all --out {} {} --rate-sizes {} --time-scale {} --shape-size {} --misconfigured-time-scale {} --shape-time-scale {} --small-shape-size {} --window-time-scale {} --rate-runs {} {} {} --kills {} --terms {} --replicas {} {} {} {} --fanout-namespaces {} --fanout-runs {} {}",
            out.display(),
            self.scale.flags(),
            rate_sizes.join(","),
            self.time_scale,
            self.shape_size,
            self.misconfigured_time_scale,
            self.shape_time_scale,
            self.small_shape_size,
            self.window_time_scale,
            self.rate_runs,
            self.memory.flags(),
            self.economy.flags(),
            self.kills,
            self.terms,
            self.replicas,
            self.fairness.flags(),
            self.admin_load.flags(),
            self.freshness.flags(),
            self.fanout_namespaces,
            self.fanout_runs,
            self.shards.flags()
        )
    }
}

/// Prints how to rerun one benchmark of the run on its own.
fn reproduce(name: &str, flags: &str) {
    println!("reproduce this part with: ferrvault-dev bench {name} {flags}");
}

fn section(title: &str) {
    println!("\n== {title} ==");
}

/// Runs everything, prints every table, writes `report.json`, `tables.md` and the plots.
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
    let binary = args.binary.as_deref();
    section("rate limit");
    let rate = rate_limit::run(&RateLimitArgs {
        sizes: args.rate_sizes.clone(),
        time_scale: args.time_scale,
        shape_size: args.shape_size,
        misconfigured_time_scale: args.misconfigured_time_scale,
        shape_time_scale: args.shape_time_scale,
        small_shape_size: args.small_shape_size,
        window_time_scale: args.window_time_scale,
        groups: Group::ALL.to_vec(),
        max_ratio: 5.0,
        runs: args.rate_runs,
        out: out.clone(),
    })
    .await?;
    println!("reproduce this part with: {}", rate.command);
    section("scale (ferrvault-operator vs the competent and the naive kube_runtime::Controller)");
    let scale = scale::run(&ScaleArgs {
        shape: args.scale.clone(),
        probe_interval_ms: 100,
        timeout_seconds: 600,
        binary: args.binary.clone(),
    })
    .await?;
    reproduce("scale", &scale.flags);
    section("economy");
    let economy = economy::run(&args.economy, binary).await?;
    reproduce("economy", &economy.flags);
    section("memory under unrelated Secrets");
    let memory = memory::run(&MemoryArgs {
        objects: 100,
        load: args.memory.clone(),
        binary: args.binary.clone(),
    })
    .await?;
    reproduce("memory", &memory.flags);
    section("failover");
    let failover = failover::run(&FailoverArgs {
        replicas: args.replicas,
        kills: args.kills,
        terms: args.terms,
        lease: LeaseTimings::DEFAULT,
        timeout_seconds: 60,
        binary: args.binary.clone(),
    })
    .await?;
    reproduce("failover", &failover.flags);
    section("fairness between tenants");
    let fairness = fairness::run(&args.fairness, binary).await?;
    reproduce("fairness", &fairness.flags);
    section("admin ports under load");
    let admin_load = admin_load::run(&args.admin_load, binary).await?;
    reproduce("admin-load", &admin_load.flags);
    section("freshness of rotated values");
    let mut freshness_args = args.freshness.clone();
    freshness_args.binary = freshness_args.binary.or_else(|| args.binary.clone());
    let freshness = freshness::run(&freshness_args).await?;
    reproduce("freshness", &freshness.flags);
    section("fan-out of one secret to many namespaces");
    let fanout = fanout::run(&FanoutArgs {
        namespaces: args.fanout_namespaces,
        runs: args.fanout_runs,
        timeout_seconds: 600,
        binary: args.binary.clone(),
    })
    .await?;
    reproduce("fanout", &fanout.flags);
    section("shards: replicas x shards against one replica, then a SIGKILL");
    let shards = shards::run(&ShardArgs {
        shape: args.shards.clone(),
        concurrency: args.scale.concurrency,
        lease: LeaseTimings::DEFAULT,
        timeout_seconds: 1200,
        binary: args.binary.clone(),
    })
    .await?;
    reproduce("shards", &shards.flags);
    let mut report = AllReport {
        command: args.command(&out),
        machine,
        rate_limit: rate,
        scale,
        economy,
        memory,
        failover,
        fairness,
        admin_load,
        freshness: Some(freshness),
        fanout: Some(fanout),
        shards: Some(shards),
        targets: Vec::new(),
    };
    report.targets = targets::evaluate(
        &report.rate_limit,
        &report.scale,
        &report.economy,
        &report.memory,
        &report.failover,
    );
    if let Some(freshness) = &report.freshness {
        report.targets.extend(freshness.targets.iter().cloned());
    }
    report
        .targets
        .extend(report.fanout.as_ref().map(fanout::targets).unwrap_or_default());
    report
        .targets
        .extend(report.shards.as_ref().map(shards::targets).unwrap_or_default());
    section("targets");
    targets::print(&report.targets);
    write(&out, &report)?;
    println!(
        "\nresults in {}\nreproduce with: {}",
        out.display(),
        report.command
    );
    Ok(report)
}

/// Writes `report.json`, `tables.md` and the plots of `report` into `out`.
///
/// # Errors
/// A file could not be written.
pub fn write(out: &Path, report: &AllReport) -> Result<(), String> {
    let json = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    let path = out.join("report.json");
    std::fs::write(&path, json).map_err(|e| format!("write {}: {e}", path.display()))?;
    let path = out.join("tables.md");
    std::fs::write(&path, tables::markdown(&tables::tables(report)))
        .map_err(|e| format!("write {}: {e}", path.display()))?;
    for (file, chart) in super::charts::charts(report) {
        line_chart(&out.join(file), &chart)?;
    }
    Ok(())
}
