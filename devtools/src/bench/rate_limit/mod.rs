//! `ferrvault-dev bench rate-limit`: N resources on one FerrVault token, synced by three
//! policies ([`Policy`]) against simulated servers ([`ServerShape`]):
//!
//! - **as configured**: 1 request/s burst 5, debt mode on and off, N = `--sizes`, every policy;
//! - **misconfigured** (`--shape-size` resources, limiter only, real speed by default): the server
//!   at 0.25×, 0.5×, 2× and 4× the rate the client is configured with, with a burst the client
//!   does not know, debt mode off and on; the same at `--small-shape-size` resources (29, as in
//!   the seed's incident) with a burst of 1 (issue 39);
//! - **other limiters** (`--shape-size`, every policy): a capped-debt server and a sliding-window
//!   server (60 per rolling minute); this operator's sliding-window row at
//!   `--window-time-scale` (real speed by default, issue 39: a whole-second `Retry-After` costs
//!   what it costs), judged against what a client keeping its configured budget can achieve
//!   ([`ServerShape::budget_seconds`]).
//!
//! The policies:
//! - **limiter**: this operator's client (per-credential pacing, AIMD, `Retry-After`); a caller
//!   told "rate limited" asks again at once and the pacer makes it wait.
//! - **go-fixed-20s**: the Go operator before 5.2.9, a fixed 20s requeue after each 429.
//! - **go-backoff-5s-5m**: the Go operator since 5.2.9 (reference §3.6), per-resource
//!   `min(5s << attempt, 5m)` jittered uniformly in `[d/2, d)`.
//!
//! Each row reports the time until every resource succeeded divided by the server's ideal
//! ([`ServerShape::ideal_seconds`]), and the requests and 429s **the server counted**.
//!
//! # Time scale
//! `--time-scale S` (as-configured rows), `--misconfigured-time-scale S` and `--shape-time-scale S`
//! (other limiters) multiply the server's rate (and the limiter's configured rate) by S and divide
//! every policy delay (the limiter's coalescing window, a sliding window) by S, so a run takes 1/S
//! of the real time; durations are reported scaled back (simulated seconds). Loopback latency is
//! not scaled. The server's `Retry-After` is whole seconds, so at S > 1 each honoured 429 costs up
//! to S simulated seconds: the misconfigured rows, which are judged on the time their 429s cost,
//! run at real speed (S = 1), all eight of a run side by side, each against its own simulator
//! (a few requests a second each: they take the time of the slowest, not of the sum);
//! `--groups` runs only some groups.
//!
//! # Caveats
//! The Go policies are modelled as one task per resource retrying on its timer. The Go
//! operator has one worker, but a reveal takes milliseconds, so the requests still go out
//! together. A run that has not finished after `--max-ratio` × ideal (and at least 30 simulated
//! minutes) is stopped and shown as unfinished, with how many resources had synced.

mod clients;
pub mod policy;
pub mod row;
pub mod server;

use std::{path::PathBuf, sync::Arc, time::Duration};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use self::clients::{
    ORG, PROJECT, TOKEN, Tally, go_resource, limiter_resource, vault_name, warmed_up_clients,
};
pub use self::{
    policy::Policy,
    row::{Config, Group, Row, Sample},
    server::{SMALL_BURST, ServerShape},
};
use super::stats::turn_order;
use ferrvault_operator::ferrvault::Endpoint;
use ferrvault_sim::ferrvault::{FerrVaultSim, SimConfig};

/// Printed under the table: how to read a 429 in a scaled run.
const SCALE_NOTE: &str = "note: at time scale S the client's one token of headroom absorbs only 1/S of the \
send-time jitter it absorbs at real speed, and the server's whole-second Retry-After costs up to S simulated \
seconds; read 429s in scaled rows with that in mind (the zero-429 proof at the configured rate runs at real \
speed in the operator's rate-limit tests).";
/// Shortest run before giving up, in simulated seconds: long enough for the 5s→5m backoff to
/// reach its cap (5s + 10s + … + 300s ≈ 10 minutes) and show whether it then converges.
const MIN_BUDGET_SECONDS: f64 = 1800.0;
/// Server rate ÷ configured rate of the misconfigured rows.
pub const RATE_FACTORS: [f64; 4] = [0.25, 0.5, 2.0, 4.0];

