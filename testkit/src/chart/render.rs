//! Rendering the chart with the real `helm template` and reading the manifests back as typed objects.

use serde::{Deserialize, de::DeserializeOwned};
use serde_json::Value;

use super::tools::{describe, run_tool};

/// Release name used by every rendering.
pub const RELEASE: &str = "fv";
/// Release namespace used by every rendering.
pub const NAMESPACE: &str = "ferrvault-system";
/// Chart directory, relative to the repository root.
pub const CHART: &str = "charts/ferrvault-operator";
/// Kubernetes versions every rendering is validated against.
pub const KUBE_VERSIONS: [&str; 2] = ["1.33.0", "1.35.0"];

/// The chart's manifests for one set of `--set` overrides.
pub struct Rendering {
    /// The raw multi-document YAML, as `kubectl apply` or a validator would read it.
    pub yaml: String,
    /// Every non-empty document, in order.
    pub objects: Vec<Value>,
}

impl Rendering {
    /// Renders the chart for Kubernetes `1.35.0` with `sets` (`key=value` as for `helm --set`).
    ///
    /// # Panics
    /// When helm fails, with its output.
    pub fn new(sets: &[&str]) -> Self {
        Self::for_kube(sets, "1.35.0")
    }

    /// Renders the chart for `kube_version`.
    pub fn for_kube(sets: &[&str], kube_version: &str) -> Self {
        Self::parse(helm_template(sets, kube_version).unwrap_or_else(|error| panic!("{error}")))
    }

    /// Renders the chart with a values file (relative to the repository root) and `sets`.
    pub fn with_values_file(file: &str, sets: &[&str]) -> Self {
        let mut args = vec!["--values", file];
        for set in sets {
            args.extend(["--set", set]);
        }
        Self::parse(helm_template_args(&args, "1.35.0").unwrap_or_else(|error| panic!("{error}")))
    }

    fn parse(yaml: String) -> Self {
        let objects = serde_norway::Deserializer::from_str(&yaml)
            .map(|document| Value::deserialize(document).expect("helm rendered invalid YAML"))
            .filter(|object| !object.is_null())
            .collect();
        Self { yaml, objects }
    }

    /// Every object of `kind`.
    pub fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|object| object["kind"] == kind)
            .collect()
    }

    /// Names of the objects of `kind`, sorted.
    pub fn names_of(&self, kind: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .of_kind(kind)
            .iter()
            .map(|object| object["metadata"]["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The single object of `kind`, converted to the typed `T`.
    ///
    /// # Panics
    /// When there is not exactly one, or it does not fit `T`.
    pub fn single<T: DeserializeOwned>(&self, kind: &str) -> T {
        let objects = self.of_kind(kind);
        assert_eq!(
            objects.len(),
            1,
            "expected exactly one {kind}, got {}",
            objects.len()
        );
        serde_json::from_value(objects[0].clone())
            .unwrap_or_else(|error| panic!("{kind} does not fit its type: {error}"))
    }
}

/// Runs `helm template` for the chart; `Err` carries helm's output when rendering fails.
pub fn helm_template(sets: &[&str], kube_version: &str) -> Result<String, String> {
    let mut args = Vec::new();
    for set in sets {
        args.extend(["--set", set]);
    }
    helm_template_args(&args, kube_version)
}

/// `helm template` of the chart with `extra` arguments (`--set`, `--values`).
fn helm_template_args(extra: &[&str], kube_version: &str) -> Result<String, String> {
    let mut args = vec![
        "template",
        RELEASE,
        CHART,
        "--namespace",
        NAMESPACE,
        "--kube-version",
        kube_version,
    ];
    args.extend_from_slice(extra);
    let output = run_tool("helm", &args, None);
    if output.status.success() {
        Ok(String::from_utf8(output.stdout).expect("helm output is UTF-8"))
    } else {
        Err(format!("helm {}: {}", args.join(" "), describe(&output)))
    }
}

/// Runs `helm lint --strict` on the chart with `sets`, returning helm's output when it fails.
pub fn helm_lint_strict(sets: &[&str]) -> Result<(), String> {
    let mut args = vec!["lint", "--strict", CHART, "--namespace", NAMESPACE];
    for set in sets {
        args.extend(["--set", set]);
    }
    let output = run_tool("helm", &args, None);
    if output.status.success() {
        Ok(())
    } else {
        Err(describe(&output))
    }
}

/// Validates `yaml` with `kubernetes-validate --strict` against `kube_version`; custom resources the
/// validator has no schema for (ServiceMonitor, PrometheusRule) are skipped with a warning.
pub fn validate_strict(yaml: &str, kube_version: &str) -> Result<(), String> {
    let output = run_tool(
        "kubernetes-validate",
        &["--strict", "--quiet", "-k", kube_version, "-"],
        Some(yaml),
    );
    if output.status.success() {
        Ok(())
    } else {
        Err(describe(&output))
    }
}
