//! The plots of a `bench all` report. A run that did not finish stays in its plot as a cross at
//! the value where it was stopped (a lower bound), so no failure disappears from a picture.

use super::{
    driver::Driver,
    failover::Signal,
    plot::{Chart, Series},
    rate_limit::{Group, Policy, Row as RateRow, server::ServerShape},
    report::AllReport,
    scale::ScaleRow,
    stats::Spread,
};

/// `(x, y)` into the finished or the unfinished points of `series`.
fn place(series: &mut Series, x: f64, y: Option<f64>, stopped_at: f64) {
    match y {
        Some(y) => series.points.push((x, y)),
        None => series.unfinished.push((x, stopped_at)),
    }
}

/// One series per driver of a scale figure, unfinished medians at `stopped_at`.
fn by_driver(report: &AllReport, figure: &dyn Fn(&ScaleRow) -> Spread, stopped_at: f64) -> Vec<Series> {
    Driver::ALL
        .iter()
        .map(|&driver| {
            let mut series = Series {
                name: driver.label().to_owned(),
                ..Series::default()
            };
            for row in report.scale.rows.iter().filter(|r| r.driver == driver) {
                place(&mut series, row.objects as f64, figure(row).median, stopped_at);
            }
            series
        })
        .filter(|s| !(s.points.is_empty() && s.unfinished.is_empty()))
        .collect()
}

/// A rate-limit row's ratio, or where it was stopped.
fn ratio_series(name: String, rows: &[&RateRow], x: &dyn Fn(&RateRow) -> f64) -> Series {
    let mut series = Series {
        name,
        ..Series::default()
    };
    for row in rows {
        place(&mut series, x(row), row.ratio.median, row.ratio_lower_bound());
    }
    series
}

/// The plots: file name and chart.
pub fn charts(report: &AllReport) -> Vec<(&'static str, Chart<'static>)> {
    let rows = &report.rate_limit.rows;
    let as_configured = Policy::ALL
        .iter()
        .flat_map(|&p| [(p, true), (p, false)])
        .map(|(policy, debt)| {
            let of: Vec<&RateRow> = rows
                .iter()
                .filter(|r| {
                    r.config.group == Group::AsConfigured
                        && r.config.policy == policy
                        && r.config.server == ServerShape::as_configured(debt)
                })
                .collect();
            ratio_series(
                format!("{} (debt {})", policy.label(), if debt { "on" } else { "off" }),
                &of,
                &|r| r.config.n as f64,
            )
        })
        .collect();
    let misconfigured = [false, true]
        .iter()
        .map(|&debt| {
            let of: Vec<&RateRow> = rows
                .iter()
                .filter(|r| r.config.group == Group::Misconfigured && r.config.server.debt == debt)
                .collect();
            ratio_series(
                format!("limiter, debt {}", if debt { "on" } else { "off" }),
                &of,
                &|r| r.config.server.rate_factor,
            )
        })
        .collect();
    let timeout = report.scale.timeout_seconds as f64;
    let failover_timeout = report.failover.timeout_seconds as f64;
    let failover_series = [(Signal::Kill, "SIGKILL"), (Signal::Term, "SIGTERM")]
        .iter()
        .map(|&(signal, name)| {
            let mut series = Series {
                name: name.to_owned(),
                ..Series::default()
            };
            let rounds = report.failover.rounds.iter().filter(|r| r.signal == signal);
            for (i, round) in rounds.enumerate() {
                place(
                    &mut series,
                    (i + 1) as f64,
                    round.takeover_seconds,
                    failover_timeout,
                );
            }
            series
        })
        .collect();
    vec![
        (
            "rate-limit.png",
            Chart {
                title: "Rate limit, server as configured: time to sync all / ideal (1 req/s, burst 5)",
                x_label: "resources on one token",
                y_label: "time / ideal",
                series: as_configured,
                target: Some(("1.05 x ideal", 1.05)),
            },
        ),
        (
            "rate-limit-misconfigured.png",
            Chart {
                title: "Rate limit, server rate unknown to the client: time / ideal",
                x_label: "server rate / configured rate",
                y_label: "time / ideal",
                series: misconfigured,
                target: Some(("1.15 x ideal", 1.15)),
            },
        ),
        (
            "scale-ready.png",
            Chart {
                title: "Start to all Ready (median of the runs)",
                x_label: "FerrVaultSecrets",
                y_label: "seconds",
                series: by_driver(report, &|r| r.ready_seconds, timeout),
                target: None,
            },
        ),
        (
            "scale-rss.png",
            Chart {
                title: "Peak RSS of the process during the sync (median of the runs)",
                x_label: "FerrVaultSecrets",
                y_label: "MiB",
                series: by_driver(report, &|r| r.peak_rss_mib, 0.0),
                target: Some(("target 64 MiB at 10,000", 64.0)),
            },
        ),
        (
            "scale-new-object-p99.png",
            Chart {
                title: "New object to Secret written, under the restart backlog (median p99)",
                x_label: "FerrVaultSecrets queued",
                y_label: "p99 milliseconds",
                series: by_driver(report, &|r| r.probe_p99_ms, timeout * 1000.0),
                target: Some(("target 250 ms", 250.0)),
            },
        ),
        (
            "failover.png",
            Chart {
                title: "Leader takeover per round (SIGKILL at a random phase)",
                x_label: "round",
                y_label: "seconds",
                series: failover_series,
                target: Some(("SIGKILL target", report.failover.kill_bound_seconds)),
            },
        ),
    ]
}
