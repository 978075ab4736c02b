//! Logging for `run`: `tracing` to stderr, as zap-compatible JSON lines ([`zap_json`]) or
//! human-readable text ([`bounded_fields`]), filtered by `--log-level` or `--zap-log-level`.
//!
//! # Guarantees
//! - In either format, the message and every field value of a line are at most 1 KiB: a longer
//!   one is cut with a marker naming its length (issue 34 point 8), so no text a tenant writes
//!   or serves makes the operator's log grow with it.

mod bounded_fields;
#[cfg(test)]
mod captured;
mod zap_json;

use std::io::IsTerminal;

use tracing_subscriber::{EnvFilter, fmt::format::JsonFields};

pub(crate) use self::{bounded_fields::BoundedFields, zap_json::ZapJson};
use super::zap::TimeEncoding;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object per line with zap's keys (for log pipelines).
    Json,
    /// Human-readable lines.
    Text,
}

/// What logging needs, resolved from `--log-*` and `--zap-*` flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// A level or `tracing` filter directives (`info`, `debug,kube=info`).
    pub filter: String,
    /// Line format.
    pub format: LogFormat,
    /// How `ts` is written in JSON lines.
    pub time: TimeEncoding,
}

impl LogSettings {
    /// The given filter and format with controller-runtime's default time encoding.
    pub fn new(filter: impl Into<String>, format: LogFormat) -> Self {
        Self {
            filter: filter.into(),
            format,
            time: TimeEncoding::default(),
        }
    }
}

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
pub(crate) fn filter(level: &str) -> Result<EnvFilter, LoggingError> {
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
/// A bad filter, or a subscriber already installed.
pub fn init(settings: &LogSettings) -> Result<(), LoggingError> {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter(&settings.filter)?);
    let installed = match settings.format {
        LogFormat::Json => builder
            .fmt_fields(JsonFields::new())
            .event_format(ZapJson::new(settings.time))
            .try_init(),
        LogFormat::Text => builder
            .fmt_fields(BoundedFields)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
    };
    installed.map_err(|_| LoggingError::AlreadyInitialised)
}

#[cfg(test)]
mod tests {
    use tracing::{info, info_span};

    use super::{captured::Captured, *};

    #[test]
    fn levels_and_directives_should_parse_and_nonsense_should_not() {
        filter("info").expect("a level");
        filter("off").expect("zap's panic levels map to off");
        filter("debug,kube=warn").expect("directives");
        let error = filter("loud=!!").expect_err("nonsense");
        assert!(error.to_string().contains("--log-level"), "{error}");
    }

    #[test]
    fn a_text_line_should_cut_every_value_over_1_kib_and_keep_the_default_layout() {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .with_ansi(false)
            .without_time()
            .fmt_fields(BoundedFields)
            .finish();
        let huge = "h".repeat(300_000);
        tracing::subscriber::with_default(subscriber, || {
            let span = info_span!("reconcile", name = huge.as_str());
            let _entered = span.enter();
            info!(error = huge.as_str(), short = "kept", n = 3, "{huge}");
            info!(short = "kept", n = 3, "synced");
        });
        let text = captured.text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].len() < 8 * 1024, "one line of {} bytes", lines[0].len());
        // The message bare; the span's and the event's strings quoted, as the default writes them.
        assert_eq!(
            lines[0].matches("… [cut: 300000 bytes in all]").count(),
            1,
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[0].matches("… [cut: 300002 bytes in all]").count(),
            2,
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(r#"short="kept" n=3"#), "{}", lines[0]);
        assert!(
            lines[1].ends_with(r#"synced short="kept" n=3"#),
            "the default layout: {}",
            lines[1]
        );
    }
}
