//! `ferrvault-dev bench shards` (issue 39 point 6): M FerrVaultSecrets (100,000 by default) over
//! many namespaces, synced by R replicas × S shards (4 × 8) of the release operator with
//! `--leader-elect --shards S`, against one replica with `--shards 1` and the same flags
//! otherwise, each on fresh simulators ([`shards_run`](super::shards_run)); then one replica of
//! the sharded layout is SIGKILLed ([`shards_takeover`](super::shards_takeover)).
//!
//! Rows: time to all Ready, peak RSS of the largest replica, budgeted FerrVault requests; the
//! takeover's time until the killed replica's shards are held again, objects stored again
//! against the moved shards' objects, FerrVault requests and writes after the kill. Every
//! layout runs `--runs` times (in rotating order); figures are medians with min–max.
//!
//! Targets: every replica's peak RSS <= the one replica's × `ceil(S / R) / S` (¼ at 4 × 8) +
//! 20 MiB; FerrVault requests equal to the one replica's; the shards held again within lease
//! duration + retry period + 0.5 s; only the moved shards' objects re-listed; 0 FerrVault
//! requests after the kill.

use std::{path::PathBuf, time::Duration};

use super::{
    child,
    lease_timings::LeaseTimings,
    shards_report::{ShardReport, row},
    shards_run::{self, ShardSample},
    shards_world::{Layout, Plan},
    stats::{Spread, turn_order},
    targets::Target,
};
use ferrvault_testkit::bench_world::World;

/// Headroom over the one replica's share in the RSS target, MiB (issue 39).
pub const RSS_SLACK_MIB: f64 = 20.0;

/// The flags `bench all` shares with `bench shards`.
#[derive(Clone, Debug, clap::Args)]
pub struct ShardShape {
    /// FerrVaultSecrets.
    #[arg(long = "shard-objects", id = "shard-objects", default_value_t = 100_000)]
    pub objects: usize,
    /// Namespaces they are spread over.
    #[arg(long = "shard-namespaces", id = "shard-namespaces", default_value_t = 1000)]
    pub namespaces: usize,
    /// Operator processes of the sharded layout.
    #[arg(long = "shard-replicas", id = "shard-replicas", default_value_t = 4)]
    pub replicas: usize,
    /// `--shards` of the sharded layout.
    #[arg(long = "shard-count", id = "shard-count", default_value_t = 8)]
    pub shards: u16,
    /// Runs per layout.
    #[arg(long = "shard-runs", id = "shard-runs", default_value_t = 3)]
    pub runs: usize,
}

impl ShardShape {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        format!(
            "--shard-objects {} --shard-namespaces {} --shard-replicas {} --shard-count {} --shard-runs {}",
            self.objects, self.namespaces, self.replicas, self.shards, self.runs
        )
    }
}

/// Flags of `bench shards`.
#[derive(Clone, Debug, clap::Args)]
pub struct ShardArgs {
    /// Objects, namespaces, replicas, shards and runs.
    #[command(flatten)]
    pub shape: ShardShape,
    /// `--max-concurrent-reconciles` of every replica.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// The replicas' leader-election timings.
    #[command(flatten)]
    pub lease: LeaseTimings,
    /// Give up on a phase after this many seconds.
    #[arg(long, default_value_t = 1200)]
    pub timeout_seconds: u64,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long, hide = true)]
    pub binary: Option<PathBuf>,
}

impl ShardArgs {
    /// The flags that reproduce this run.
    pub fn flags(&self) -> String {
        format!(
            "{} --concurrency {} {} --timeout-seconds {}",
            self.shape.flags(),
            self.concurrency,
            self.lease.flags(),
            self.timeout_seconds
        )
    }

    /// How each run is taken.
    pub fn plan(&self) -> Plan {
        Plan {
            objects: self.shape.objects,
            namespaces: self.shape.namespaces,
            concurrency: self.concurrency,
            lease: self.lease,
            timeout: Duration::from_secs(self.timeout_seconds),
        }
    }
}