/// Flags of `bench rate-limit`.
#[derive(Clone, Debug, clap::Args)]
pub struct RateLimitArgs {
    /// Numbers of resources sharing the token (as-configured rows).
    #[arg(long, value_delimiter = ',', default_value = "29,200,1000")]
    pub sizes: Vec<usize>,
    /// Speed-up factor of the as-configured rows.
    #[arg(long, default_value_t = 50.0)]
    pub time_scale: f64,
    /// Resources of the misconfigured and other-limiter rows (0 skips them).
    #[arg(long, default_value_t = 100)]
    pub shape_size: usize,
    /// Speed-up factor of the misconfigured rows: real speed, since their 429s are the point.
    #[arg(long, default_value_t = 1.0)]
    pub misconfigured_time_scale: f64,
    /// Speed-up factor of the other-limiter rows.
    #[arg(long, default_value_t = 5.0)]
    pub shape_time_scale: f64,
    /// Resources of the misconfigured rows whose server has a burst of 1 (0 skips them).
    #[arg(long, default_value_t = 29)]
    pub small_shape_size: usize,
    /// Speed-up factor of this operator's sliding-window row: real speed by default.
    #[arg(long, default_value_t = 1.0)]
    pub window_time_scale: f64,
    /// Groups of rows to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "as-configured,misconfigured,other-limiter"
    )]
    pub groups: Vec<Group>,
    /// Stop a run after this multiple of the ideal time and report it unfinished.
    #[arg(long, default_value_t = 5.0)]
    pub max_ratio: f64,
    /// Runs per row (policies against the same server take turns in rotating order).
    #[arg(long = "rate-runs", default_value_t = 3)]
    pub runs: usize,
    /// Folder the JSON table is written to.
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
}

impl RateLimitArgs {
    /// The command line that reproduces this run, every flag spelled out.
    pub fn command(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(ToString::to_string).collect();
        let groups: Vec<&str> = self.groups.iter().map(|group| group.flag()).collect();
        format!(
            "ferrvault-dev bench rate-limit --sizes {} --time-scale {} --shape-size {} --misconfigured-time-scale {} --shape-time-scale {} --small-shape-size {} --window-time-scale {} --groups {} --max-ratio {} --rate-runs {} --out {}",
            sizes.join(","),
            self.time_scale,
            self.shape_size,
            self.misconfigured_time_scale,
            self.shape_time_scale,
            self.small_shape_size,
            self.window_time_scale,
            groups.join(","),
            self.max_ratio,
            self.runs,
            self.out.display()
        )
    }
}

/// The whole table plus how it was produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The reproducing command.
    pub command: String,
    /// Time scale of the as-configured rows.
    pub time_scale: f64,
    /// Time scale of the other-limiter rows (each row also carries its own).
    pub shape_time_scale: f64,
    /// Rows.
    pub rows: Vec<Row>,
}

