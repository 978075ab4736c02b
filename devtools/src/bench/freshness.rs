//! `ferrvault-dev bench freshness` (issue 38 "Benchmark"): how soon a value rotated in FerrVault
//! reaches its target Secret, and what the token's budget pays for it, per way of learning of
//! a change.
//!
//! The world ([`freshness_run`](super::freshness_run)): `--objects` FerrVaultSecrets on one token
//! held to 60 requests a minute, in one vault, each selecting its own name (FerrVault scopes a
//! service-account token to one vault; one name per object is the layout where no object's read
//! serves another's, the worst case for the budget).
//!
//! Rows:
//! - `Poll` at 1 h and `Poll` at the shortest interval the budget allows (`objects` reveals per
//!   interval within 60 a minute: `objects` seconds): **computed, not measured**. A rotation
//!   arrives at the object's next refresh, uniformly within the interval (p50 = interval/2,
//!   p99 = 0.99 × interval); requests per hour are `objects × 3600 / interval` (an upper bound:
//!   objects refreshing together may share a reveal). Measuring them needs hours, or a time scale
//!   the operator's coalescing windows do not follow.
//! - `Versions` at `--versions-interval` and hints (`Poll` at 1 h plus a signed
//!   `POST /hooks/ferrvault` naming the rotated name right after each rotation): **measured** at
//!   real speed. First a quiet window of `--duration` seconds (requests with nothing changing),
//!   then `--rotations` rotations at pseudo-random times over another `--duration`, each timed
//!   from the rotation (the simulator's admin call) to its value in the target, seen on a watch
//!   of the Kubernetes simulator. Requests per hour are **extrapolated** from the window.
//!
//! Targets: `Versions` p99 ≤ interval + 2 s; `Versions` requests per hour with nothing changing
//! ≤ 1/20 of `Poll` at equal freshness (an interval of `Versions`' measured p99); hints p99 ≤ 2 s;
//! no 429 in a measured row.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{
    freshness_run::{Detection, Measured, measure},
    targets::Target,
};

/// The simulator's (and FerrVault's) budget of one token, requests per second.
const BUDGET_PER_SECOND: f64 = 1.0;

/// Flags of `bench freshness` (shared with `bench all`).
#[derive(Clone, Debug, clap::Args)]
pub struct FreshnessArgs {
    /// FerrVaultSecrets on the one token.
    #[arg(long = "freshness-objects", default_value_t = 1000)]
    pub objects: usize,
    /// Seconds of each measured window (the quiet one, then the rotating one).
    #[arg(long = "duration", default_value_t = 120)]
    pub duration: u64,
    /// Rotations per measured row.
    #[arg(long = "rotations", default_value_t = 20)]
    pub rotations: usize,
    /// `changeDetection.interval` of the `Versions` row, seconds (at least 5).
    #[arg(long = "versions-interval", default_value_t = 30)]
    pub versions_interval: u64,
    /// Skip the hints row (the `Versions` row and the computed rows only).
    #[arg(long = "no-hints")]
    pub no_hints: bool,
    /// Operator binary to launch (default: `ferrvault-operator` beside this executable).
    #[arg(long = "freshness-binary", id = "freshness-binary", hide = true)]
    pub binary: Option<std::path::PathBuf>,
}