/// Runs both layouts `--runs` times, prints the table and the targets.
///
/// # Errors
/// A simulator or replica failed to start.
pub async fn run(args: &ShardArgs) -> Result<ShardReport, String> {
    let binary = child::operator_binary(args.binary.as_deref())?;
    let plan = args.plan();
    let layouts = [
        Layout {
            replicas: 1,
            shards: 1,
        },
        Layout {
            replicas: args.shape.replicas.max(2),
            shards: args.shape.shards.max(2),
        },
    ];
    let mut samples: Vec<(Layout, ShardSample)> = Vec::new();
    for run in 0..args.shape.runs.max(1) {
        for layout in turn_order(&layouts, run) {
            let world = World::start().await?;
            shards_run::populate(&world, &plan).await?;
            let sample = shards_run::measure(&world, layout, &plan, &binary).await?;
            println!(
                "run {}  {:<24}  all Ready {}",
                run + 1,
                layout.label(),
                sample.ready_seconds.map_or_else(
                    || format!("{}/{}", sample.ready, plan.objects),
                    |s| format!("{s:.1}s")
                )
            );
            samples.push((layout, sample));
        }
    }
    let rows = layouts
        .iter()
        .map(|&layout| {
            let runs: Vec<ShardSample> = samples
                .iter()
                .filter(|(l, _)| *l == layout)
                .map(|(_, s)| s.clone())
                .collect();
            row(layout, runs)
        })
        .collect();
    let report = ShardReport {
        flags: args.flags(),
        objects: plan.objects,
        takeover_bound_seconds: args.lease.takeover_bound_seconds(),
        rows,
    };
    super::shards_print::print(&report);
    super::targets::print(&targets(&report));
    Ok(report)
}

/// The shard targets (RSS and requests on medians, the takeover on every run).
pub fn targets(report: &ShardReport) -> Vec<Target> {
    let Some((single, sharded)) = report.pair() else {
        return Vec::new();
    };
    let (layout, n) = (sharded.layout, report.objects);
    let bound = single
        .max_replica_rss_mib
        .median
        .map(|m| m * layout.share() + RSS_SLACK_MIB);
    let rss = sharded.max_replica_rss_mib.median;
    let requests = (
        single.ferrvault_requests.median,
        sharded.ferrvault_requests.median,
    );
    let held = report.takeover_spread(|s| s.takeover.as_ref()?.held_again_seconds);
    let take = |f: &dyn Fn(&ShardSample) -> Option<f64>| report.takeover_spread(f);
    let (moved, relisted) = (
        take(&|s| s.takeover.as_ref().map(|t| t.moved_objects as f64)),
        take(&|s| s.takeover.as_ref().map(|t| t.relisted_objects as f64)),
    );
    let after = take(&|s| s.takeover.as_ref().map(|t| t.ferrvault_requests as f64));
    let measured_takeover = !report.takeovers().is_empty() && held.runs > 0;
    let every_run = |spread: Spread, ok: &dyn Fn(&ShardSample) -> bool| {
        (measured_takeover && spread.unfinished == 0)
            .then(|| report.takeovers().iter().all(|s| s.is_some_and(ok)))
            .or(measured_takeover.then_some(false))
    };
    vec![
        Target::new(
            format!(
                "shards, {n} objects, {}: every replica's peak RSS <= 1 replica's x {} + {RSS_SLACK_MIB} MiB",
                layout.label(),
                layout.share()
            ),
            format!(
                "largest {} MiB vs bound {} MiB (1 replica {} MiB)",
                sharded.max_replica_rss_mib.show(1),
                super::scale::opt(bound, 1),
                single.max_replica_rss_mib.show(1)
            ),
            rss.zip(bound).map(|(r, b)| r <= b),
        ),
        Target::new(
            format!("shards, {n} objects: FerrVault requests equal to 1 replica's"),
            format!(
                "{} vs {}",
                sharded.ferrvault_requests.show(0),
                single.ferrvault_requests.show(0)
            ),
            requests.0.zip(requests.1).map(|(a, b)| a == b),
        ),
        Target::new(
            format!(
                "shards, SIGKILL of a replica: its shards held again <= lease + retry + 0.5s ({}s, every run)",
                report.takeover_bound_seconds
            ),
            format!("{}s", held.show(2)),
            every_run(held, &|s| {
                s.takeover
                    .as_ref()
                    .and_then(|t| t.held_again_seconds)
                    .is_some_and(|h| h <= report.takeover_bound_seconds)
            }),
        ),
        Target::new(
            "shards, SIGKILL: objects re-listed only for the moved shards (every run)",
            format!(
                "stored again {} vs the moved shards' {}",
                relisted.show(0),
                moved.show(0)
            ),
            every_run(relisted, &|s| {
                s.takeover
                    .as_ref()
                    .is_some_and(|t| t.relisted_objects == t.moved_objects)
            }),
        ),
        Target::new(
            "shards, SIGKILL: 0 FerrVault requests after the kill (every run)",
            after.show(0),
            every_run(after, &|s| {
                s.takeover.as_ref().is_some_and(|t| t.ferrvault_requests == 0)
            }),
        ),
    ]
}
