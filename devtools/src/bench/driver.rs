//! The two drivers of the same reconcile logic that the benchmarks launch as processes: this
//! operator (`ferrvault-operator run`, the actor runtime) and a plain `kube_runtime::Controller`
//! (`bench plain-controller-worker`).

use std::{path::Path, time::Duration};

use serde::Serialize;

use super::{
    child::{self, Spawned},
    plain_controller::{STARTED_LINE, UNLIMITED_BURST, UNLIMITED_RATE},
};

/// How long a child may take to start.
const STARTUP: Duration = Duration::from_secs(30);
/// Logged by `run` once its servers listen and the runtime starts.
const OPERATOR_STARTED_LINE: &str = "starting operator";

/// Which driver runs the reconcile logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Driver {
    /// `ferrvault-operator run`.
    Operator,
    /// A plain `kube_runtime::Controller` around the same reconciler.
    PlainController,
}

impl Driver {
    /// Both, in table order.
    pub const BOTH: [Driver; 2] = [Driver::Operator, Driver::PlainController];

    /// Table label.
    pub fn label(self) -> &'static str {
        match self {
            Driver::Operator => "ferrvault-operator",
            Driver::PlainController => "plain Controller",
        }
    }

    /// Command-line arguments for a child reconciling the cluster of `kubeconfig` with
    /// `concurrency` reconciles at once, plus `extra` (operator only).
    pub fn args(self, kubeconfig: &Path, concurrency: usize, extra: &[String]) -> Vec<String> {
        let kubeconfig = kubeconfig.display().to_string();
        match self {
            Driver::Operator => {
                let mut args: Vec<String> = [
                    "run",
                    "--kubeconfig",
                    &kubeconfig,
                    "--metrics-bind-address=127.0.0.1:0",
                    "--health-probe-bind-address=127.0.0.1:0",
                    "--admin-bind-address=",
                    "--log-format=json",
                    "--log-level=warn,ferrvault_operator::cli=info",
                    // The FerrVault simulator of the benchmarks speaks plain http.
                    "--allow-insecure-http",
                ]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
                args.extend([
                    format!("--ferrvault-rate={UNLIMITED_RATE}"),
                    format!("--ferrvault-burst={UNLIMITED_BURST}"),
                    format!("--max-concurrent-reconciles={concurrency}"),
                ]);
                args.extend(extra.iter().cloned());
                args
            }
            Driver::PlainController => vec![
                "bench".into(),
                "plain-controller-worker".into(),
                "--kubeconfig".into(),
                kubeconfig,
                "--concurrency".into(),
                concurrency.min(usize::from(u16::MAX)).to_string(),
            ],
        }
    }

    /// Launches the driver and waits until it reports that it started.
    ///
    /// # Errors
    /// It could not be started or did not report in time (with its output's tail).
    pub async fn launch(
        self,
        operator: &Path,
        kubeconfig: &Path,
        concurrency: usize,
        extra: &[String],
        env: &[(&str, String)],
    ) -> Result<Spawned, String> {
        let mut env = env.to_vec();
        env.push(("RUST_LOG", "warn".to_owned()));
        let program = match self {
            Driver::Operator => operator.to_owned(),
            Driver::PlainController => child::this_executable()?,
        };
        let mut child = Spawned::start(&program, &self.args(kubeconfig, concurrency, extra), &env)?;
        let line = match self {
            Driver::Operator => OPERATOR_STARTED_LINE,
            Driver::PlainController => STARTED_LINE,
        };
        child
            .wait_for_line(line, STARTUP)
            .await
            .map_err(|e| format!("{}: {e}", self.label()))?;
        Ok(child)
    }
}

/// The `p`-th percentile (0–100, nearest rank) of `values`; `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_should_use_the_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(50.0));
        assert_eq!(percentile(&values, 99.0), Some(99.0));
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 100.0), Some(3.0));
        assert_eq!(percentile(&[7.0], 1.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn the_operator_should_get_the_same_unlimited_budget_and_concurrency() {
        let args = Driver::Operator.args(Path::new("/k"), 8, &[]);
        assert!(args.contains(&"--max-concurrent-reconciles=8".to_owned()));
        assert!(args.iter().any(|a| a.starts_with("--ferrvault-rate=")));
        assert!(args.contains(&"--allow-insecure-http".to_owned()));
        let plain = Driver::PlainController.args(Path::new("/k"), 8, &[]);
        assert_eq!(
            plain[plain.len() - 2..],
            ["--concurrency".to_owned(), "8".to_owned()]
        );
    }
}
