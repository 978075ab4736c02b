//! The README's Performance tables, rendered from a `bench all` report (`tables.md` beside
//! `report.json`, or `ferrvault-dev bench tables --report FILE`), and read back from Markdown,
//! so a test can hold the README to the committed report.
//!
//! A table is a `#### title` line followed by a pipe table; nothing else in the text matters.

use super::{
    rate_limit::Row as RateRow, report::AllReport, scale::opt, shards_report::ShardReport,
    shards_takeover::TakeoverSample, stats::Spread, work::WorkSpread,
};

/// One titled table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The `####` heading.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells, row by row.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(title: impl Into<String>, header: &[&str]) -> Self {
        Self {
            title: title.into(),
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
}

/// Every table of the README, from `report`.
pub fn tables(report: &AllReport) -> Vec<Table> {
    let mut all = vec![targets(report)];
    all.extend(scale(report));
    all.push(economy_restart(report));
    all.push(economy_waves(report));
    all.push(rate_limit(report));
    all.push(failover(report));
    all.push(fairness(report));
    all.push(admin_load(report));
    all.push(memory(report));
    all.extend(report.shards.as_ref().map(shards).unwrap_or_default());
    all
}

fn targets(report: &AllReport) -> Table {
    let mut t = Table::new("Targets", &["target", "measured", "verdict"]);
    for target in &report.targets {
        t.row(vec![
            target.goal.clone(),
            target.measured.clone(),
            target.verdict().to_owned(),
        ]);
    }
    t
}

fn work_cells(work: &WorkSpread) -> Vec<String> {
    vec![
        work.reconciles.show(0),
        work.ferrvault_budgeted.show(0),
        work.kube_total.show(0),
        work.kube_writes.show(0),
        work.kube_by_verb(),
    ]
}

fn scale(report: &AllReport) -> Vec<Table> {
    let s = &report.scale;
    let mut time = Table::new(
        "Scale: time, memory, latency (median (min–max) of the runs)",
        &[
            "objects",
            "driver",
            "start to all Ready (s)",
            "reconciles/s",
            "peak RSS (MiB)",
            "CPU (s)",
            "new-object p50 (ms)",
            "p99 (ms)",
            "probes written",
        ],
    );
    let mut work = Table::new(
        "Scale: counted work (median (min–max) of the runs)",
        &[
            "objects",
            "driver",
            "phase",
            "reconciles",
            "FerrVault requests",
            "Kubernetes requests",
            "Kubernetes writes",
            "Kubernetes requests by verb (medians)",
        ],
    );
    for r in &s.rows {
        time.row(vec![
            r.objects.to_string(),
            r.driver.label().to_owned(),
            r.ready_seconds.show(1),
            r.reconciles_per_second.show(0),
            r.peak_rss_mib.show(1),
            r.cpu_seconds.show(1),
            r.probe_p50_ms.show(0),
            r.probe_p99_ms.show(0),
            format!("{}/{}", r.probes_written, r.probes),
        ]);
        for (phase, w) in [("sync", &r.sync_work), ("restart + probes", &r.restart_work)] {
            let mut cells = vec![
                r.objects.to_string(),
                r.driver.label().to_owned(),
                phase.to_owned(),
            ];
            cells.extend(work_cells(w));
            work.row(cells);
        }
    }
    let mut ratios = Table::new(
        "Scale: ferrvault-operator ÷ baseline, on medians (lower is better)",
        &[
            "objects",
            "baseline",
            "time to all Ready",
            "peak RSS",
            "new-object p99",
        ],
    );
    for r in &s.ratios {
        ratios.row(vec![
            r.objects.to_string(),
            r.baseline.label().to_owned(),
            opt(r.ready_time, 2),
            opt(r.peak_rss, 2),
            opt(r.probe_p99, 2),
        ]);
    }
    let mut slopes = Table::new("Scale: peak RSS per object", &["driver", "KiB per object"]);
    for m in &s.memory_slopes {
        slopes.row(vec![m.driver.label().to_owned(), opt(m.kib_per_object, 2)]);
    }
    vec![time, work, ratios, slopes]
}

