//! Why a runtime did not run, or stopped abnormally, and the process exit code for each.

use std::time::Duration;

/// Why the runtime did not run or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// `build` refused the configuration.
    #[error("invalid runtime configuration: {0}")]
    InvalidConfig(String),
    /// The root supervisor did not start.
    #[error("the root supervisor could not start: {0}")]
    Start(String),
    /// A restart storm escalated (the process should exit non-zero so Kubernetes restarts it).
    #[error("restart storm escalated: {0}")]
    Escalated(String),
    /// The root supervisor itself failed.
    #[error("the root supervisor failed")]
    RootFailed,
    /// Shutdown did not complete in time; the tree was killed.
    #[error("shutdown did not finish within {0:?}")]
    ShutdownTimedOut(Duration),
}

impl RuntimeError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            RuntimeError::InvalidConfig(_) => 2,
            RuntimeError::Escalated(_) => 3,
            RuntimeError::Start(_) | RuntimeError::RootFailed | RuntimeError::ShutdownTimedOut(_) => 1,
        }
    }
}
