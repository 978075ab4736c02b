//! What one reveal answer may hold (issue 34), and the seeds that charge it: every key counted
//! and every string charged before it is copied out of the body.
//!
//! # Guarantees
//! - [`Budget`] fails the decoding on the key or the byte that crosses a bound, and remembers
//!   which bound ([`Budget::crossed`]): serde's own error cannot carry it.

use std::fmt;

use serde::{
    Deserializer,
    de::{self, DeserializeSeed, Visitor},
};

use crate::ferrvault::ResponseBound;

/// The most keys (found and missing together) one reveal answer may name. A Secret of 4,096 keys
/// has 256 bytes a key under its 1 MiB limit: more keys than any FerrVaultSecret needs, and
/// that many entries cost well under a megabyte of bookkeeping.
///
/// NOTE: a selector may name keys that are all missing, so this must stay at least the CRD's
/// bound on `selector.names`; and a single-flight request carries the union of its callers'
/// selectors (see the caveats of `reveal/decode.rs`).
pub const MAX_REVEAL_KEYS: usize = 4096;

/// The most bytes of key names, values and missing names one reveal answer may hold, decoded.
/// A Secret holds at most 1 MiB of names and values, and what FerrVault answers shrinks on the
/// way there by a base64 decode at most (to 3/4): an answer of more than about 1.34 MiB can only
/// end in `SecretTooLarge` (short of a `jsonExpand` of JSON padded with whitespace or escapes,
/// not worth a larger bound), and 2 MiB leaves room for that. Refusing more while it decodes
/// keeps the map from growing to what the body cap allows.
pub const MAX_REVEAL_BYTES: usize = 2 << 20;

/// What is left of an answer's allowance, and the bound it crossed, if any.
pub(super) struct Budget {
    keys: usize,
    bytes: usize,
    crossed: Option<ResponseBound>,
}

impl Default for Budget {
    /// A whole answer's allowance.
    fn default() -> Self {
        Self {
            keys: MAX_REVEAL_KEYS,
            bytes: MAX_REVEAL_BYTES,
            crossed: None,
        }
    }
}

impl Budget {
    /// The bound the decoding crossed, if it crossed one.
    pub(super) fn crossed(&self) -> Option<ResponseBound> {
        self.crossed
    }

    /// Counts one more key.
    pub(super) fn take_key<E: de::Error>(&mut self) -> Result<(), E> {
        self.keys = self
            .keys
            .checked_sub(1)
            .ok_or_else(|| self.cross(ResponseBound::Keys(MAX_REVEAL_KEYS)))?;
        Ok(())
    }

    /// Charges `text` and copies it out of the body.
    fn take_text<E: de::Error>(&mut self, text: &str) -> Result<String, E> {
        self.bytes = self
            .bytes
            .checked_sub(text.len())
            .ok_or_else(|| self.cross(ResponseBound::Bytes(MAX_REVEAL_BYTES)))?;
        Ok(text.to_owned())
    }

    fn cross<E: de::Error>(&mut self, bound: ResponseBound) -> E {
        self.crossed = Some(bound);
        E::custom("over the operator's bound")
    }
}

/// A key's name, counted as a key before it is read.
pub(super) struct KeyName<'b>(pub(super) &'b mut Budget);

impl<'de> DeserializeSeed<'de> for KeyName<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        self.0.take_key()?;
        Text(self.0).deserialize(deserializer)
    }
}

/// A string, charged before it is copied out of the body.
pub(super) struct Text<'b>(pub(super) &'b mut Budget);

impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Text<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<String, E> {
        self.0.take_text(text)
    }
}
