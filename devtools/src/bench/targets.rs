//! The targets (issues 7, 12, 13 and 39), checked against measured reports: each is printed as met,
//! NOT MET (the measurement says why) or not measured (its benchmark or size was not run). A
//! miss is a finding, shown, never hidden. Times are judged on medians over the runs; counts
//! that must be zero on the worst run.

use serde::{Deserialize, Serialize};

use super::{
    driver::Driver,
    economy::EconomyReport,
    failover::FailoverReport,
    memory::MemoryReport,
    rate_limit::{self, Group, Policy},
    scale::{ScaleReport, opt},
    stats::Spread,
};

/// The objects at which the scale targets are stated.
pub const FULL_SCALE: usize = 10_000;
/// The size of the largest run the targets speak of.
pub const HUGE_SCALE: usize = 100_000;

/// One target and its verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Target {
    /// What is promised.
    pub goal: String,
    /// What was measured.
    pub measured: String,
    /// `Some(true)` met, `Some(false)` not met, `None` not measured.
    pub met: Option<bool>,
}

impl Target {
    /// `goal`, what was `measured`, and whether it is `met` (`None`: not measured).
    pub fn new(goal: impl Into<String>, measured: impl Into<String>, met: Option<bool>) -> Self {
        Self {
            goal: goal.into(),
            measured: measured.into(),
            met,
        }
    }

    /// `met`, `NOT MET` or `not measured`.
    pub fn verdict(&self) -> &'static str {
        match self.met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "not measured",
        }
    }
}

/// Every target, from the reports of `bench all`.
pub fn evaluate(
    rate: &rate_limit::Report,
    scale: &ScaleReport,
    economy: &EconomyReport,
    memory: &MemoryReport,
    failover: &FailoverReport,
) -> Vec<Target> {
    let mut targets = rate_limit_targets(rate);
    targets.extend(scale_targets(scale));
    targets.extend(economy_targets(economy));
    let growth = memory.row(Driver::Operator).and_then(|r| r.growth_percent.median);
    targets.push(Target::new(
        "RSS growth <= 10% with the unrelated Secrets",
        opt(growth, 1) + "%",
        growth.map(|g| g <= 10.0),
    ));
    let (term, kill, bound) = (failover.term, failover.kill, failover.kill_bound_seconds);
    targets.push(Target::new(
        "failover, SIGTERM: every takeover <= 3s",
        format!(
            "worst {}s of {}, {} timeouts",
            opt(term.max, 2),
            term.rounds,
            term.timeouts
        ),
        term.max.map(|m| m <= 3.0 && term.timeouts == 0),
    ));
    targets.push(Target::new(
        format!("failover, SIGKILL at a random phase: every takeover <= lease + retry + 0.5s ({bound}s)"),
        format!(
            "worst {}s of {}, {} timeouts",
            opt(kill.max, 2),
            kill.rounds,
            kill.timeouts
        ),
        kill.max.map(|m| m <= bound && kill.timeouts == 0),
    ));
    targets
}

/// 429s a limiter row may draw where some are unavoidable, percent of its requests (issue 39:
/// 1 %, from 2 %, for margin).
pub const MAX_429_PERCENT: f64 = 1.0;

