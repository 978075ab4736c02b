//! The drivers of the same reconcile logic that the benchmarks launch as processes: this
//! operator (`ferrvault-operator run`, the actor runtime) and two `kube_runtime::Controller`
//! set-ups (`bench plain-controller-worker`): the one a competent kube-rs user writes and the
//! naive one (see [`super::plain_controller`]); and for `bench scale` the floor
//! (`bench floor-worker`, [`super::floor`]): the operator's writes alone, with no reconcile logic.

use std::{net::SocketAddr, path::Path, time::Duration};

use serde::{Deserialize, Serialize};

use super::{
    child::{self, Spawned},
    metrics_text,
    plain_controller::{RECONCILES_PREFIX, STARTED_LINE, Style, UNLIMITED_BURST, UNLIMITED_RATE},
};
use ferrvault_operator::SECRET_CONTROLLER;

/// How long a child may take to start.
const STARTUP: Duration = Duration::from_secs(30);
/// Logged by `run` once its servers listen and the runtime starts.
const OPERATOR_STARTED_LINE: &str = "starting operator";
/// Logged by `run` with the addresses it bound.
const OPERATOR_LISTENING_LINE: &str = "http servers listening";

/// Which driver runs the reconcile logic.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Driver {
    /// `ferrvault-operator run`.
    Operator,
    /// A `kube_runtime::Controller` with the early exit and pruned store of a competent user.
    CompetentController,
    /// A `kube_runtime::Controller` that reconciles every trigger, store unpruned.
    NaiveController,
    /// The physical floor: only the operator's Kubernetes writes (issue 39).
    Floor,
}

impl Driver {
    /// All three, in table order.
    pub const ALL: [Driver; 3] = [
        Driver::Operator,
        Driver::CompetentController,
        Driver::NaiveController,
    ];

    /// What `bench scale` measures by default: the three and the floor.
    pub const SCALE: [Driver; 4] = [
        Driver::Operator,
        Driver::CompetentController,
        Driver::NaiveController,
        Driver::Floor,
    ];

    /// Table label.
    pub fn label(self) -> &'static str {
        match self {
            Driver::Operator => "ferrvault-operator",
            Driver::CompetentController => "competent Controller",
            Driver::NaiveController => "naive Controller",
            Driver::Floor => "floor",
        }
    }

    /// The flag value that selects it (`--drivers`).
    pub fn flag(self) -> &'static str {
        match self {
            Driver::Operator => "operator",
            Driver::CompetentController => "competent-controller",
            Driver::NaiveController => "naive-controller",
            Driver::Floor => "floor",
        }
    }

    fn style(self) -> Option<Style> {
        match self {
            Driver::Operator | Driver::Floor => None,
            Driver::CompetentController => Some(Style::Competent),
            Driver::NaiveController => Some(Style::Naive),
        }
    }

    /// Command-line arguments for a child reconciling the cluster of `kubeconfig`.
    pub fn args(self, kubeconfig: &Path, options: &LaunchOptions) -> Vec<String> {
        let kubeconfig = kubeconfig.display().to_string();
        if self == Driver::Floor {
            return vec![
                "bench".into(),
                "floor-worker".into(),
                "--kubeconfig".into(),
                kubeconfig,
                "--concurrency".into(),
                options.concurrency.to_string(),
            ];
        }
        let budget = [
            format!("--ferrvault-rate={}", options.ferrvault_rate),
            format!("--ferrvault-burst={}", options.ferrvault_burst),
        ];
        let Some(style) = self.style() else {
            let mut args: Vec<String> = [
                "run",
                "--kubeconfig",
                &kubeconfig,
                "--metrics-bind-address=127.0.0.1:0",
                "--health-probe-bind-address=127.0.0.1:0",
                "--admin-bind-address=",
                "--log-format=json",
                "--log-level=warn,ferrvault_operator::cli=info",
                // The FerrVault simulator of the benchmarks speaks plain http, on loopback
                // (refused by default).
                "--allow-insecure-http",
                // Throughput is measured as published before issue 34: no refresh floor (the
                // economy rows refresh every `--wave-refresh-seconds`) and no write budget.
                "--min-refresh-interval=0s",
                "--namespace-write-qps=0",
                "--ferrvault-allowed-cidrs=127.0.0.1/32",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
            args.extend(budget);
            args.push(format!("--max-concurrent-reconciles={}", options.concurrency));
            args.extend(options.operator_flags.iter().cloned());
            return args;
        };
        let mut args: Vec<String> = vec![
            "bench".into(),
            "plain-controller-worker".into(),
            "--kubeconfig".into(),
            kubeconfig,
            "--style".into(),
            style.flag().into(),
        ];
        args.extend(budget);
        args.extend([
            "--concurrency".into(),
            options.concurrency.min(usize::from(u16::MAX)).to_string(),
        ]);
        args
    }

    /// Launches the driver and waits until it reports that it started.
    ///
    /// # Errors
    /// It could not be started or did not report in time (with its output's tail).
    pub async fn launch(
        self,
        operator: &Path,
        kubeconfig: &Path,
        options: &LaunchOptions,
    ) -> Result<DriverProcess, String> {
        let mut env = options.env.clone();
        env.push(("RUST_LOG".to_owned(), "warn".to_owned()));
        let env: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let program = match self {
            Driver::Operator => operator.to_owned(),
            Driver::CompetentController | Driver::NaiveController | Driver::Floor => {
                child::this_executable()?
            }
        };
        let mut process = Spawned::start(&program, &self.args(kubeconfig, options), &env)?;
        let fail = |e: String| format!("{}: {e}", self.label());
        let listening = match self {
            Driver::Operator => {
                let line = process
                    .wait_for_line(OPERATOR_LISTENING_LINE, STARTUP)
                    .await
                    .map_err(fail)?;
                process
                    .wait_for_line(OPERATOR_STARTED_LINE, STARTUP)
                    .await
                    .map_err(fail)?;
                let address = |field: &str| {
                    logged_address(&line, field).ok_or_else(|| fail(format!("no {field} address in {line}")))
                };
                Some((address("metrics")?, address("probes")?))
            }
            Driver::CompetentController | Driver::NaiveController | Driver::Floor => {
                process.wait_for_line(STARTED_LINE, STARTUP).await.map_err(fail)?;
                None
            }
        };
        Ok(DriverProcess {
            driver: self,
            process,
            metrics: listening.map(|l| l.0),
            probes: listening.map(|l| l.1),
        })
    }
}

