//! Whether a hint was signed with the hint key, when, and whether it is fresh: the scheme of
//! Flux's Receiver and GitHub's webhooks, with the timestamp inside the MAC so a captured hint
//! cannot be replayed later with a new timestamp.
//!
//! The sender puts the time of sending in [`TIMESTAMP_HEADER`] (Unix seconds, decimal) and
//! `sha256=<hex>` in [`SIGNATURE_HEADER`], where `<hex>` is HMAC-SHA256 under the hint key of
//! `<timestamp> "." <body>`.
//!
//! # Guarantees
//! - The MAC is compared in constant time (`ring::hmac::verify`), before anything else of the
//!   hint is looked at; a request whose headers are missing or malformed is refused the same way
//!   as one with a wrong MAC ([`SignatureRefusal::Unauthorized`]).
//! - A signed hint whose timestamp is more than [`WINDOW`] away from now, in the past or in the
//!   future, is refused as [`SignatureRefusal::Stale`].
//! - Neither the key nor the MAC appears in a `Debug` output or an error.
//!
//! Pure: the caller passes the time, so the tests need no clock.

use std::{fmt, time::Duration};

use ring::hmac;

/// The header carrying the time of sending, in Unix seconds.
pub(crate) const TIMESTAMP_HEADER: &str = "x-ferrvault-timestamp";
/// The header carrying `sha256=<hex>`, the MAC of `<timestamp>.<body>`.
pub(crate) const SIGNATURE_HEADER: &str = "x-ferrvault-signature";
/// How far a hint's timestamp may be from the operator's clock, either way.
pub(crate) const WINDOW: Duration = Duration::from_secs(5 * 60);
/// The prefix of the signature header's value.
const SCHEME: &[u8] = b"sha256=";
/// The length of an HMAC-SHA256 tag.
pub(crate) const TAG_LEN: usize = 32;
/// The shortest key accepted: 128 bits, as RFC 2104 recommends at least the hash's half.
pub(crate) const MIN_KEY_BYTES: usize = 16;

/// The hint key (HMAC-SHA256). Its bytes are not kept outside `ring`'s key and never printed.
#[derive(Clone)]
pub(crate) struct HintKey(hmac::Key);

impl HintKey {
    /// A key of `bytes`; `None` when shorter than [`MIN_KEY_BYTES`].
    pub(crate) fn new(bytes: &[u8]) -> Option<HintKey> {
        (bytes.len() >= MIN_KEY_BYTES).then(|| HintKey(hmac::Key::new(hmac::HMAC_SHA256, bytes)))
    }
}

impl fmt::Debug for HintKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HintKey(<redacted>)")
    }
}

/// What a request brings to be checked: its two headers (raw bytes, if present) and its body.
#[derive(Clone, Copy)]
pub(crate) struct Signed<'a> {
    /// [`TIMESTAMP_HEADER`].
    pub(crate) timestamp: Option<&'a [u8]>,
    /// [`SIGNATURE_HEADER`].
    pub(crate) signature: Option<&'a [u8]>,
    /// The whole body.
    pub(crate) body: &'a [u8],
}

/// A hint signed with the key, within the window.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verified {
    /// Its MAC: the replay cache's key (a different body or timestamp has a different MAC).
    pub(crate) tag: [u8; TAG_LEN],
    /// Its timestamp (Unix seconds).
    pub(crate) sent_at: i64,
}

impl fmt::Debug for Verified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verified")
            .field("sent_at", &self.sent_at)
            .finish_non_exhaustive()
    }
}

/// Why a hint's signature is refused (both answered 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignatureRefusal {
    /// A header is missing or malformed, or the MAC is not the key's.
    #[error("the hint is not signed with the hint key")]
    Unauthorized,
    /// Signed with the key, but its timestamp is more than [`WINDOW`] from now.
    #[error("the hint's timestamp is outside the accepted window")]
    Stale,
}

/// Checks `signed` against `key` at `now` (Unix seconds).
///
/// # Errors
/// [`SignatureRefusal::Unauthorized`] unless both headers parse and the MAC is the key's;
/// then [`SignatureRefusal::Stale`] when the timestamp is more than [`WINDOW`] from `now`.
pub(crate) fn verify(key: &HintKey, signed: Signed<'_>, now: i64) -> Result<Verified, SignatureRefusal> {
    let timestamp = signed.timestamp.ok_or(SignatureRefusal::Unauthorized)?;
    let sent_at = parse_timestamp(timestamp).ok_or(SignatureRefusal::Unauthorized)?;
    let tag = signed
        .signature
        .and_then(parse_signature)
        .ok_or(SignatureRefusal::Unauthorized)?;
    let mut message = Vec::with_capacity(timestamp.len() + 1 + signed.body.len());
    message.extend_from_slice(timestamp);
    message.push(b'.');
    message.extend_from_slice(signed.body);
    hmac::verify(&key.0, &message, &tag).map_err(|_| SignatureRefusal::Unauthorized)?;
    let window = i64::try_from(WINDOW.as_secs()).unwrap_or(i64::MAX);
    if now.abs_diff(sent_at) > window.unsigned_abs() {
        return Err(SignatureRefusal::Stale);
    }
    Ok(Verified { tag, sent_at })
}

/// The signature header a sender computes.
#[cfg(test)]
pub(crate) fn sign(key: &HintKey, timestamp: &str, body: &[u8]) -> String {
    let mut context = hmac::Context::with_key(&key.0);
    context.update(timestamp.as_bytes());
    context.update(b".");
    context.update(body);
    format!("sha256={}", hex::encode(context.sign().as_ref()))
}

/// Unix seconds: 1 to 12 ASCII digits (no sign, no space; year 33658 is far enough).
fn parse_timestamp(raw: &[u8]) -> Option<i64> {
    if raw.is_empty() || raw.len() > 12 || !raw.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(raw).ok()?.parse().ok()
}

/// `sha256=` and 64 hex digits (either case).
fn parse_signature(raw: &[u8]) -> Option<[u8; TAG_LEN]> {
    let hex_digits = raw.strip_prefix(SCHEME)?;
    let mut tag = [0; TAG_LEN];
    hex::decode_to_slice(hex_digits, &mut tag).ok()?;
    Some(tag)
}

#[cfg(test)]
mod tests;
