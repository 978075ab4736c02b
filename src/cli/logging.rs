//! Logging for `run`: `tracing` to stderr as JSON or text, filtered by `--log-level`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use super::args::LogFormat;

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// `--log-level` is not a level or a list of filter directives.
    #[error("invalid --log-level {value:?}: {source}")]
    Level {
        /// The value given.
        value: String,
        /// The parser's complaint.
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    /// A global subscriber was already installed (a second `init` in one process).
    #[error("logging was already initialised")]
    AlreadyInitialised,
}

/// The filter for `--log-level`: a bare level (`info`) or `tracing` directives.
///
/// # Errors
/// [`LoggingError::Level`] for text that is neither.
pub fn filter(level: &str) -> Result<EnvFilter, LoggingError> {
    EnvFilter::builder()
        .parse(level)
        .map_err(|source| LoggingError::Level {
            value: level.to_owned(),
            source,
        })
}

/// Installs the global subscriber, once per process.
///
/// # Errors
/// A bad `level`, or a subscriber already installed.
pub fn init(level: &str, format: LogFormat) -> Result<(), LoggingError> {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter(level)?);
    let installed = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
    };
    installed.map_err(|_| LoggingError::AlreadyInitialised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_directives_should_parse_and_nonsense_should_not() {
        filter("info").expect("a level");
        filter("debug,kube=warn").expect("directives");
        let error = filter("loud=!!").expect_err("nonsense");
        assert!(error.to_string().contains("--log-level"), "{error}");
    }
}