/// The address in `field` (`metrics`, `probes`) of the operator's `http servers listening` JSON
/// log line.
pub fn logged_address(line: &str, field: &str) -> Option<SocketAddr> {
    let json: serde_json::Value = serde_json::from_str(line).ok()?;
    json[field].as_str()?.parse().ok()
}

/// What every driver is launched with.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// Reconciles at once (the same for every driver).
    pub concurrency: usize,
    /// FerrVault requests per second per credential the client allows itself.
    pub ferrvault_rate: f64,
    /// FerrVault burst per credential.
    pub ferrvault_burst: u32,
    /// Extra `run` flags (operator only: leader election, …).
    pub operator_flags: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
}

impl LaunchOptions {
    /// `concurrency` reconciles at once, FerrVault effectively unlimited.
    pub fn unlimited(concurrency: usize) -> Self {
        Self {
            concurrency,
            ferrvault_rate: UNLIMITED_RATE,
            ferrvault_burst: UNLIMITED_BURST,
            operator_flags: Vec::new(),
            env: Vec::new(),
        }
    }
}

/// A launched driver.
pub struct DriverProcess {
    /// Which driver.
    pub driver: Driver,
    /// The child process.
    pub process: Spawned,
    /// The operator's `/metrics` address (the Controller workers have none).
    metrics: Option<SocketAddr>,
    /// The operator's `/healthz` address.
    probes: Option<SocketAddr>,
}

impl DriverProcess {
    /// The operator's `/metrics` address.
    pub fn metrics(&self) -> Option<SocketAddr> {
        self.metrics
    }

    /// The operator's `/healthz` and `/readyz` address.
    pub fn probes(&self) -> Option<SocketAddr> {
        self.probes
    }

    /// FerrVaultSecret reconciles so far: the operator's `controller_runtime_reconcile_total`
    /// for its FerrVaultSecret controller, or the last count a Controller worker printed.
    pub async fn reconciles(&self) -> Option<u64> {
        match self.metrics {
            Some(addr) => {
                let text = metrics_text::scrape(addr).await?;
                let total = metrics_text::sum(
                    &text,
                    "controller_runtime_reconcile_total",
                    &[("controller", SECRET_CONTROLLER)],
                );
                Some(total as u64)
            }
            None => self
                .process
                .last_line_containing(RECONCILES_PREFIX)
                .and_then(|line| reconciles_in(&line)),
        }
    }
}

/// The count in a worker's `reconciles=N` line.
pub fn reconciles_in(line: &str) -> Option<u64> {
    let at = line.find(RECONCILES_PREFIX)? + RECONCILES_PREFIX.len();
    line[at..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_should_get_the_same_budget_and_concurrency() {
        let options = LaunchOptions {
            ferrvault_rate: 2.5,
            ..LaunchOptions::unlimited(8)
        };
        for driver in Driver::ALL {
            let args = driver.args(Path::new("/k"), &options);
            assert!(args.contains(&"--ferrvault-rate=2.5".to_owned()), "{args:?}");
            assert!(args.iter().any(|a| a.starts_with("--ferrvault-burst=")));
            let concurrency = args.iter().any(|a| a == "--max-concurrent-reconciles=8")
                || args.windows(2).any(|w| w[0] == "--concurrency" && w[1] == "8");
            assert!(concurrency, "{args:?}");
        }
        let competent = Driver::CompetentController.args(Path::new("/k"), &options);
        assert!(
            competent
                .windows(2)
                .any(|w| w[0] == "--style" && w[1] == "competent")
        );
    }

    #[test]
    fn the_operator_metrics_address_and_worker_counts_should_parse() {
        let line = r#"{"level":"INFO","metrics":"127.0.0.1:4242","probes":"127.0.0.1:1","fields":{}}"#;
        assert_eq!(
            logged_address(line, "metrics"),
            Some("127.0.0.1:4242".parse().unwrap())
        );
        assert_eq!(
            logged_address(line, "probes"),
            Some("127.0.0.1:1".parse().unwrap())
        );
        assert_eq!(logged_address("not json", "metrics"), None);
        assert_eq!(reconciles_in("reconciles=1234"), Some(1234));
        assert_eq!(reconciles_in("noise"), None);
    }
}