fn rate_limit_targets(report: &rate_limit::Report) -> Vec<Target> {
    let limiter = report.rows.iter().filter(|r| r.config.policy == Policy::Limiter);
    let mut targets = Vec::new();
    for row in limiter {
        let c = &row.config;
        let (factor, slack, zero_429s) = match c.group {
            Group::AsConfigured => (1.05, 2.0, true),
            Group::Misconfigured | Group::OtherLimiter => (1.15, 5.0, false),
        };
        // A sliding window admits a whole window at once: faster than any client keeping its
        // configured budget may ask, so that row is judged against such a client (issue 39).
        let (yardstick, against) = if c.server.is_sliding_window() {
            (c.server.budget_seconds(c.n), "the configured budget's time")
        } else {
            (row.ideal_seconds, "ideal")
        };
        let bound = factor * yardstick + slack;
        let rejected = row.rejected_percent();
        let limit_429s = if zero_429s {
            "zero 429s".to_owned()
        } else {
            format!("429s <= {MAX_429_PERCENT}%")
        };
        let goal = format!(
            "rate limit N={}, server {}: <= {factor} x {against} + {slack}s ({bound:.1}s), {limit_429s}",
            c.n,
            c.server.label()
        );
        let measured = format!(
            "{}s; {rejected:.1}% 429s over the runs; time scale {}",
            row.seconds.show(1),
            c.time_scale
        );
        let in_time = row.all_finished() && row.seconds.median.is_some_and(|s| s <= bound);
        let few_429s = if zero_429s {
            row.rate_limited.max == Some(0.0)
        } else {
            rejected <= MAX_429_PERCENT
        };
        targets.push(Target::new(goal, measured, Some(in_time && few_429s)));
    }
    targets
}

/// Time to all Ready may be at most this many times the floor's (issue 39).
pub const FLOOR_FACTOR: f64 = 1.15;
/// Peak RSS bound at [`FULL_SCALE`] objects, MiB (issue 39).
pub const FULL_RSS_MIB: f64 = 40.0;
/// Peak RSS bound at [`HUGE_SCALE`] objects, MiB (issue 39).
pub const HUGE_RSS_MIB: f64 = 250.0;

fn scale_targets(scale: &ScaleReport) -> Vec<Target> {
    let full = scale
        .rows
        .iter()
        .map(|r| r.objects)
        .filter(|&n| n < HUGE_SCALE)
        .max();
    let n = full.unwrap_or(FULL_SCALE);
    let reduced = if n < FULL_SCALE { " (reduced run)" } else { "" };
    let ours = scale.row(Driver::Operator, n);
    let competent = scale.row(Driver::CompetentController, n);
    let p99 = ours.and_then(|r| r.probe_p99_ms.median);
    let base_p99 = competent.and_then(|r| r.probe_p99_ms.median);
    let compared = ours.is_some() && competent.is_some();
    let mut targets = vec![floor_target(scale, n, reduced)];
    targets.push(Target::new(
        format!(
            "{n} objects: new-object p99 under the restart backlog <= 250 ms and <= the competent Controller's{reduced}"
        ),
        format!(
            "{} ms vs {} ms ({} probes written)",
            show(ours.map(|r| r.probe_p99_ms), 0),
            show(competent.map(|r| r.probe_p99_ms), 0),
            ours.map_or_else(|| "-".into(), |r| format!("{}/{}", r.probes_written, r.probes))
        ),
        compared.then(|| p99.zip(base_p99).is_some_and(|(p, b)| p <= 250.0 && p <= b)),
    ));
    targets.push(rss_target(scale, n, FULL_RSS_MIB, reduced));
    targets.push(cpu_target(scale, n));
    let huge = scale.row(Driver::Operator, HUGE_SCALE);
    if huge.is_some() {
        targets.push(floor_target(scale, HUGE_SCALE, ""));
        targets.push(rss_target(scale, HUGE_SCALE, HUGE_RSS_MIB, ""));
    } else {
        targets.push(Target::new(
            format!(
                "{HUGE_SCALE} objects: all Ready <= {FLOOR_FACTOR} x the floor's and peak RSS <= {HUGE_RSS_MIB} MiB"
            ),
            format!("not run here (--huge-size {HUGE_SCALE})"),
            None,
        ));
    }
    targets
}

/// All Ready at `n` objects within [`FLOOR_FACTOR`] of the floor's time (medians).
fn floor_target(scale: &ScaleReport, n: usize, reduced: &str) -> Target {
    let ours = scale.row(Driver::Operator, n);
    let floor = scale.row(Driver::Floor, n);
    let ratio = scale.ratio(Driver::Floor, n).and_then(|r| r.ready_time);
    Target::new(
        format!("{n} objects: all Ready <= {FLOOR_FACTOR} x the floor's time{reduced}"),
        format!(
            "ratio {} ({}s vs {}s)",
            opt(ratio, 2),
            show(ours.map(|r| r.ready_seconds), 1),
            show(floor.map(|r| r.ready_seconds), 1)
        ),
        (ours.is_some() && floor.is_some()).then(|| ratio.is_some_and(|r| r <= FLOOR_FACTOR)),
    )
}

