//! `kubectl-ferrvault`: the FerrVault operator's kubectl plugin, for people (issue 36 point 8).
//! `kubectl ferrvault …` finds it on `PATH`, as cert-manager's `cmctl` and the `flux` CLI are to
//! their operators. It is not part of the operator image.
//!
//! # Layout
//! - [`args`]: the command line (clap), kubectl's flags (`--kubeconfig`, `--context`, `-n`, `-A`,
//!   `-o json|yaml`); [`error`]: what fails, and the exit code of each failure.
//! - [`cluster`]: the kube client and the deadline of every request; [`object`]: a FerrVaultSecret
//!   as read, with the issue 36 controls read raw from the object.
//! - [`verdict`]: whether a sync is due and when the next one is, by the operator's own rules
//!   (the only file calling them); [`inputs`]: what explain compares with `status.observedInputs`.
//! - The subcommands, one file each: [`status`], [`sync`] (+ [`wait`]), [`suspend`], [`explain`],
//!   [`render`]; [`output`]: tables, ages, JSON and YAML, and text made safe for a terminal.
//!
//! # Guarantees
//! - No secret value is ever printed, except by `render`, which prints what the user gave it;
//!   `render` reads no Secret at all, `explain` reads Secrets' metadata only (tests check the bytes
//!   the API server sent).
//! - Exit codes as kubectl's: 0 success, 1 failure (not found, not synced before the timeout), 2
//!   usage errors; errors go to stderr, results to stdout.
//! - Every request has a deadline (`--request-timeout`); every wait is bounded (`--timeout`).
#![deny(missing_docs)]

pub mod args;
pub mod cluster;
pub mod error;
pub mod explain;
pub mod inputs;
pub mod object;
pub mod output;
pub mod render;
pub mod status;
pub mod suspend;
pub mod sync;
pub mod verdict;
pub mod wait;

use args::{Cli, Command};
use error::PluginError;

/// Runs one command line; what it prints goes to stdout (results) and stderr (progress).
///
/// # Errors
/// Whatever the command failed with; [`PluginError::exit_code`] says how the process ends.
pub async fn run(cli: Cli) -> Result<(), PluginError> {
    let _ = rustls::crypto::ring::default_provider().install_default(); // first caller wins
    match cli.command {
        // Offline when the spec comes from a file: no client is built.
        Command::Render(render) => render::run(&cli.cluster, render).await,
        Command::Status(status) => status::run(&cluster::Cluster::connect(&cli.cluster).await?, status).await,
        Command::Sync(sync) => sync::run(&cluster::Cluster::connect(&cli.cluster).await?, sync).await,
        Command::Suspend(selection) => {
            suspend::run(&cluster::Cluster::connect(&cli.cluster).await?, selection, true).await
        }
        Command::Resume(selection) => {
            suspend::run(&cluster::Cluster::connect(&cli.cluster).await?, selection, false).await
        }
        Command::Explain(explain) => {
            explain::run(&cluster::Cluster::connect(&cli.cluster).await?, explain).await
        }
    }
}
