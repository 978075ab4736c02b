//! The reveal answer decoder: both wire formats, bounded while it decodes (issue 34: a tenant's
//! FerrVault answered with hundreds of thousands of keys, decoded into a `Vec` and then copied
//! into a map, cost 107 MiB).
//!
//! # Guarantees
//! - The answer's keys (`hits` or `secrets`, plus `missing` names) are counted as they are met,
//!   and their names and values (missing names included) charged before each is copied out of
//!   the body: crossing [`MAX_REVEAL_KEYS`] or [`MAX_REVEAL_BYTES`] stops the decoding at once
//!   with [`FerrVaultError::ResponseTooLarge`] naming the bound.
//! - Values go straight into the result map (no intermediate list); other fields, and the
//!   wire format's fields this scope does not read, are skipped with [`IgnoredAny`], which keeps
//!   nothing.
//! - A decode error keeps serde's category and position only, never the input
//!   ([`FerrVaultError::decode`]).
//!
//! # Caveats
//! - serde_json unescapes a string with escapes into its own scratch buffer before it is
//!   charged: that buffer is bounded by the body, which the client caps at
//!   [`ClientConfig::max_body_bytes`](crate::ferrvault::ClientConfig::max_body_bytes).
//! - A single-flight request carries the union of its callers' keys and its answer is bounded as
//!   a whole: callers of one vault and credential whose keys together cross a bound fail
//!   together, each of them alone would not.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor},
};

use super::{MissingKeys, RevealScope, Revealed, SecretValue};
use crate::ferrvault::{
    FerrVaultError,
    answer_budget::{Budget, KeyName, Text},
};

/// The most keys (found and missing together) one reveal answer may name. A Secret of 4,096 keys
/// has 256 bytes a key under its 1 MiB limit: more keys than any FerrVaultSecret needs, and
/// that many entries cost well under a megabyte of bookkeeping.
///
/// NOTE: a selector may name keys that are all missing, so this must stay at least the CRD's
/// bound on `selector.names`; and a single-flight request carries the union of its callers'
/// selectors (see the caveats of this module).
pub const MAX_REVEAL_KEYS: usize = 4096;

/// The most bytes of key names, values and missing names one reveal answer may hold, decoded.
/// A Secret holds at most 1 MiB of names and values, and what FerrVault answers shrinks on the
/// way there by a base64 decode at most (to 3/4): an answer of more than about 1.34 MiB can only
/// end in `SecretTooLarge` (short of a `jsonExpand` of JSON padded with whitespace or escapes,
/// not worth a larger bound), and 2 MiB leaves room for that. Refusing more while it decodes
/// keeps the map from growing to what the body cap allows.
pub const MAX_REVEAL_BYTES: usize = 2 << 20;

/// Decodes a 2xx reveal body of `scope`'s wire format, within [`MAX_REVEAL_KEYS`] and
/// [`MAX_REVEAL_BYTES`]. A pure function of the body (a fuzzing entry point).
///
/// # Errors
/// [`FerrVaultError::ResponseTooLarge`] over a bound, [`FerrVaultError::Decode`] for a body
/// that is not the format's.
pub fn decode(scope: &RevealScope, body: &[u8]) -> Result<Revealed, FerrVaultError> {
    let format = match scope {
        RevealScope::FerrVault => Format::Hits,
        RevealScope::Cloud { .. } => Format::Secrets,
    };
    let mut budget = Budget::new(MAX_REVEAL_KEYS, MAX_REVEAL_BYTES);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let decoded = AnswerSeed {
        format,
        budget: &mut budget,
    }
    .deserialize(&mut deserializer)
    .and_then(|answer| deserializer.end().map(|()| answer));
    match (decoded, budget.crossed()) {
        (_, Some(bound)) => Err(FerrVaultError::ResponseTooLarge(bound)),
        (Ok(revealed), None) => Ok(revealed),
        (Err(error), None) => Err(FerrVaultError::decode("reveal", &error)),
    }
}

/// Where the values are: ferrvault mode's `hits` list or cloud mode's `secrets` map.
#[derive(Clone, Copy)]
enum Format {
    Hits,
    Secrets,
}

/// A top-level field or a hit's field: no allocation, whatever the server sends.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Field {
    Hits,
    Secrets,
    Missing,
    Name,
    Value,
    Version,
    #[serde(other)]
    Other,
}

/// The whole answer.
struct AnswerSeed<'b> {
    format: Format,
    budget: &'b mut Budget,
}

