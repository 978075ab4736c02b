//! The targets of issue 7, checked against measured reports: each is printed as met, not met,
//! or not measured (its benchmark was not run). A miss is a finding, shown, never hidden.

use serde::Serialize;

use super::{
    driver::Driver,
    failover::FailoverReport,
    memory::MemoryReport,
    rate_limit::{self, Policy},
    scale::{ScaleReport, opt},
};

/// The objects at which the scale targets are stated.
pub const FULL_SCALE: usize = 10_000;

/// One target and its verdict.
#[derive(Clone, Debug, Serialize)]
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

/// Every target, from whichever reports exist.
pub fn evaluate(
    rate: Option<&rate_limit::Report>,
    scale: Option<&ScaleReport>,
    memory: Option<&MemoryReport>,
    failover: Option<&FailoverReport>,
) -> Vec<Target> {
    let mut targets = rate.map(rate_limit_targets).unwrap_or_else(|| {
        vec![Target::new(
            "rate limit: time <= 1.05 x ideal + 2s, zero 429s",
            "-",
            None,
        )]
    });
    targets.extend(scale_targets(scale));
    let growth = memory.and_then(|m| m.row(Driver::Operator)).map(|r| r.growth);
    targets.push(Target::new(
        "RSS growth <= 10% with the unrelated Secrets",
        opt(growth.map(|g| g * 100.0), 1) + "%",
        growth.map(|g| g <= 0.10),
    ));
    let term = failover.and_then(|f| f.term.max.map(|m| (m, f.term.timeouts)));
    targets.push(Target::new(
        "failover, SIGTERM: every takeover <= 3s",
        term.map_or_else(|| "-".into(), |(m, t)| format!("max {m:.2}s, {t} timeouts")),
        term.map(|(m, t)| m <= 3.0 && t == 0),
    ));
    let kill = failover.and_then(|f| f.kill.max.map(|m| (m, f.kill.timeouts, f.kill_bound_seconds)));
    targets.push(Target::new(
        format!(
            "failover, SIGKILL: every takeover <= lease + retry ({})",
            failover.map_or_else(|| "-".into(), |f| format!("{}s", f.kill_bound_seconds))
        ),
        kill.map_or_else(|| "-".into(), |(m, t, _)| format!("max {m:.2}s, {t} timeouts")),
        kill.map(|(m, t, bound)| m <= bound && t == 0),
    ));
    targets
}

fn rate_limit_targets(report: &rate_limit::Report) -> Vec<Target> {
    let mut sizes: Vec<usize> = report.rows.iter().map(|r| r.n).collect();
    sizes.dedup();
    sizes
        .into_iter()
        .map(|n| {
            let ideal = rate_limit::ideal_seconds(n, report.server_rate, report.server_burst);
            let bound = 1.05 * ideal + 2.0;
            let rows: Vec<&rate_limit::Row> = report
                .rows
                .iter()
                .filter(|r| r.n == n && r.policy == Policy::Limiter)
                .collect();
            let worst = rows.iter().map(|r| r.seconds).fold(0.0, f64::max);
            let rejected: u64 = rows.iter().map(|r| r.rate_limited).sum();
            let all = rows.iter().all(|r| r.succeeded == r.n);
            Target::new(
                format!("rate limit N={n}: <= 1.05 x ideal + 2s ({bound:.1}s), zero 429s"),
                format!(
                    "worst {worst:.1}s, {rejected} 429s (time scale {})",
                    report.time_scale
                ),
                Some(all && worst <= bound && rejected == 0),
            )
        })
        .collect()
}

fn scale_targets(scale: Option<&ScaleReport>) -> Vec<Target> {
    let largest = scale.and_then(|s| s.rows.iter().map(|r| r.objects).max());
    let n = largest.unwrap_or(FULL_SCALE);
    let reduced = if n < FULL_SCALE { " (reduced run)" } else { "" };
    let ours = scale.and_then(|s| s.row(Driver::Operator, n));
    let plain = scale.and_then(|s| s.row(Driver::PlainController, n));
    let ready = ours.and_then(|r| r.ready_seconds);
    let ratio = scale
        .and_then(|s| s.ratios.iter().find(|r| r.objects == n))
        .and_then(|r| r.ready_time);
    let p99 = ours.and_then(|r| r.probe_p99_seconds);
    let all_probes = ours.is_some_and(|r| r.probes_written == r.probes);
    let rss = ours.map(|r| r.sync.peak_rss_mib());
    vec![
        Target::new(
            format!("{n} objects: start -> all Ready <= 60s{reduced}"),
            ours.map_or_else(
                || "-".into(),
                |r| opt(ready, 1) + &format!("s ({}/{} Ready)", r.ready, r.objects),
            ),
            ours.map(|_| ready.is_some_and(|s| s <= 60.0)),
        ),
        Target::new(
            format!("{n} objects: all Ready <= 0.5 x the plain Controller's time{reduced}"),
            format!(
                "ratio {} ({}s vs {}s)",
                opt(ratio, 2),
                opt(ready, 1),
                opt(plain.and_then(|r| r.ready_seconds), 1)
            ),
            ours.map(|_| ratio.is_some_and(|r| r <= 0.5)),
        ),
        Target::new(
            format!("new-object p99 <= 2s under the {n}-object backlog{reduced}"),
            ours.map_or_else(
                || "-".into(),
                |r| format!("{}s ({}/{} probes)", opt(p99, 3), r.probes_written, r.probes),
            ),
            ours.map(|_| all_probes && p99.is_some_and(|p| p <= 2.0)),
        ),
        Target::new(
            format!("peak RSS <= 100 MiB at {n} objects{reduced}"),
            opt(rss, 1) + " MiB",
            rss.map(|r| r <= 100.0),
        ),
    ]
}

/// Prints the targets as a table.
pub fn print(targets: &[Target]) {
    let width = targets.iter().map(|t| t.goal.len()).max().unwrap_or(10);
    println!("{:<width$}  {:<40}  verdict", "target", "measured");
    for t in targets {
        println!("{:<width$}  {:<40}  {}", t.goal, t.measured, t.verdict());
    }
}
