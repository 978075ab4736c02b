//! The simulator's error type.

use std::io;

/// Why the simulator could not start, load its configuration or answer a wait.
///
/// # Guarantees
/// No variant carries a token or a secret value: configuration errors name the offending field and,
/// for tokens, only their fingerprint or label.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Binding the listening socket failed (port in use, permission denied).
    #[error("bind the FerrVault simulator to {addr}")]
    Bind {
        /// The address that could not be bound.
        addr: std::net::SocketAddr,
        /// The socket error.
        #[source]
        source: io::Error,
    },
    /// The configuration file could not be read.
    #[error("read the simulator configuration {path}")]
    ReadConfig {
        /// The file that could not be read.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The configuration text is not valid YAML/JSON of the expected shape.
    #[error("parse the simulator configuration")]
    ParseConfig(#[source] serde_norway::Error),
    /// The configuration parsed but is inconsistent; the message names the field.
    #[error("invalid simulator configuration: {0}")]
    InvalidConfig(String),
    /// A bounded wait on the simulator's counters ran out.
    #[error("timed out after {waited_ms} ms waiting for {what}")]
    WaitTimedOut {
        /// What was awaited, in words.
        what: String,
        /// How long the caller waited.
        waited_ms: u128,
    },
}
