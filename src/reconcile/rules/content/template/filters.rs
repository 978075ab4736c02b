//! The template language's filters: a closed list, each a total function of its input bytes
//! with a known worst-case growth.
//!
//! # Guarantees
//! - Total: every filter returns for every input (a value, or a [`FilterFailure`] for
//!   `base64decode` of text that is not base64 and `json` of bytes that are not UTF-8), never
//!   panics, and reads nothing but its input and its own argument: no key, file, environment,
//!   DNS or Kubernetes lookup exists to be reached.
//! - [`Filter::max_len`] bounds the output's length for every input of a given length, and is
//!   never below it (so a chain's bound bounds every intermediate value too).
//! - `lower`, `upper` and `trim` act on ASCII only: Unicode case mapping can grow a value and
//!   depends on tables; ASCII keeps them byte-exact and length-preserving.

use std::borrow::Cow;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};

use crate::reconcile::rules::content::transforms::decode_base64;

/// What `urlquery` escapes: everything but RFC 3986's unreserved characters.
const QUERY_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The longest escape `json` writes for one input byte (`\u001f` for a control character).
const JSON_GROWTH: usize = 6;

/// One filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Filter {
    /// Standard base64, padded.
    Base64,
    /// Base64 decoding, standard then URL-safe alphabet (as the `base64Decode` transform).
    Base64Decode,
    /// JSON string escaping, without the quotes (the value goes between the template's own).
    Json,
    /// Percent-encoding of every byte but `A-Za-z0-9-._~` (so a space is `%20`).
    UrlQuery,
    /// ASCII whitespace removed at both ends.
    Trim,
    /// ASCII letters lower-cased.
    Lower,
    /// ASCII letters upper-cased.
    Upper,
    /// The argument, when the value is missing or empty.
    Default(String),
}

/// Why a filter refused its input (the value is never quoted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterFailure {
    /// `base64decode` of a value that is base64 in neither alphabet.
    NotBase64,
    /// `json` of a value that is not UTF-8 (JSON strings cannot hold other bytes).
    NotUtf8,
}

impl Filter {
    /// The name a template spells it with.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Base64 => "base64",
            Self::Base64Decode => "base64decode",
            Self::Json => "json",
            Self::UrlQuery => "urlquery",
            Self::Trim => "trim",
            Self::Lower => "lower",
            Self::Upper => "upper",
            Self::Default(_) => "default",
        }
    }

    /// The longest output for an input of `len` bytes (saturating), never below `len`.
    pub(crate) fn max_len(&self, len: usize) -> usize {
        match self {
            Self::Base64 => len.div_ceil(3).saturating_mul(4),
            Self::Json => len.saturating_mul(JSON_GROWTH),
            Self::UrlQuery => len.saturating_mul(3),
            Self::Base64Decode | Self::Trim | Self::Lower | Self::Upper => len,
            Self::Default(text) => len.max(text.len()),
        }
    }

    /// The filter applied to `value` (`None`: the key is missing, which only `default` fills).
    ///
    /// # Errors
    /// A [`FilterFailure`] for input the filter cannot represent.
    pub(crate) fn apply<'a>(
        &'a self,
        value: Option<Cow<'a, [u8]>>,
    ) -> Result<Option<Cow<'a, [u8]>>, FilterFailure> {
        let Some(value) = value else {
            return Ok(match self {
                Self::Default(text) => Some(Cow::Borrowed(text.as_bytes())),
                _ => None,
            });
        };
        let filtered = match self {
            Self::Base64 => Cow::Owned(STANDARD.encode(&value).into_bytes()),
            Self::Base64Decode => Cow::Owned(decode_base64(&value).ok_or(FilterFailure::NotBase64)?),
            Self::Json => Cow::Owned(json_escaped(&value)?.into_bytes()),
            Self::UrlQuery => Cow::Owned(percent_encode(&value, QUERY_ESCAPED).to_string().into_bytes()),
            Self::Trim => Cow::Owned(value.trim_ascii().to_vec()),
            Self::Lower => Cow::Owned(value.to_ascii_lowercase()),
            Self::Upper => Cow::Owned(value.to_ascii_uppercase()),
            Self::Default(text) if value.is_empty() => Cow::Borrowed(text.as_bytes()),
            Self::Default(_) => value,
        };
        Ok(Some(filtered))
    }
}

/// `value` as the inside of a JSON string.
fn json_escaped(value: &[u8]) -> Result<String, FilterFailure> {
    let text = std::str::from_utf8(value).map_err(|_| FilterFailure::NotUtf8)?;
    let quoted = serde_json::Value::from(text).to_string();
    Ok(quoted[1..quoted.len() - 1].to_owned())
}
