//! What one answer of a tenant's FerrVault may hold (issue 34), and the seeds that charge it:
//! every key (or entry) counted and every string charged before it is copied out of the body.
//! The reveal decoder (`reveal/decode.rs`) and the `list` decoder (`inventory.rs`) share it,
//! each with its own bounds.
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

/// What is left of an answer's allowance, and the bound it crossed, if any.
pub(super) struct Budget {
    keys: usize,
    bytes: usize,
    max_keys: usize,
    max_bytes: usize,
    crossed: Option<ResponseBound>,
}

impl Budget {
    /// A whole answer's allowance: at most `max_keys` keys and `max_bytes` bytes of strings.
    pub(super) fn new(max_keys: usize, max_bytes: usize) -> Self {
        Self {
            keys: max_keys,
            bytes: max_bytes,
            max_keys,
            max_bytes,
            crossed: None,
        }
    }

    /// The bound the decoding crossed, if it crossed one.
    pub(super) fn crossed(&self) -> Option<ResponseBound> {
        self.crossed
    }

    /// Counts one more key.
    pub(super) fn take_key<E: de::Error>(&mut self) -> Result<(), E> {
        self.keys = self
            .keys
            .checked_sub(1)
            .ok_or_else(|| self.cross(ResponseBound::Keys(self.max_keys)))?;
        Ok(())
    }

    /// Charges `text` and copies it out of the body.
    pub(super) fn take_text<E: de::Error>(&mut self, text: &str) -> Result<String, E> {
        self.bytes = self
            .bytes
            .checked_sub(text.len())
            .ok_or_else(|| self.cross(ResponseBound::Bytes(self.max_bytes)))?;
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
