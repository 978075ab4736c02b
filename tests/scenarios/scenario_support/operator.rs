//! One real `ferrvault-operator run` process against a [`Cluster`].

use std::{path::PathBuf, time::Duration};

use super::{
    cluster::Cluster,
    leaks::Evidence,
    process::{Addresses, Spawned, http, run_command},
    strict_json::zap_log_lines,
};

/// Lease timings small enough for a test and valid for client-go's rules.
pub const LEASE_DURATION: Duration = Duration::from_secs(4);
pub const RENEW_DEADLINE: Duration = Duration::from_secs(3);
pub const RETRY_PERIOD: Duration = Duration::from_secs(1);

/// Flags for the stall scenarios: a 1s FerrVault attempt lowers the reconcile-timeout floor to
/// 3.65s, so a 5s stall threshold is accepted.
pub const SHORT_TIMEOUTS: [&str; 3] = [
    "--ferrvault-attempt-timeout=1s",
    "--reconcile-timeout=4s",
    "--stall-threshold=5s",
];

/// `--leader-elect` with [`LEASE_DURATION`], [`RENEW_DEADLINE`] and [`RETRY_PERIOD`].
pub const LEADER_ELECT: [&str; 4] = [
    "--leader-elect",
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=1s",
];

/// A running operator process; its output is collected and written to a log file when it is
/// collected as evidence or dropped.
pub struct OperatorProcess {
    /// Its `POD_NAME` and its identity in the simulator's audit.
    pub name: String,
    pub at: Addresses,
    spawned: Spawned,
    log_file: PathBuf,
    scrapes: Evidence,
}

impl OperatorProcess {
    /// Starts `ferrvault-operator run` as `name` (kubeconfig audited as `name`), every server on
    /// an ephemeral 127.0.0.1 port, JSON logs at debug for the operator, plus `extra` flags
    /// (the last value of a flag wins).
    pub fn launch(cluster: &Cluster, scenario: &str, name: &str, extra: &[&str]) -> OperatorProcess {
        let mut command = run_command(
            cluster.kubeconfig(name),
            &[
                "--log-level=info,ferrvault_operator=debug,controller_actors=debug",
                "--shutdown-grace-period=5s",
                // The FerrVault simulator speaks plain http, on loopback (refused by default).
                "--allow-insecure-http",
                // The scenarios refresh every few seconds to observe refreshes: below the
                // chart's 30s floor, so it is lowered here explicitly.
                "--min-refresh-interval=1s",
                "--ferrvault-allowed-cidrs=127.0.0.1/32",
            ],
        );
        command.args(extra).env("POD_NAME", name);
        let mut spawned = Spawned::start(command);
        let at = spawned.addresses();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("scenarios")
            .join(scenario);
        std::fs::create_dir_all(&dir).expect("log directory");
        OperatorProcess {
            name: name.to_owned(),
            at,
            spawned,
            log_file: dir.join(format!("{name}.log")),
            scrapes: Evidence::default(),
        }
    }

    /// `GET` on a probe path: `(status, body)`, `(0, error)` when the request fails.
    pub async fn probe(&self, path: &str) -> (u16, String) {
        get_lenient(&format!("http://{}{path}", self.at.probes)).await
    }

    /// `/healthz`.
    pub async fn healthz(&self) -> (u16, String) {
        self.probe("/healthz").await
    }

    /// Whether `/readyz` reports this replica as the leader.
    pub async fn is_leader(&self) -> bool {
        self.probe("/readyz?verbose")
            .await
            .1
            .contains("[+]role ok: leader")
    }

    /// Scrapes `/metrics`, `/debug/actors` and `/debug/queue`, keeping each for the leak scan;
    /// returns the metrics text.
    pub async fn scrape(&mut self) -> String {
        let admin = self.at.admin.expect("the admin server is always enabled here");
        let (_, metrics) = get_lenient(&format!("http://{}/metrics", self.at.metrics)).await;
        for path in ["/debug/actors", "/debug/queue", "/debug/actors?format=text"] {
            let (_, body) = get_lenient(&format!("http://{admin}{path}")).await;
            self.scrapes.add(format!("{} {path}", self.name), body);
        }
        self.scrapes
            .add(format!("{} /metrics", self.name), metrics.clone());
        metrics
    }

    /// The value of the first sample of `family` (name and labels prefix) in `/metrics`.
    pub async fn metric(&mut self, series: &str) -> Option<f64> {
        let text = self.scrape().await;
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
    }

    /// SIGTERM (graceful stop).
    pub fn sigterm(&self) {
        self.spawned.sigterm();
    }

    /// SIGKILL (a crash).
    pub fn kill9(&self) {
        self.spawned.sigkill();
    }

    /// Freezes the process (SIGSTOP), as a long GC pause or a frozen VM would.
    pub fn pause(&self) {
        self.spawned.sigstop();
    }

    /// Lets a paused process run again (SIGCONT).
    pub fn resume(&self) {
        self.spawned.sigcont();
    }

    /// Waits for the process to exit; returns its exit code (`None` when killed by a signal).
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        self.spawned.wait_exit(within).code()
    }

    pub fn running(&mut self) -> bool {
        self.spawned.running()
    }

    /// Everything the process printed so far.
    pub fn log(&self) -> String {
        self.spawned.output()
    }

    /// Its log (also written to its log file) and every scrape taken, for the leak scan.
    /// Asserts the log shows no panic and that every line is a zap-style JSON object with one
    /// value per key (what log pipelines built for the Go operator parse).
    pub fn evidence(mut self) -> Evidence {
        let log = self.write_log();
        assert!(
            !log.contains("panicked"),
            "{} panicked; log in {}",
            self.name,
            self.log_file.display()
        );
        if let Err(why) = zap_log_lines(&log) {
            panic!("{}: {why}; log in {}", self.name, self.log_file.display());
        }
        let mut evidence = std::mem::take(&mut self.scrapes);
        evidence.add(format!("{} log", self.name), log);
        evidence
    }

    fn write_log(&self) -> String {
        let log = self.spawned.output();
        let _ = std::fs::write(&self.log_file, &log); // best effort: the scan uses the string
        log
    }
}

impl Drop for OperatorProcess {
    fn drop(&mut self) {
        self.write_log(); // keeps the log of a failed scenario for whoever debugs it
    }
}

/// `GET url` → `(status, body)`, or `(0, error)` when the request fails.
pub async fn get_lenient(url: &str) -> (u16, String) {
    match http().get(url).send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        }
        Err(error) => (0, error.to_string()),
    }
}
