//! Go `time.Duration` syntax, for `spec.refreshInterval` and duration flags.
//!
//! # Guarantees
//! - [`parse_go_duration`] accepts exactly the language of the CRD's `refreshInterval` pattern
//!   (`api::secret::GO_DURATION_PATTERN`): Go's syntax without a sign, e.g. `1h30m`, `1.5h`,
//!   `300ms`, `2h45m30.5s`, `.5s`, `0s`, `0`; units `ns`, `us`, `µs` (U+00B5), `μs` (U+03BC), `ms`,
//!   `s`, `m`, `h`. A property test holds the pattern and the parser to the same language.
//! - Anything else, a sign, or more than Go's maximum (`i64::MAX` ns, about 292 years) is an
//!   error that names the problem: an invalid interval must surface as `Ready=False`
//!   (`InvalidRefreshInterval`), never as a silent fallback (reference §8 item 9).
//! - Fractions are exact to the nanosecond (truncated), like Go's.
//! - [`format_go_duration`] prints Go's `Duration.String()` form (`1h0m0s`, `1.5s`, `300ms`),
//!   which [`parse_go_duration`] reads back to the same value.

use std::time::Duration;

/// Go's largest duration, in nanoseconds.
const MAX_NANOS: u128 = i64::MAX as u128;

/// At most this many fraction digits are used; further digits cannot change the nanosecond
/// count by more than the truncation Go also does, and the bound keeps the arithmetic in `u128`.
const MAX_FRACTION_DIGITS: usize = 18;

/// An invalid duration string, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {problem}")]
pub struct DurationError {
    /// The text that failed (a spec field or flag value, never a secret).
    pub input: String,
    /// What is wrong with it.
    pub problem: DurationProblem,
}

/// What is wrong with a duration string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationProblem {
    /// Nothing to parse.
    #[error("empty")]
    Empty,
    /// A leading `+` or `-`: durations here are never negative.
    #[error("a sign is not allowed; write a positive duration such as 30s or 1h")]
    Signed,
    /// A unit or junk where a number should be.
    #[error("expected a number at byte {0}")]
    ExpectedNumber(usize),
    /// A number without a unit.
    #[error("missing unit at byte {0} (use ns, us, µs, ms, s, m or h)")]
    MissingUnit(usize),
    /// A unit that is not one of Go's.
    #[error("unknown unit {0:?} (use ns, us, µs, ms, s, m or h)")]
    UnknownUnit(String),
    /// Longer than Go's maximum duration.
    #[error("longer than the maximum of about 292 years")]
    Overflow,
}

/// Parses Go duration syntax; see the module guarantees.
///
/// # Errors
/// A [`DurationError`] naming the input and the first problem found.
pub fn parse_go_duration(input: &str) -> Result<Duration, DurationError> {
    let fail = |problem| DurationError {
        input: input.to_owned(),
        problem,
    };
    if input.is_empty() {
        return Err(fail(DurationProblem::Empty));
    }
    if input == "0" {
        return Ok(Duration::ZERO);
    }
    if input.starts_with(['+', '-']) {
        return Err(fail(DurationProblem::Signed));
    }
    let mut total: u128 = 0;
    let mut rest = input;
    while !rest.is_empty() {
        let offset = input.len() - rest.len();
        let (whole, after_whole) = split_digits(rest);
        let (fraction, after_number) = match after_whole.strip_prefix('.') {
            Some(after_dot) => split_digits(after_dot),
            None => ("", after_whole),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(fail(DurationProblem::ExpectedNumber(offset)));
        }
        let unit_len = after_number
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(after_number.len());
        let (unit, next) = after_number.split_at(unit_len);
        let unit_nanos = match unit {
            "" => {
                return Err(fail(DurationProblem::MissingUnit(
                    input.len() - after_number.len(),
                )));
            }
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            other => return Err(fail(DurationProblem::UnknownUnit(other.to_owned()))),
        };
        total = component_nanos(whole, fraction, unit_nanos)
            .and_then(|nanos| total.checked_add(nanos))
            .filter(|sum| *sum <= MAX_NANOS)
            .ok_or_else(|| fail(DurationProblem::Overflow))?;
        rest = next;
    }
    let nanos = u64::try_from(total).expect("total <= i64::MAX was checked");
    Ok(Duration::from_nanos(nanos))
}

/// Splits off the leading ASCII digits.
fn split_digits(text: &str) -> (&str, &str) {
    text.split_at(text.bytes().take_while(u8::is_ascii_digit).count())
}

/// `whole.fraction` × `unit_nanos`, truncated to whole nanoseconds; `None` past Go's maximum.
fn component_nanos(whole: &str, fraction: &str, unit_nanos: u128) -> Option<u128> {
    let mut whole_value: u128 = 0;
    for digit in whole.bytes() {
        whole_value = whole_value * 10 + u128::from(digit - b'0');
        if whole_value > MAX_NANOS {
            return None;
        }
    }
    let fraction = &fraction[..fraction.len().min(MAX_FRACTION_DIGITS)];
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().ok()?
    };
    let scale = 10u128.pow(u32::try_from(fraction.len()).ok()?);
    whole_value
        .checked_mul(unit_nanos)?
        .checked_add(fraction_value * unit_nanos / scale)
}

/// Go's `Duration.String()`: `0s`, `750ns`, `1.5µs`, `300ms`, `1.5s`, `2m0s`, `1h30m0s`.
pub fn format_go_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    match nanos {
        0 => "0s".to_owned(),
        1..1_000 => format!("{nanos}ns"),
        1_000..1_000_000 => format!("{}\u{b5}s", decimal(nanos, 3)),
        1_000_000..1_000_000_000 => format!("{}ms", decimal(nanos, 6)),
        _ => {
            let seconds = nanos / 1_000_000_000;
            let (hours, minutes) = (seconds / 3600, seconds / 60 % 60);
            let seconds_text = decimal(nanos % 60_000_000_000, 9);
            match (hours, minutes) {
                (0, 0) => format!("{seconds_text}s"),
                (0, _) => format!("{minutes}m{seconds_text}s"),
                _ => format!("{hours}h{minutes}m{seconds_text}s"),
            }
        }
    }
}

/// `value / 10^digits` as a decimal without trailing zeros (`1500, 3` → `1.5`).
fn decimal(value: u128, digits: u32) -> String {
    let scale = 10u128.pow(digits);
    let (whole, fraction) = (value / scale, value % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let fraction = format!("{fraction:0width$}", width = digits as usize);
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests;
