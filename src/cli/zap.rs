//! The values of controller-runtime's zap flags (`--zap-log-level`, `--zap-encoder`,
//! `--zap-stacktrace-level`, `--zap-time-encoding`) and Go's boolean flag values, parsed as the
//! Go operator parsed them, so its Deployment's command line starts this binary unchanged.
//!
//! Each parser is a clap value parser: a refused value exits 2 naming it, like Go's `flag`.

/// A zap level: a name, or a positive verbosity (`--zap-log-level=2` enables logr's `V(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZapLevel {
    /// `debug` (logr `V(1)`).
    Debug,
    /// `info` (logr `V(0)`).
    Info,
    /// `warn`.
    Warn,
    /// `error`.
    Error,
    /// `dpanic`, `panic` and `fatal`: levels our code never logs at, so nothing is logged.
    Panic,
    /// A positive integer: logr verbosity `V(n)`.
    Verbosity(u8),
}

impl ZapLevel {
    /// Parses a zap level name (any case) or a positive integer.
    ///
    /// # Errors
    /// Anything else, with zap's wording.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.to_ascii_lowercase().as_str() {
            "debug" => Ok(Self::Debug),
            "info" => Ok(Self::Info),
            "warn" | "warning" => Ok(Self::Warn),
            "error" => Ok(Self::Error),
            "dpanic" | "panic" | "fatal" => Ok(Self::Panic),
            other => match other.parse::<u8>() {
                Ok(verbosity) if verbosity > 0 => Ok(Self::Verbosity(verbosity)),
                _ => Err(format!(
                    "invalid log level {value:?}: use debug, info, warn, error, dpanic, panic, fatal or a \
                     positive integer"
                )),
            },
        }
    }

    /// The `tracing` filter with the same effect: verbosity 1 is debug, 2 and above trace.
    pub fn tracing_filter(self) -> &'static str {
        match self {
            Self::Debug | Self::Verbosity(1) => "debug",
            Self::Verbosity(_) => "trace",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
            Self::Panic => "off",
        }
    }
}

/// `--zap-encoder`: `json` or `console` (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZapEncoder {
    /// One JSON object per line.
    Json,
    /// Human-readable lines (our `--log-format text`).
    Console,
}

impl ZapEncoder {
    /// Parses `json` or `console`.
    ///
    /// # Errors
    /// Anything else, naming the value.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.to_ascii_lowercase().as_str() {
            "json" => Ok(Self::Json),
            "console" => Ok(Self::Console),
            _ => Err(format!("invalid encoder value {value:?}: use json or console")),
        }
    }
}

/// `--zap-time-encoding`: how `ts` is written in JSON lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeEncoding {
    /// Seconds since the epoch as a JSON number with a fraction (`1717171717.123456`).
    Epoch,
    /// Milliseconds since the epoch as a JSON number with a fraction.
    Millis,
    /// Nanoseconds since the epoch as a JSON integer.
    Nanos,
    /// `2006-01-02T15:04:05.000Z0700`.
    Iso8601,
    /// `2006-01-02T15:04:05Z07:00`: controller-runtime's default.
    #[default]
    Rfc3339,
    /// `2006-01-02T15:04:05.999999999Z07:00`.
    Rfc3339Nano,
}

impl TimeEncoding {
    /// Parses zap's names (any case); `nano` is accepted too, as controller-runtime's help text
    /// spells it.
    ///
    /// # Errors
    /// Anything else, naming the value.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.to_ascii_lowercase().as_str() {
            "epoch" => Ok(Self::Epoch),
            "millis" => Ok(Self::Millis),
            "nano" | "nanos" => Ok(Self::Nanos),
            "iso8601" => Ok(Self::Iso8601),
            "rfc3339" => Ok(Self::Rfc3339),
            "rfc3339nano" => Ok(Self::Rfc3339Nano),
            _ => Err(format!(
                "invalid time-encoding value {value:?}: use epoch, millis, nanos, iso8601, rfc3339 or \
                 rfc3339nano"
            )),
        }
    }
}

/// A Go boolean flag value (`strconv.ParseBool`: `1 t T TRUE true True 0 f F FALSE false False`),
/// plus `yes`/`no`/`on`/`off` so `FERRVAULT_*` variables set for clap's flags keep working.
///
/// # Errors
/// Anything else, naming the value.
pub(crate) fn go_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        other => match other.to_ascii_lowercase().as_str() {
            "yes" | "y" | "on" => Ok(true),
            "no" | "n" | "off" | "" => Ok(false),
            _ => Err(format!("invalid boolean value {value:?}: use true or false")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zap_level_names_and_verbosities_should_map_to_tracing_filters() {
        for (value, filter) in [
            ("debug", "debug"),
            ("INFO", "info"),
            ("warn", "warn"),
            ("error", "error"),
            ("dpanic", "off"),
            ("panic", "off"),
            ("fatal", "off"),
            ("1", "debug"),
            ("2", "trace"),
            ("10", "trace"),
        ] {
            assert_eq!(
                ZapLevel::parse(value).expect(value).tracing_filter(),
                filter,
                "{value}"
            );
        }
        for value in ["0", "-1", "loud", ""] {
            let error = ZapLevel::parse(value).expect_err(value);
            assert!(error.contains(&format!("{value:?}")), "{error}");
        }
    }

    #[test]
    fn encoders_and_time_encodings_should_parse_in_any_case_and_refuse_the_rest() {
        assert_eq!(ZapEncoder::parse("JSON"), Ok(ZapEncoder::Json));
        assert_eq!(ZapEncoder::parse("console"), Ok(ZapEncoder::Console));
        ZapEncoder::parse("logfmt").expect_err("not a zap encoder");
        for (value, encoding) in [
            ("epoch", TimeEncoding::Epoch),
            ("millis", TimeEncoding::Millis),
            ("nanos", TimeEncoding::Nanos),
            ("nano", TimeEncoding::Nanos),
            ("ISO8601", TimeEncoding::Iso8601),
            ("rfc3339", TimeEncoding::Rfc3339),
            ("rfc3339nano", TimeEncoding::Rfc3339Nano),
        ] {
            assert_eq!(TimeEncoding::parse(value), Ok(encoding), "{value}");
        }
        TimeEncoding::parse("unix").expect_err("not a zap time encoding");
    }

    #[test]
    fn go_booleans_should_parse_like_strconv_parse_bool() {
        for value in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(go_bool(value), Ok(true), "{value}");
        }
        for value in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(go_bool(value), Ok(false), "{value}");
        }
        go_bool("maybe").expect_err("not a boolean");
    }
}