impl<'de> DeserializeSeed<'de> for AnswerSeed<'_> {
    type Value = Revealed;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Revealed, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for AnswerSeed<'_> {
    type Value = Revealed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a reveal answer")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Revealed, A::Error> {
        let (format, budget) = (self.format, self.budget);
        let mut secrets = BTreeMap::new();
        let mut versions = BTreeMap::new();
        let mut missing = BTreeSet::new();
        let (mut seen_values, mut seen_missing) = (false, false);
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Hits | Field::Secrets if format.reads(&field) => {
                    once(&mut seen_values, format.field_name())?;
                    let sink = Sink {
                        budget: &mut *budget,
                        secrets: &mut secrets,
                        versions: &mut versions,
                    };
                    match format {
                        Format::Hits => map.next_value_seed(HitsSeed(sink))?,
                        Format::Secrets => map.next_value_seed(SecretsSeed(sink))?,
                    }
                }
                Field::Missing => {
                    once(&mut seen_missing, "missing")?;
                    map.next_value_seed(MissingSeed {
                        budget: &mut *budget,
                        missing: &mut missing,
                    })?;
                }
                Field::Hits | Field::Secrets | Field::Name | Field::Value | Field::Version | Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Revealed {
            secrets,
            versions,
            missing: MissingKeys::from(missing),
        })
    }
}

impl Format {
    /// Whether `field` holds this format's values.
    fn reads(self, field: &Field) -> bool {
        matches!(
            (self, field),
            (Format::Hits, Field::Hits) | (Format::Secrets, Field::Secrets)
        )
    }

    fn field_name(self) -> &'static str {
        match self {
            Format::Hits => "hits",
            Format::Secrets => "secrets",
        }
    }
}

/// Fails on a field's second occurrence, as derived deserializers do.
fn once<E: de::Error>(seen: &mut bool, field: &'static str) -> Result<(), E> {
    if std::mem::replace(seen, true) {
        return Err(E::duplicate_field(field));
    }
    Ok(())
}

/// Where decoded values (and ferrvault mode's versions) go, and what they are charged to.
struct Sink<'b> {
    budget: &'b mut Budget,
    secrets: &'b mut BTreeMap<String, SecretValue>,
    versions: &'b mut BTreeMap<String, u64>,
}

/// Ferrvault mode's `hits`: `[{"name": …, "value": …, …}, …]`.
struct HitsSeed<'b>(Sink<'b>);

impl<'de> DeserializeSeed<'de> for HitsSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for HitsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of hits")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Sink {
            budget,
            secrets,
            versions,
        } = self.0;
        while let Some(hit) = seq.next_element_seed(HitSeed(&mut *budget))? {
            match hit.version {
                Some(version) => versions.insert(hit.name.clone(), version),
                // A later hit of the same name without a version: the earlier one's is stale.
                None => versions.remove(&hit.name),
            };
            secrets.insert(hit.name, hit.value);
        }
        Ok(())
    }
}

/// One decoded hit.
struct Hit {
    name: String,
    value: SecretValue,
    version: Option<u64>,
}

/// One hit, counted as a key before it is read.
struct HitSeed<'b>(&'b mut Budget);

impl<'de> DeserializeSeed<'de> for HitSeed<'_> {
    type Value = Hit;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.take_key()?;
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HitSeed<'_> {
    type Value = Hit;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a hit")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hit, A::Error> {
        let (mut name, mut value, mut version) = (None, None, None);
        while let Some(field) = map.next_key::<Field>()? {
            let (slot, field) = match field {
                Field::Name => (&mut name, "name"),
                Field::Value => (&mut value, "value"),
                Field::Version => {
                    if version.is_some() {
                        return Err(de::Error::duplicate_field("version"));
                    }
                    version = Some(map.next_value::<u64>()?);
                    continue;
                }
                Field::Hits | Field::Secrets | Field::Missing | Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(de::Error::duplicate_field(field));
            }
            *slot = Some(map.next_value_seed(Text(&mut *self.0))?);
        }
        Ok(Hit {
            name: name.ok_or_else(|| de::Error::missing_field("name"))?,
            value: SecretValue(value.ok_or_else(|| de::Error::missing_field("value"))?),
            version,
        })
    }
}

/// Cloud mode's `secrets`: `{"NAME": "value", …}`.
struct SecretsSeed<'b>(Sink<'b>);

impl<'de> DeserializeSeed<'de> for SecretsSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SecretsSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of secrets")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Sink { budget, secrets, .. } = self.0;
        while let Some(name) = map.next_key_seed(KeyName(&mut *budget))? {
            let value = map.next_value_seed(Text(&mut *budget))?;
            secrets.insert(name, SecretValue(value));
        }
        Ok(())
    }
}

/// `missing`: `null` or a list of names.
struct MissingSeed<'b> {
    budget: &'b mut Budget,
    missing: &'b mut BTreeSet<String>,
}

impl<'de> DeserializeSeed<'de> for MissingSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for MissingSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("null or a list of names")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(name) = seq.next_element_seed(KeyName(&mut *self.budget))? {
            self.missing.insert(name);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
