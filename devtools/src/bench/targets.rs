//! The targets (issues 7, 12 and 13), checked against measured reports: each is printed as met,
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
    fn new(goal: impl Into<String>, measured: impl Into<String>, met: Option<bool>) -> Self {
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

fn rate_limit_targets(report: &rate_limit::Report) -> Vec<Target> {
    let limiter = report.rows.iter().filter(|r| r.config.policy == Policy::Limiter);
    let mut targets = Vec::new();
    for row in limiter {
        let c = &row.config;
        let (factor, slack, zero_429s) = match c.group {
            Group::AsConfigured => (1.05, 2.0, true),
            Group::Misconfigured | Group::OtherLimiter => (1.15, 5.0, false),
        };
        let bound = factor * row.ideal_seconds + slack;
        let rejected = row.rejected_percent();
        let goal = if zero_429s {
            format!(
                "rate limit N={}, server {}: <= {factor} x ideal + {slack}s ({bound:.1}s), zero 429s",
                c.n,
                c.server.label()
            )
        } else {
            format!(
                "rate limit N={}, server {}: <= {factor} x ideal + {slack}s ({bound:.1}s), 429s <= 2%",
                c.n,
                c.server.label()
            )
        };
        let measured = format!(
            "{}s; {rejected:.1}% 429s over the runs; time scale {}",
            row.seconds.show(1),
            c.time_scale
        );
        let in_time = row.all_finished() && row.seconds.median.is_some_and(|s| s <= bound);
        let few_429s = if zero_429s {
            row.rate_limited.max == Some(0.0)
        } else {
            rejected <= 2.0
        };
        targets.push(Target::new(goal, measured, Some(in_time && few_429s)));
    }
    targets
}

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
    let ratio = scale
        .ratio(Driver::CompetentController, n)
        .and_then(|r| r.ready_time);
    let p99 = ours.and_then(|r| r.probe_p99_ms.median);
    let base_p99 = competent.and_then(|r| r.probe_p99_ms.median);
    let rss = ours.and_then(|r| r.peak_rss_mib.median);
    let compared = ours.is_some() && competent.is_some();
    let mut targets = vec![
        Target::new(
            format!("{n} objects: all Ready <= 0.5 x the competent Controller's time{reduced}"),
            format!(
                "ratio {} ({}s vs {}s)",
                opt(ratio, 2),
                show(ours.map(|r| r.ready_seconds), 1),
                show(competent.map(|r| r.ready_seconds), 1)
            ),
            compared.then(|| ratio.is_some_and(|r| r <= 0.5)),
        ),
        Target::new(
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
        ),
        Target::new(
            format!("{n} objects: peak RSS <= 64 MiB (median){reduced}"),
            format!("{} MiB", show(ours.map(|r| r.peak_rss_mib), 1)),
            ours.map(|_| rss.is_some_and(|r| r <= 64.0)),
        ),
    ];
    let huge = scale.row(Driver::Operator, HUGE_SCALE);
    let slope = scale.slope(Driver::Operator);
    targets.push(Target::new(
        format!("{HUGE_SCALE} objects: all Ready <= 180s and peak RSS <= 400 MiB"),
        huge.map_or_else(
            || format!("not run here (--sizes 1000,{HUGE_SCALE} --drivers operator)"),
            |r| {
                format!(
                    "{}s, {} MiB, slope {} KiB/object",
                    show(Some(r.ready_seconds), 1),
                    show(Some(r.peak_rss_mib), 1),
                    opt(slope, 2)
                )
            },
        ),
        huge.map(|r| {
            r.ready_seconds.median.is_some_and(|s| s <= 180.0)
                && r.peak_rss_mib.median.is_some_and(|m| m <= 400.0)
        }),
    ));
    targets
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
