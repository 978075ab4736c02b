//! Target `retry_after`: `ferrvault::parse_retry_after` on any `Retry-After` value a tenant's
//! FerrVault may send, at any wall-clock time from 1970 to 2106.
//!
//! # Properties checked
//! - A delay is never longer than [`MAX_RETRY_AFTER`].
//! - Delay-seconds (`1*DIGIT`, RFC 9110 §10.2.3) are honoured to the second, up to the bound.
//! - Whether a value is understood does not depend on the clock; a later clock never lengthens
//!   the delay, and shortens it by at most the time that passed.

use std::time::{Duration, UNIX_EPOCH};

use ferrvault_operator::ferrvault::{MAX_RETRY_AFTER, parse_retry_after};

/// How much later the clock is read the second time.
const LATER: Duration = Duration::from_secs(7);

/// Checks the parser on `data`: four bytes of wall-clock time (seconds since 1970, little
/// endian), then the header value.
pub fn check(data: &[u8]) {
    let Some((clock, value)) = data.split_first_chunk::<4>() else {
        return;
    };
    let Ok(value) = std::str::from_utf8(value) else {
        return;
    };
    let now = UNIX_EPOCH + Duration::from_secs(u64::from(u32::from_le_bytes(*clock)));
    let delay = parse_retry_after(value, now);
    let later = parse_retry_after(value, now + LATER);
    if let Some(delay) = delay {
        assert!(delay <= MAX_RETRY_AFTER, "{delay:?} for {value:?}");
    }
    if let Some(seconds) = delay_seconds(value) {
        let expected = Duration::from_secs(seconds.min(MAX_RETRY_AFTER.as_secs()));
        assert_eq!(delay, Some(expected), "{value:?}");
    }
    match (delay, later) {
        (None, None) => {}
        (Some(delay), Some(later)) => {
            assert!(later <= delay, "{value:?}: {later:?} later, {delay:?} before");
            assert!(
                delay - later <= LATER,
                "{value:?}: {later:?} later, {delay:?} before"
            );
        }
        (delay, later) => panic!("{value:?} understood at one time only: {delay:?}, then {later:?}"),
    }
}

/// The value as RFC 9110 delay-seconds (digits only, saturating), if it is that.
fn delay_seconds(value: &str) -> Option<u64> {
    let digits = value.trim();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| {
        digits.bytes().fold(0u64, |seconds, digit| {
            seconds.saturating_mul(10).saturating_add(u64::from(digit - b'0'))
        })
    })
}
