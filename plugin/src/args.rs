//! The command line: kubectl's flags where kubectl has one (`--kubeconfig`, `--context`,
//! `-n/--namespace`, `-A/--all-namespaces`, `-o json|yaml`, `--request-timeout`), one subcommand
//! per task.
//!
//! # Guarantees
//! Every combination clap cannot parse (two selections at once, none, an unknown output format, a
//! bad duration) is a usage error: clap prints it with the usage and the process exits 2, before
//! any request is sent.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};
use ferrvault_operator::rules::parse_go_duration;

/// `kubectl ferrvault`: see, force, pause and explain the syncs of the FerrVault operator.
#[derive(Parser, Debug)]
#[command(name = "kubectl-ferrvault", bin_name = "kubectl ferrvault", version)]
pub struct Cli {
    /// Where the cluster is.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where the cluster is and how long a request may take (kubectl's flags, global).
#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace (default: the context's namespace, else `default`).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Deadline of each request to the API server (Go duration, e.g. `30s`).
    #[arg(long, global = true, default_value = "30s", value_parser = duration)]
    pub request_timeout: Duration,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// A table of FerrVaultSecrets: Ready reason, last sync, next due, refresh policy, suspended.
    Status(StatusArgs),
    /// Force a sync (annotation `ferrvault.com/force-sync`) and wait until each is synced or failed.
    Sync(SyncArgs),
    /// Pause syncing (`spec.suspend: true`): no FerrVault request, no write.
    Suspend(Selection),
    /// Resume syncing (removes `spec.suspend`); only what is due syncs.
    Resume(Selection),
    /// Why a FerrVaultSecret is not Ready, or why no sync is due and when the next one is.
    Explain(ExplainArgs),
    /// The target Secret a FerrVaultSecret would produce from local values, offline.
    Render(RenderArgs),
}

/// `-o`: machine-readable output instead of text.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// `status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Every namespace.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Output format (default: a table).
    #[arg(short = 'o', long, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
}

/// Which FerrVaultSecrets a command acts on: one by name, or all (of a namespace, or `-A`).
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["name", "all"]))]
pub struct Selection {
    /// The object: `NAME` (a FerrVaultSecret) or `TYPE/NAME` (`fvs/NAME`, `fvc/NAME` for a
    /// FerrVaultConnection).
    pub name: Option<String>,
    /// Every FerrVaultSecret of the namespace.
    #[arg(long)]
    pub all: bool,
    /// With `--all`: every namespace.
    #[arg(short = 'A', long, requires = "all")]
    pub all_namespaces: bool,
}

/// `sync`.
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["name", "all", "connection"]))]
pub struct SyncArgs {
    /// The FerrVaultSecret.
    pub name: Option<String>,
    /// Every FerrVaultSecret of the namespace.
    #[arg(long)]
    pub all: bool,
    /// Every FerrVaultSecret using this FerrVaultConnection.
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// With `--all` or `--connection`: every namespace.
    #[arg(short = 'A', long, conflicts_with = "name")]
    pub all_namespaces: bool,
    /// Return once the annotation is set, without waiting.
    #[arg(long)]
    pub no_wait: bool,
    /// How long to wait for every sync (Go duration).
    #[arg(long, default_value = "5m", value_parser = duration, conflicts_with = "no_wait")]
    pub timeout: Duration,
    /// Output format of the results (default: a line per object).
    #[arg(short = 'o', long, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
}

/// `explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The FerrVaultSecret.
    pub name: String,
    /// The operator's `--min-refresh-interval`, when it is not the default.
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub min_refresh_interval: Option<Duration>,
    /// Output format (default: text).
    #[arg(short = 'o', long, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
}

/// `render`.
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("spec").required(true).args(["name", "filename"]))]
pub struct RenderArgs {
    /// The FerrVaultSecret whose spec is read from the cluster (its spec only).
    pub name: Option<String>,
    /// Read the FerrVaultSecret from this manifest instead (YAML or JSON): fully offline.
    #[arg(short = 'f', long, value_name = "FILE")]
    pub filename: Option<PathBuf>,
    /// The values, as FerrVault would reveal them: a YAML or JSON map of key to value.
    #[arg(long, value_name = "FILE")]
    pub values: PathBuf,
    /// Output format of the Secret (default: YAML).
    #[arg(short = 'o', long, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
}

/// A Go duration flag (`30s`, `1h30m`), read by the operator's own parser.
fn duration(value: &str) -> Result<Duration, String> {
    parse_go_duration(value).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_should_be_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn two_selections_or_none_should_be_usage_errors() {
        for argv in [
            &["kubectl-ferrvault", "sync", "app", "--all"][..],
            &["kubectl-ferrvault", "sync"],
            &["kubectl-ferrvault", "sync", "--all", "--connection", "c"],
            &["kubectl-ferrvault", "suspend"],
            &["kubectl-ferrvault", "render", "app"],
            &["kubectl-ferrvault", "status", "-o", "xml"],
            &["kubectl-ferrvault", "sync", "app", "--timeout", "soon"],
        ] {
            let error = Cli::try_parse_from(argv).expect_err(&format!("{argv:?} is refused"));
            assert_eq!(error.exit_code(), 2, "{argv:?}");
        }
    }
}