/// This operator's median peak RSS at `n` objects within `bound` MiB.
fn rss_target(scale: &ScaleReport, n: usize, bound: f64, reduced: &str) -> Target {
    let ours = scale.row(Driver::Operator, n);
    let rss = ours.and_then(|r| r.peak_rss_mib.median);
    Target::new(
        format!("{n} objects: peak RSS <= {bound} MiB (median){reduced}"),
        format!(
            "{} MiB, slope {} KiB/object",
            show(ours.map(|r| r.peak_rss_mib), 1),
            opt(scale.slope(Driver::Operator), 2)
        ),
        ours.map(|_| rss.is_some_and(|r| r <= bound)),
    )
}

/// CPU seconds per 1,000 objects until all were Ready: reported, with no bound (issue 39), so
/// "met" means measured.
fn cpu_target(scale: &ScaleReport, n: usize) -> Target {
    let per_thousand = |driver| {
        scale
            .row(driver, n)
            .and_then(|r| r.cpu_seconds.median)
            .map(|cpu| cpu * 1000.0 / n as f64)
    };
    let ours = per_thousand(Driver::Operator);
    Target::new(
        format!("{n} objects: CPU seconds per 1,000 objects reported (no bound)"),
        format!(
            "operator {}, floor {}, competent Controller {}",
            opt(ours, 2),
            opt(per_thousand(Driver::Floor), 2),
            opt(per_thousand(Driver::CompetentController), 2)
        ),
        ours.map(|_| true),
    )
}

fn show(spread: Option<Spread>, digits: usize) -> String {
    spread.map_or_else(|| "-".into(), |s| s.show(digits))
}

fn economy_targets(economy: &EconomyReport) -> Vec<Target> {
    let mut targets = Vec::new();
    let restart = economy.restart.iter().find(|r| r.driver == Driver::Operator);
    targets.push(Target::new(
        "restart with nothing due: 0 FerrVault requests and 0 Kubernetes writes (every run)",
        restart.map_or_else(
            || "-".into(),
            |r| {
                format!(
                    "FerrVault {}, writes {}",
                    r.ferrvault_budgeted.show(0),
                    r.kube_writes.show(0)
                )
            },
        ),
        restart.map(|r| r.ferrvault_budgeted.max == Some(0.0) && r.kube_writes.max == Some(0.0)),
    ));
    for wave in &economy.waves {
        let k = wave.objects;
        targets.push(Target::new(
            format!("K={k} on one (token, vault): <= 1 FerrVault request per refresh wave (every run)"),
            wave.ferrvault_per_wave.show(0),
            Some(wave.ferrvault_per_wave.max.is_some_and(|m| m <= 1.0)),
        ));
        targets.push(Target::new(
            format!("K={k}, unchanged refresh: <= 1 Kubernetes write and 0 GETs per object"),
            format!(
                "writes {}, GETs {} per object",
                wave.kube_writes_per_object.show(2),
                wave.kube_gets_per_object.show(2)
            ),
            Some(
                wave.kube_writes_per_object.max.is_some_and(|w| w <= 1.0)
                    && wave.kube_gets_per_object.max == Some(0.0),
            ),
        ));
    }
    targets
}

/// Prints the targets as a table.
pub fn print(targets: &[Target]) {
    let width = targets.iter().map(|t| t.goal.len()).max().unwrap_or(10);
    println!("{:<width$}  {:<50}  verdict", "target", "measured");
    for t in targets {
        println!("{:<width$}  {:<50}  {}", t.goal, t.measured, t.verdict());
    }
}