impl FreshnessArgs {
    /// The flags that reproduce these settings.
    pub fn flags(&self) -> String {
        format!(
            "--freshness-objects {} --duration {} --rotations {} --versions-interval {}{}",
            self.objects,
            self.duration,
            self.rotations,
            self.versions_interval,
            if self.no_hints { " --no-hints" } else { "" }
        )
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FreshnessRow {
    /// `Poll 1h`, `Poll 1000s`, `Versions 30s`, `hints`.
    pub row: String,
    /// Measured (`true`) or computed from the mode's rule (`false`).
    pub measured: bool,
    /// Rotation → target write, median, seconds.
    pub p50_seconds: Option<f64>,
    /// Rotation → target write, 99th percentile, seconds.
    pub p99_seconds: Option<f64>,
    /// Rotations that arrived, of those made (measured rows).
    pub arrived: Option<(usize, usize)>,
    /// FerrVault requests per hour with nothing changing.
    pub quiet_per_hour: f64,
    /// `list` calls and reveals in the quiet window, and its seconds (measured rows).
    pub quiet_counts: Option<(u64, u64, f64)>,
    /// FerrVault requests per hour while rotating (measured rows).
    pub rotating_per_hour: Option<f64>,
    /// 429 answers (measured rows).
    pub rate_limited: Option<u64>,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FreshnessReport {
    /// Flags that reproduce it.
    pub flags: String,
    /// The rows, in the order above.
    pub rows: Vec<FreshnessRow>,
    /// The targets and their verdicts.
    pub targets: Vec<Target>,
}

/// Runs the measured rows, computes the others, prints the table and the targets.
///
/// # Errors
/// A row could not run.
pub async fn run(args: &FreshnessArgs) -> Result<FreshnessReport, String> {
    let binary = args.binary.as_deref();
    let window = Duration::from_secs(args.duration);
    let shape = (args.objects, window, args.rotations);
    let interval = Duration::from_secs(args.versions_interval.max(5));
    let budget_interval = args.objects as f64 / BUDGET_PER_SECOND;
    let mut rows = vec![
        computed("Poll 1h", args.objects, 3600.0),
        computed(
            &format!("Poll {budget_interval:.0}s"),
            args.objects,
            budget_interval,
        ),
    ];
    let versions = measure(Detection::Versions(interval), shape, binary).await?;
    rows.push(measured_row(
        &format!("Versions {}s", interval.as_secs()),
        &versions,
    ));
    if !args.no_hints {
        let hints = measure(Detection::Hints, shape, binary).await?;
        rows.push(measured_row("hints", &hints));
    }
    let targets = evaluate(&rows, args.objects, interval);
    let report = FreshnessReport {
        flags: args.flags(),
        rows,
        targets,
    };
    print(&report);
    Ok(report)
}

/// A `Poll` row at `interval` seconds over `objects` objects (see the module).
fn computed(row: &str, objects: usize, interval: f64) -> FreshnessRow {
    FreshnessRow {
        row: row.to_owned(),
        measured: false,
        p50_seconds: Some(interval / 2.0),
        p99_seconds: Some(interval * 0.99),
        arrived: None,
        quiet_per_hour: objects as f64 * 3600.0 / interval,
        quiet_counts: None,
        rotating_per_hour: None,
        rate_limited: None,
    }
}

/// The row of a measured run.
pub fn measured_row(row: &str, m: &Measured) -> FreshnessRow {
    let per_hour = |n: u64, window: Duration| n as f64 * 3600.0 / window.as_secs_f64().max(1e-3);
    FreshnessRow {
        row: row.to_owned(),
        measured: true,
        p50_seconds: percentile(&m.latencies, 0.50),
        p99_seconds: percentile(&m.latencies, 0.99),
        arrived: Some((m.latencies.len(), m.rotations)),
        quiet_per_hour: per_hour(m.quiet_lists + m.quiet_reveals, m.quiet),
        quiet_counts: Some((m.quiet_lists, m.quiet_reveals, m.quiet.as_secs_f64())),
        rotating_per_hour: Some(per_hour(m.rotating_requests, m.rotating)),
        rate_limited: Some(m.rate_limited),
    }
}

/// The `q` quantile of `values` (nearest rank); `None` when empty.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}

/// The targets over `rows`.
fn evaluate(rows: &[FreshnessRow], objects: usize, interval: Duration) -> Vec<Target> {
    let find = |prefix: &str| rows.iter().find(|r| r.row.starts_with(prefix));
    let mut targets = Vec::new();
    let versions = find("Versions");
    let bound = interval.as_secs_f64() + 2.0;
    let p99 = versions.and_then(|v| v.p99_seconds);
    targets.push(Target {
        goal: format!("freshness: Versions p99 rotation → write ≤ interval + 2 s ({bound:.0} s)"),
        measured: show(p99),
        met: p99.map(|p| p <= bound && versions.and_then(|v| v.arrived).is_some_and(|(a, n)| a == n)),
    });
    let equal = p99.map(|p| objects as f64 * 3600.0 / p.max(1.0));
    let quiet = versions.map(|v| v.quiet_per_hour);
    targets.push(Target {
        goal: "freshness: Versions requests/h, nothing changing ≤ 1/20 of Poll at equal freshness".into(),
        measured: match (quiet, equal) {
            (Some(q), Some(e)) => format!("{q:.0}/h vs Poll at {:.0} s: {e:.0}/h", p99.unwrap_or(0.0)),
            _ => "not measured".into(),
        },
        met: quiet.zip(equal).map(|(q, e)| q * 20.0 <= e),
    });
    if let Some(hints) = find("hints") {
        targets.push(Target {
            goal: "freshness: hints p99 rotation → write ≤ 2 s".into(),
            measured: show(hints.p99_seconds),
            met: hints.p99_seconds.map(|p| p <= 2.0),
        });
    }
    let limited: Vec<&FreshnessRow> = rows.iter().filter(|r| r.measured).collect();
    targets.push(Target {
        goal: "freshness: zero 429s in every measured row".into(),
        measured: limited
            .iter()
            .map(|r| format!("{}: {}", r.row, r.rate_limited.unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", "),
        met: Some(limited.iter().all(|r| r.rate_limited == Some(0))),
    });
    targets
}

/// Seconds, or "none arrived".
fn show(seconds: Option<f64>) -> String {
    seconds.map_or_else(|| "none arrived".to_owned(), |s| format!("{s:.1} s"))
}

/// Prints the table and the targets.
fn print(report: &FreshnessReport) {
    println!(
        "\nfreshness: {:<14} {:>9} {:>10} {:>10} {:>9} {:>20} {:>22} {:>16} {:>5}",
        "row", "how", "p50", "p99", "arrived", "req/h quiet", "quiet lists/reveals", "req/h rotating", "429s"
    );
    for r in &report.rows {
        let seconds = |s: Option<f64>| s.map_or_else(|| "-".to_owned(), |s| format!("{s:.1} s"));
        println!(
            "freshness: {:<14} {:>9} {:>10} {:>10} {:>9} {:>20} {:>22} {:>16} {:>5}",
            r.row,
            if r.measured { "measured" } else { "computed" },
            seconds(r.p50_seconds),
            seconds(r.p99_seconds),
            r.arrived
                .map_or_else(|| "-".to_owned(), |(a, n)| format!("{a}/{n}")),
            format!("{:.0}", r.quiet_per_hour),
            r.quiet_counts
                .map_or_else(|| "-".to_owned(), |(l, v, s)| format!("{l}/{v} in {s:.0} s")),
            r.rotating_per_hour
                .map_or_else(|| "-".to_owned(), |p| format!("{p:.0}")),
            r.rate_limited.map_or_else(|| "-".to_owned(), |n| n.to_string()),
        );
    }
    for t in &report.targets {
        println!("{:<8} {} — {}", t.verdict(), t.goal, t.measured);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentile_should_take_the_nearest_rank() {
        let values = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&values, 0.5), Some(3.0));
        assert_eq!(percentile(&values, 0.99), Some(5.0));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn a_computed_poll_row_should_cost_one_reveal_per_object_per_interval() {
        let row = computed("Poll 1000s", 1000, 1000.0);
        assert_eq!(row.quiet_per_hour, 3600.0);
        assert_eq!(row.p50_seconds, Some(500.0));
    }
}