/// Every row to run, rows against the same server next to each other.
pub fn plan(args: &RateLimitArgs) -> Vec<Config> {
    let config = |group, n, server, policy, time_scale| Config {
        group,
        n,
        server,
        policy,
        time_scale,
    };
    let mut rows = Vec::new();
    let sizes = if args.groups.contains(&Group::AsConfigured) {
        args.sizes.as_slice()
    } else {
        &[]
    };
    for &n in sizes {
        for debt in [true, false] {
            for policy in Policy::ALL {
                let server = ServerShape::as_configured(debt);
                rows.push(config(Group::AsConfigured, n, server, policy, args.time_scale));
            }
        }
    }
    if args.groups.contains(&Group::Misconfigured) {
        let shapes = [
            (args.shape_size, None),
            (args.small_shape_size, Some(SMALL_BURST)),
        ];
        for (n, burst) in shapes.into_iter().filter(|(n, _)| *n > 0) {
            for factor in RATE_FACTORS {
                for debt in [false, true] {
                    let server = match burst {
                        Some(burst) => ServerShape::misconfigured_with_burst(factor, debt, burst),
                        None => ServerShape::misconfigured(factor, debt),
                    };
                    let scale = args.misconfigured_time_scale;
                    rows.push(config(Group::Misconfigured, n, server, Policy::Limiter, scale));
                }
            }
        }
    }
    let n = args.shape_size;
    if n > 0 && args.groups.contains(&Group::OtherLimiter) {
        for server in [ServerShape::capped_debt(), ServerShape::sliding_window()] {
            for policy in Policy::ALL {
                let real_speed = server.is_sliding_window() && policy == Policy::Limiter;
                let scale = if real_speed {
                    args.window_time_scale
                } else {
                    args.shape_time_scale
                };
                rows.push(config(Group::OtherLimiter, n, server, policy, scale));
            }
        }
    }
    rows
}

/// The indices of `plan` in the order run `run` takes them: rows against the same server
/// together, their policies rotated by one each run.
pub fn run_order(plan: &[Config], run: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(plan.len());
    let mut start = 0;
    while start < plan.len() {
        let end = (start..plan.len())
            .find(|&i| !plan[i].same_server(&plan[start]))
            .unwrap_or(plan.len());
        order.extend(turn_order(&(start..end).collect::<Vec<_>>(), run));
        start = end;
    }
    order
}

/// `order` cut into batches run one after the other: the misconfigured rows of a run together
/// (each against its own simulator: at real speed they spend minutes waiting on a few requests a
/// second, side by side they take the time of the slowest), every other row alone.
pub fn batches(plan: &[Config], order: &[usize]) -> Vec<Vec<usize>> {
    let misconfigured = |i: usize| plan[i].group == Group::Misconfigured;
    order
        .chunk_by(|&a, &b| misconfigured(a) && misconfigured(b))
        .map(<[usize]>::to_vec)
        .collect()
}

fn print_sample(run: usize, config: Config, sample: Sample) {
    println!(
        "run {}  N {:>5}  {:<30}  {:<22}  {:.1}s  {}/{} synced  {} 429s of {}",
        run + 1,
        config.n,
        config.server.label(),
        config.policy.label(),
        sample.seconds,
        sample.succeeded,
        config.n,
        sample.rate_limited,
        sample.requests
    );
}

/// Runs the benchmark, prints the table and writes `rate-limit.json` under `--out`.
///
/// # Errors
/// A message when the simulator cannot start or the JSON cannot be written.
pub async fn run(args: &RateLimitArgs) -> Result<Report, String> {
    for scale in [
        args.time_scale,
        args.misconfigured_time_scale,
        args.shape_time_scale,
        args.window_time_scale,
    ] {
        if !(scale.is_finite() && scale > 0.0) {
            return Err("time scales must be positive".into());
        }
    }
    let plan = plan(args);
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); plan.len()];
    for run in 0..args.runs.max(1) {
        for batch in batches(&plan, &run_order(&plan, run)) {
            let runs = batch.iter().map(|&i| run_one(plan[i], args.max_ratio));
            let batch_samples = futures::future::join_all(runs).await;
            for (&i, sample) in batch.iter().zip(batch_samples) {
                let (config, sample) = (plan[i], sample?);
                print_sample(run, config, sample);
                samples[i].push(sample);
            }
        }
    }
    let rows: Vec<Row> = plan
        .into_iter()
        .zip(samples)
        .map(|(c, s)| Row::new(c, s))
        .collect();
    println!("\n{}", header());
    for row in &rows {
        println!("{}", format_row(row));
    }
    let report = Report {
        command: args.command(),
        time_scale: args.time_scale,
        shape_time_scale: args.shape_time_scale,
        rows,
    };
    std::fs::create_dir_all(&args.out).map_err(|e| format!("create {}: {e}", args.out.display()))?;
    let path = args.out.join("rate-limit.json");
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(&path, json).map_err(|e| format!("write {}: {e}", path.display()))?;
    println!("\n{SCALE_NOTE}");
    println!(
        "\nwritten to {}\nreproduce with: {}",
        path.display(),
        report.command
    );
    Ok(report)
}

