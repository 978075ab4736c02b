//! What fails, how it reads on stderr, and the exit code of each failure.
//!
//! # Guarantees
//! - Messages read as kubectl's (`Error from server (NotFound): …`, `error: …`) and name objects,
//!   fields, files and reasons: never a secret value (the API server's messages name objects; a
//!   local file's problems are described, never quoted).
//! - [`PluginError::exit_code`] is 2 for usage errors and 1 for everything else.

use std::{path::PathBuf, time::Duration};

use ferrvault_operator::rules::format_go_duration;

/// A failure of a command.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The command line asks for something that does not exist (caught after clap's checks).
    #[error("error: {0}\nSee 'kubectl ferrvault --help' for usage.")]
    Usage(String),
    /// No usable kubeconfig (or in-cluster configuration).
    #[error("error: loading the kubeconfig: {0}")]
    Config(String),
    /// The API server refused or failed a request.
    #[error("Error from server ({reason}): {message}")]
    Server {
        /// The Status `reason` (`NotFound`, `Forbidden` …), or the HTTP code when it has none.
        reason: String,
        /// The Status `message`.
        message: String,
    },
    /// A request failed before the API server answered (connection refused, TLS, …).
    #[error("error: {action}: {source}")]
    Request {
        /// What was being done (`listing ferrvaultsecrets in default`).
        action: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
    /// A request got no answer within `--request-timeout`.
    #[error("error: {action}: no answer within {}", format_go_duration(*.after))]
    Timeout {
        /// What was being done.
        action: String,
        /// The deadline.
        after: Duration,
    },
    /// A local file cannot be used.
    #[error("error: {}: {problem}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (never its content).
        problem: String,
    },
    /// A FerrVaultSecret cannot be used as its type says (stored past the CRD schema) or the
    /// cluster's CRD lacks a field the command needs.
    #[error("error: {0}")]
    Object(String),
    /// The command ran, and did not achieve what was asked (its results were printed first).
    #[error("error: {0}")]
    Unfinished(String),
}

impl PluginError {
    /// The process's exit code: 2 for a usage error, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Config(_)
            | Self::Server { .. }
            | Self::Request { .. }
            | Self::Timeout { .. }
            | Self::File { .. }
            | Self::Object(_)
            | Self::Unfinished(_) => 1,
        }
    }

    /// The error of a failed request while doing `action`.
    pub fn from_kube(action: String, error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) => Self::Server {
                reason: if status.reason.is_empty() {
                    status.code.to_string()
                } else {
                    status.reason.clone()
                },
                message: status.message.clone(),
            },
            source => Self::Request { action, source },
        }
    }

    /// Whether the API server answered 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Server { reason, .. } if reason == "NotFound" || reason == "404")
    }

    /// Whether the API server answered 403 Forbidden.
    pub fn is_forbidden(&self) -> bool {
        matches!(self, Self::Server { reason, .. } if reason == "Forbidden" || reason == "403")
    }
}
