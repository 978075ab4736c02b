//! The explanation in a non-2xx body: its `error` string, or else its `message` string, decoded
//! with a typed visitor instead of a generic JSON tree (issue 34: an 8 MiB `[0,0,…]` parsed into
//! a `serde_json::Value` cost over 100 MiB).
//!
//! # Guarantees
//! - Only a top-level JSON object is read. Its other fields, and an `error` or `message` that is
//!   not a string, are skipped with [`IgnoredAny`], which keeps nothing however long or deep they
//!   are (serde_json's recursion limit bounds the depth).
//! - Of each of the two strings, only the first [`MAX_MESSAGE_CHARS`] characters that are not
//!   control characters are kept: nothing the size of the body is ever copied out of it.
//! - Anything else (HTML, an array, a body the client cut at
//!   [`MAX_SMALL_BODY_BYTES`](crate::ferrvault::MAX_SMALL_BODY_BYTES)) has no message: the caller
//!   falls back to the status text.

use std::fmt;

use reqwest::StatusCode;
use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, SeqAccess, Visitor},
};

/// Longest server message kept in an error.
pub const MAX_MESSAGE_CHARS: usize = 200;

/// The server's explanation in an error body: its `error` string, or else its `message`
/// string, without control characters and cut to [`MAX_MESSAGE_CHARS`]; `None` when neither is
/// there or what is left is blank. A pure function of the body (a fuzzing entry point).
pub fn server_message(body: &[u8]) -> Option<String> {
    let ErrorBody { error, message } = serde_json::from_slice(body).ok()?;
    let text = error.or(message)?;
    (!text.trim().is_empty()).then_some(text)
}

/// The status text, when the body explains nothing.
pub(super) fn fallback_message(status: StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("unexpected status")
        .to_lowercase()
}

/// The two fields of an error body the client reads; the first string of each kept.
#[derive(Default)]
struct ErrorBody {
    error: Option<String>,
    message: Option<String>,
}

/// A top-level field name: no allocation, whatever the server sends.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Error,
    Message,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for ErrorBody {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ErrorBodyVisitor)
    }
}

struct ErrorBodyVisitor;

impl<'de> Visitor<'de> for ErrorBodyVisitor {
    type Value = ErrorBody;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ErrorBody, A::Error> {
        let mut body = ErrorBody::default();
        while let Some(field) = map.next_key::<Field>()? {
            let slot = match field {
                Field::Error if body.error.is_none() => &mut body.error,
                Field::Message if body.message.is_none() => &mut body.message,
                Field::Error | Field::Message | Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Text>()?.0;
        }
        Ok(body)
    }
}

/// A string field, cleaned and cut while it is decoded; any other JSON value is skipped as
/// `None` (an `{"error": {...}, "message": "…"}` still shows its message).
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, text: &str) -> Result<Text, E> {
        let clean = text
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_MESSAGE_CHARS)
            .collect();
        Ok(Text(Some(clean)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
        Ok(Text(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
        Ok(Text(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
        Ok(Text(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
        Ok(Text(None))
    }

    fn visit_unit<E>(self) -> Result<Text, E> {
        Ok(Text(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Text(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Text(None))
    }
}

#[cfg(test)]
mod tests;