fn header() -> String {
    format!(
        "{:>5}  {:<30}  {:<22}  {:>26}  {:>26}  {:>16}  {:>9}",
        "N", "server", "policy", "time/ideal", "time (s)", "429s", "synced"
    )
}

fn format_row(row: &Row) -> String {
    format!(
        "{:>5}  {:<30}  {:<22}  {:>26}  {:>26}  {:>16}  {:>9}",
        row.config.n,
        row.config.server.label(),
        row.config.policy.label(),
        row.ratio_text(),
        row.seconds.show(1),
        row.rate_limited.show(0),
        format!("{}/{}", row.fewest_synced, row.config.n)
    )
}

async fn run_one(config: Config, max_ratio: f64) -> Result<Sample, String> {
    let Config {
        n,
        server,
        policy,
        time_scale: scale,
        ..
    } = config;
    let sim = start_sim(n, server, scale).await?;
    let endpoint = Endpoint::parse(&sim.url()).map_err(|e| e.to_string())?;
    let ideal = server.ideal_seconds(n);
    let budget = Duration::from_secs_f64((ideal * max_ratio).max(MIN_BUDGET_SECONDS) / scale);
    let tally = Arc::new(Tally::default());
    let (limiter, http) = warmed_up_clients(&endpoint, scale).await?;
    // The warm-up's probe hit `/healthz`; only what the resources send is counted.
    sim.reset_stats();
    let started = Instant::now();
    let stop_at = started + budget;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let tally = tally.clone();
        match policy {
            Policy::Limiter => {
                tasks.spawn(limiter_resource(
                    limiter.clone(),
                    endpoint.clone(),
                    i,
                    tally,
                    stop_at,
                ));
            }
            Policy::GoFixed20s | Policy::GoBackoff5s5m => {
                let url = endpoint.base_url().to_owned();
                tasks.spawn(go_resource(http.clone(), url, i, policy, scale, tally, stop_at));
            }
        }
    }
    let mut finished_at = started;
    while let Some(done) = tasks.join_next().await {
        if let Ok(Some(at)) = done {
            finished_at = finished_at.max(at);
        }
    }
    let succeeded = tally.succeeded.load(std::sync::atomic::Ordering::Relaxed);
    let all = succeeded == n;
    let end = if all {
        finished_at
    } else {
        Instant::now().min(stop_at)
    };
    let seconds = (end - started).as_secs_f64() * scale;
    let counted = sim.stats().total;
    drop(sim);
    Ok(Sample {
        succeeded,
        seconds,
        rate_limited: counted.rate_limited,
        requests: counted.requests,
    })
}

