//! Parsing the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.

use std::time::{Duration, SystemTime};

/// The delay a `Retry-After` value asks for, measured from `now`, at most [`MAX_RETRY_AFTER`].
///
/// Accepts a non-negative number of seconds (any number of digits, as RFC 9110's `1*DIGIT`;
/// fractions tolerated, since simulators and some proxies send them) or an HTTP-date; a date in
/// the past means "now" (zero). Anything else is `None`: the caller then falls back to its own
/// pacing.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: the parse fails only for a number past u64::MAX, the longest wait there is.
        let seconds = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER.as_secs_f64())));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

/// Upper bound on an honoured `Retry-After`: a buggy or hostile server cannot park a
/// credential for longer than this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_should_parse_delay_seconds() {
        let now = SystemTime::now();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("0.25", now), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("99999", now), Some(MAX_RETRY_AFTER));
    }

    /// Found by the `retry_after` fuzz target (issue 34): more digits than an `f64` holds
    /// parsed as infinity, refused as not finite, and the server's "wait a very long time" was
    /// read as no hint at all, so the client came back at its own, faster pace.
    #[test]
    fn retry_after_should_cap_delay_seconds_of_any_length() {
        let now = SystemTime::now();
        for digits in [20, 400] {
            let value = "9".repeat(digits);
            assert_eq!(
                parse_retry_after(&value, now),
                Some(MAX_RETRY_AFTER),
                "{digits} digits"
            );
        }
        assert_eq!(
            parse_retry_after("00000000000000000000000000007", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(parse_retry_after("inf", now), None);
    }

    #[test]
    fn retry_after_should_parse_http_dates_relative_to_now() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(7)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
    }
}