fn economy_restart(report: &AllReport) -> Table {
    let mut t = Table::new(
        "Economy: restart with nothing due",
        &[
            "driver",
            "objects",
            "FerrVault requests",
            "Kubernetes writes",
            "Kubernetes requests by verb (medians)",
        ],
    );
    for r in &report.economy.restart {
        t.row(vec![
            r.driver.label().to_owned(),
            r.objects.to_string(),
            r.ferrvault_budgeted.show(0),
            r.kube_writes.show(0),
            r.work.kube_by_verb(),
        ]);
    }
    t
}

fn economy_waves(report: &AllReport) -> Table {
    let mut t = Table::new(
        "Economy: one refresh wave, K objects on one (token, vault), nothing changed",
        &[
            "K",
            "FerrVault requests",
            "Kubernetes writes / object",
            "GETs / object",
        ],
    );
    for w in &report.economy.waves {
        t.row(vec![
            w.objects.to_string(),
            w.ferrvault_per_wave.show(0),
            w.kube_writes_per_object.show(2),
            w.kube_gets_per_object.show(2),
        ]);
    }
    t
}

fn rate_limit(report: &AllReport) -> Table {
    let mut t = Table::new(
        "Rate limit (simulated seconds, median (min–max) of the runs; 429s and requests counted by the server)",
        &[
            "N",
            "server",
            "policy",
            "time scale",
            "ideal (s)",
            "time / ideal",
            "time (s)",
            "429s",
            "requests",
            "fewest synced",
        ],
    );
    for r in &report.rate_limit.rows {
        t.row(rate_cells(r));
    }
    t
}

fn rate_cells(r: &RateRow) -> Vec<String> {
    let c = &r.config;
    vec![
        c.n.to_string(),
        c.server.label(),
        c.policy.label().to_owned(),
        c.time_scale.to_string(),
        format!("{:.1}", r.ideal_seconds),
        r.ratio_text(),
        r.seconds.show(1),
        r.rate_limited.show(0),
        r.requests.show(0),
        format!("{}/{}", r.fewest_synced, c.n),
    ]
}

fn failover(report: &AllReport) -> Table {
    let f = &report.failover;
    let mut t = Table::new(
        "Failover (seconds)",
        &[
            "signal",
            "rounds",
            "takeover median",
            "takeover worst",
            "timeouts",
            "changed object synced, median",
            "worst",
            "not synced",
        ],
    );
    for (label, s) in [("SIGKILL", f.kill), ("SIGTERM", f.term)] {
        t.row(vec![
            label.to_owned(),
            s.rounds.to_string(),
            opt(s.median, 2),
            opt(s.max, 2),
            s.timeouts.to_string(),
            opt(s.synced_median, 2),
            opt(s.synced_max, 2),
            s.synced_timeouts.to_string(),
        ]);
    }
    t
}

fn fairness(report: &AllReport) -> Table {
    let mut t = Table::new(
        "Fairness: tenant B's new objects while tenant A's backlog waits on a 1 req/s token",
        &[
            "driver",
            "A's backlog",
            "A synced meanwhile",
            "B p50 (ms)",
            "B p99 (ms)",
            "fewest B synced",
        ],
    );
    for r in &report.fairness.rows {
        t.row(vec![
            r.driver.label().to_owned(),
            r.backlog.to_string(),
            r.backlog_ready.show(0),
            r.p50_ms.show(0),
            r.p99_ms.show(0),
            format!("{}/{}", r.probes_written, r.probes),
        ]);
    }
    t
}

fn admin_load(report: &AllReport) -> Table {
    let a = &report.admin_load;
    let mut t = Table::new(
        "Admin ports under load: /healthz probes (1 s timeout) with slow-loris connections and a /metrics flood",
        &[
            "probe p99 quiet (ms)",
            "probe p99 under load (ms)",
            "failed probes",
            "probes",
            "slow connections opened",
            "RSS growth (%)",
        ],
    );
    t.row(vec![
        a.quiet_p99_ms.show(1),
        a.load_p99_ms.show(1),
        a.failures.show(0),
        a.probes.show(0),
        a.slow_connections_open.show(0),
        a.rss_growth_percent.show(1),
    ]);
    t
}