async fn start_sim(n: usize, server: ServerShape, scale: f64) -> Result<FerrVaultSim, String> {
    let mut config = SimConfig::default();
    for i in 0..n {
        config = config.cloud_vault(ORG, PROJECT, &vault_name(i), [("KEY", "value")]);
    }
    let config = server.apply(config.org_token(TOKEN, ORG), scale);
    FerrVaultSim::start(config)
        .await
        .map_err(|e| format!("start the FerrVault simulator: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> RateLimitArgs {
        RateLimitArgs {
            sizes: vec![29, 200],
            time_scale: 50.0,
            shape_size: 100,
            misconfigured_time_scale: 1.0,
            shape_time_scale: 5.0,
            small_shape_size: 29,
            window_time_scale: 1.0,
            groups: Group::ALL.to_vec(),
            max_ratio: 5.0,
            runs: 3,
            out: "bench-results".into(),
        }
    }

    #[test]
    fn command_should_spell_out_every_flag() {
        assert_eq!(
            args().command(),
            "ferrvault-dev bench rate-limit --sizes 29,200 --time-scale 50 --shape-size 100 --misconfigured-time-scale 1 --shape-time-scale 5 --small-shape-size 29 --window-time-scale 1 --groups as-configured,misconfigured,other-limiter --max-ratio 5 --rate-runs 3 --out bench-results"
        );
    }

    #[test]
    fn the_plan_should_cover_every_factor_both_debt_modes_and_both_other_limiters() {
        let plan = plan(&args());
        let group = |g| plan.iter().filter(move |r: &&Config| r.group == g);
        assert_eq!(group(Group::AsConfigured).count(), 2 * 2 * 3);
        assert_eq!(group(Group::Misconfigured).count(), RATE_FACTORS.len() * 2 * 2);
        assert!(
            group(Group::Misconfigured)
                .all(|r| r.policy == Policy::Limiter && r.time_scale == 1.0 && r.server.burst != 5)
        );
        // Issue 39: the same servers at N = 29 with a burst of 1.
        let small = group(Group::Misconfigured).filter(|r| r.n == 29);
        assert_eq!(small.clone().count(), RATE_FACTORS.len() * 2);
        assert!(small.into_iter().all(|r| r.server.burst == SMALL_BURST));
        assert_eq!(group(Group::OtherLimiter).count(), 2 * 3);
        // Issue 39: this operator's sliding-window row at real speed, every other at 5.
        let real_speed = |r: &&Config| r.server.is_sliding_window() && r.policy == Policy::Limiter;
        assert_eq!(group(Group::OtherLimiter).filter(real_speed).count(), 1);
        assert!(group(Group::OtherLimiter).all(|r| r.time_scale == if real_speed(&r) { 1.0 } else { 5.0 }));
        let no_shapes = RateLimitArgs {
            shape_size: 0,
            small_shape_size: 0,
            ..args()
        };
        assert!(
            super::plan(&no_shapes)
                .iter()
                .all(|r| r.group == Group::AsConfigured)
        );
    }

    #[test]
    fn the_misconfigured_rows_of_a_run_should_run_together_and_every_other_row_alone() {
        let plan = plan(&RateLimitArgs {
            sizes: vec![29],
            ..args()
        });
        let order = run_order(&plan, 1);
        let batches = batches(&plan, &order);
        assert_eq!(batches.concat(), order, "the run order is kept");
        let together: Vec<&Vec<usize>> = batches.iter().filter(|b| b.len() > 1).collect();
        assert_eq!(together.len(), 1);
        assert_eq!(together[0].len(), RATE_FACTORS.len() * 2 * 2);
        assert!(together[0].iter().all(|&i| plan[i].group == Group::Misconfigured));
    }

    #[test]
    fn groups_should_select_the_rows_run() {
        let only = RateLimitArgs {
            groups: vec![Group::Misconfigured],
            ..args()
        };
        let plan = plan(&only);
        assert_eq!(plan.len(), RATE_FACTORS.len() * 2 * 2);
        assert!(plan.iter().all(|r| r.group == Group::Misconfigured));
    }

    #[test]
    fn each_run_should_rotate_the_policies_against_one_server_and_keep_servers_together() {
        let plan = plan(&RateLimitArgs {
            sizes: vec![29],
            shape_size: 0,
            small_shape_size: 0,
            ..args()
        });
        assert_eq!(run_order(&plan, 0), [0, 1, 2, 3, 4, 5]);
        assert_eq!(run_order(&plan, 1), [1, 2, 0, 4, 5, 3]);
        assert_eq!(run_order(&plan, 2), [2, 0, 1, 5, 3, 4]);
    }
}
