//! [`RunError`]: why `run` stopped with an error, and the exit code each cause maps to.

use controller_actors::RuntimeError;

use crate::{
    admin::server::ServeError,
    cli::{logging, settings::ConfigError},
    reconcile::KeyError,
};

/// Why `run` stopped with an error; each maps to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A flag was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Logging could not be set up.
    #[error(transparent)]
    Logging(#[from] logging::LoggingError),
    /// No Kubernetes configuration could be loaded.
    #[error("cannot load the Kubernetes configuration: {0}")]
    KubeConfig(String),
    /// The HTTP servers could not start.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// The runtime refused its configuration or stopped abnormally.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The process runtime or signal handlers could not be set up.
    #[error("cannot start: {0}")]
    Process(#[source] std::io::Error),
    /// The content-hash key could not be read or created.
    #[error(transparent)]
    ContentHashKey(#[from] KeyError),
}

impl RunError {
    /// The process exit code: 2 for refused configuration (like a usage error), the runtime's
    /// own code for runtime failures, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Config(_) | RunError::Logging(_) => 2,
            RunError::Runtime(error) => error.exit_code(),
            RunError::KubeConfig(_)
            | RunError::Serve(_)
            | RunError::Process(_)
            | RunError::ContentHashKey(_) => 1,
        }
    }
}