fn memory(report: &AllReport) -> Table {
    let mut t = Table::new(
        "Memory under unrelated Secrets",
        &["driver", "RSS before (MiB)", "RSS after (MiB)", "growth (%)"],
    );
    for r in &report.memory.rows {
        let cells = [r.baseline_mib, r.after_mib, r.growth_percent].map(|s: Spread| s.show(1));
        let mut row = vec![r.driver.label().to_owned()];
        row.extend(cells);
        t.row(row);
    }
    t
}

/// The shard tables (issue 39 point 6), only when the report measured them: layouts, then
/// the takeover after the SIGKILL of one replica, both median (min–max) over the runs.
fn shards(report: &ShardReport) -> Vec<Table> {
    let mut layouts = Table::new(
        format!("Shards, {} objects", report.objects),
        &[
            "layout",
            "all Ready (s)",
            "largest replica peak RSS (MiB)",
            "FerrVault requests",
        ],
    );
    for r in &report.rows {
        layouts.row(vec![
            r.layout.label(),
            r.ready_seconds.show(1),
            r.max_replica_rss_mib.show(1),
            r.ferrvault_requests.show(0),
        ]);
    }
    let mut takeover = Table::new(
        "Shard takeover after a SIGKILL",
        &[
            "shards held again (s)",
            "bound (s)",
            "objects of the moved shards",
            "objects stored again",
            "FerrVault requests",
            "object writes",
        ],
    );
    let take = |f: fn(&TakeoverSample) -> f64| report.takeover_spread(|s| s.takeover.as_ref().map(f));
    takeover.row(vec![
        report
            .takeover_spread(|s| s.takeover.as_ref()?.held_again_seconds)
            .show(2),
        report.takeover_bound_seconds.to_string(),
        take(|t| t.moved_objects as f64).show(0),
        take(|t| t.relisted_objects as f64).show(0),
        take(|t| t.ferrvault_requests as f64).show(0),
        take(|t| t.object_writes as f64).show(0),
    ]);
    vec![layouts, takeover]
}

/// `tables` as Markdown.
pub fn markdown(tables: &[Table]) -> String {
    let mut text = String::new();
    for t in tables {
        text.push_str(&format!("#### {}\n\n", t.title));
        text.push_str(&format!("| {} |\n", t.header.join(" | ")));
        text.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
        for row in &t.rows {
            text.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        text.push('\n');
    }
    text
}

/// The titled pipe tables of Markdown `text`.
pub fn parse_markdown(text: &str) -> Vec<Table> {
    let mut tables: Vec<Table> = Vec::new();
    let cells = |line: &str| -> Vec<String> {
        let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
        inner.split('|').map(|c| c.trim().to_owned()).collect()
    };
    let mut open = false;
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("#### ") {
            tables.push(Table::new(title.trim(), &[]));
            open = true;
        } else if open && line.trim_start().starts_with('|') {
            let table = tables.last_mut().expect("a table is open");
            if table.header.is_empty() {
                table.header = cells(line);
            } else if !line.contains("---") {
                table.rows.push(cells(line));
            }
        } else if open && !line.trim().is_empty() && tables.last().is_some_and(|t| !t.header.is_empty()) {
            open = false;
        }
    }
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_should_read_back_as_the_same_tables() {
        let mut a = Table::new("A (x–y)", &["n", "value"]);
        a.row(vec!["1".into(), "2.0 (1.0–3.0)".into()]);
        a.row(vec!["2".into(), "unfinished".into()]);
        let b = Table::new("B", &["only"]);
        let tables = vec![a, b];
        let text = format!("intro\n\n{}\nafterwards | not a table\n", markdown(&tables));
        assert_eq!(parse_markdown(&text), tables);
    }
}
