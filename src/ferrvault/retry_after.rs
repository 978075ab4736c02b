//! Parsing the `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.

use std::time::{Duration, SystemTime};

/// The delay a `Retry-After` value asks for, measured from `now`.
///
/// Accepts a non-negative number of seconds (fractions tolerated, since simulators and some
/// proxies send them) or an HTTP-date; a date in the past means "now" (zero). Anything else is
/// `None`: the caller then falls back to its own pacing.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
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

    #[test]
    fn retry_after_should_parse_http_dates_relative_to_now() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(parse_retry_after(&later, now), Some(Duration::from_secs(7)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
    }
}
