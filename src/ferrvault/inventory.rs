//! What `GET /operator/secrets/list` answers (issue 38): every secret name of the token's vault
//! with its version and when it last changed, and never a value. The answer is the tenant's
//! server output, so it is decoded as the reveal answer is: bounded while it decodes.
//!
//! # Guarantees
//! - The entries are counted as they are met and their names charged before each is copied out
//!   of the body: crossing [`MAX_LIST_ENTRIES`] or [`MAX_LIST_BYTES`] stops the decoding at
//!   once with [`FerrVaultError::ResponseTooLarge`] naming the bound.
//! - Nothing but the names, versions and times is kept: other fields are skipped with
//!   [`IgnoredAny`], and `updated_at` is parsed in place into a fixed-size time.
//! - A decode error keeps serde's category and position only, never the input.

use std::{collections::BTreeMap, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor},
};

use super::{
    FerrVaultError,
    answer_budget::{Budget, Text},
};

/// The most entries one `list` answer may hold. Far more secrets than a vault an operator reads
/// from holds in practice; 10,000 entries cost about 1.5 MB decoded.
pub const MAX_LIST_ENTRIES: usize = 10_000;

/// The most bytes of names one `list` answer may hold (names only: nothing else is kept as
/// text), 100 bytes a name at [`MAX_LIST_ENTRIES`].
pub const MAX_LIST_BYTES: usize = 1 << 20;

/// One name of a `list` answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListedSecret {
    /// Its version: it increases on every change of the value.
    pub version: u64,
    /// When its value last changed (the server's clock).
    pub updated_at: jiff::Timestamp,
}

/// A `list` answer: every name of the token's vault, by name. No values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    /// Name → version and time. A name listed twice keeps its last entry.
    pub entries: BTreeMap<String, ListedSecret>,
}

impl Inventory {
    /// The version of `name`, if the vault has it.
    pub fn version(&self, name: &str) -> Option<u64> {
        self.entries.get(name).map(|entry| entry.version)
    }
}

/// Decodes a 2xx `list` body, within [`MAX_LIST_ENTRIES`] and [`MAX_LIST_BYTES`]. A pure
/// function of the body (a fuzzing entry point).
///
/// # Errors
/// [`FerrVaultError::ResponseTooLarge`] over a bound, [`FerrVaultError::Decode`] for a body that
/// is not a list of `{name, version, updated_at}`.
pub fn decode(body: &[u8]) -> Result<Inventory, FerrVaultError> {
    let mut budget = Budget::new(MAX_LIST_ENTRIES, MAX_LIST_BYTES);
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let decoded = EntriesSeed(&mut budget)
        .deserialize(&mut deserializer)
        .and_then(|inventory| deserializer.end().map(|()| inventory));
    match (decoded, budget.crossed()) {
        (_, Some(bound)) => Err(FerrVaultError::ResponseTooLarge(bound)),
        (Ok(inventory), None) => Ok(inventory),
        (Err(error), None) => Err(FerrVaultError::decode("list", &error)),
    }
}

/// An entry's field: no allocation, whatever the server sends.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Field {
    Name,
    Version,
    UpdatedAt,
    #[serde(other)]
    Other,
}

/// The whole answer: a list of entries.
struct EntriesSeed<'b>(&'b mut Budget);

impl<'de> DeserializeSeed<'de> for EntriesSeed<'_> {
    type Value = Inventory;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Inventory, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EntriesSeed<'_> {
    type Value = Inventory;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of secrets")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Inventory, A::Error> {
        let mut entries = BTreeMap::new();
        while let Some((name, entry)) = seq.next_element_seed(EntrySeed(&mut *self.0))? {
            entries.insert(name, entry);
        }
        Ok(Inventory { entries })
    }
}

/// One entry, counted before it is read.
struct EntrySeed<'b>(&'b mut Budget);

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = (String, ListedSecret);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.take_key()?;
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = (String, ListedSecret);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a secret's name, version and updated_at")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut name, mut version, mut updated_at) = (None, None, None);
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Name => {
                    once(name.is_some(), "name")?;
                    name = Some(map.next_value_seed(Text(&mut *self.0))?);
                }
                Field::Version => {
                    once(version.is_some(), "version")?;
                    version = Some(map.next_value::<u64>()?);
                }
                Field::UpdatedAt => {
                    once(updated_at.is_some(), "updated_at")?;
                    updated_at = Some(map.next_value_seed(Time)?);
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let entry = ListedSecret {
            version: version.ok_or_else(|| de::Error::missing_field("version"))?,
            updated_at: updated_at.ok_or_else(|| de::Error::missing_field("updated_at"))?,
        };
        Ok((name.ok_or_else(|| de::Error::missing_field("name"))?, entry))
    }
}

/// Fails on a field's second occurrence, as derived deserializers do.
fn once<E: de::Error>(seen: bool, field: &'static str) -> Result<(), E> {
    if seen {
        return Err(E::duplicate_field(field));
    }
    Ok(())
}

/// An RFC 3339 time, parsed from the body's string without keeping it.
struct Time;

impl<'de> DeserializeSeed<'de> for Time {
    type Value = jiff::Timestamp;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<jiff::Timestamp, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Time {
    type Value = jiff::Timestamp;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RFC 3339 time")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<jiff::Timestamp, E> {
        text.parse()
            .map_err(|_| E::invalid_value(de::Unexpected::Other("a string"), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ferrvault::ResponseBound;

    fn entries(n: usize, name_len: usize) -> Vec<u8> {
        let entries: Vec<String> = (0..n)
            .map(|i| {
                let name = format!("{i:0name_len$}");
                format!(r#"{{"name":"{name}","version":{i},"updated_at":"2026-12-01T10:00:00Z"}}"#)
            })
            .collect();
        format!("[{}]", entries.join(",")).into_bytes()
    }

    #[test]
    fn list_should_decode_names_versions_and_times_and_skip_other_fields() {
        let body = br#"[{"name":"A","version":3,"updated_at":"2026-12-01T10:00:00Z","value":"s3cret"},
                        {"extra":{"x":[1]},"updated_at":"2026-12-02T10:00:00.5+01:00","version":1,"name":"B"}]"#;
        let inventory = decode(body).expect("a list");
        assert_eq!(
            (inventory.version("A"), inventory.version("B")),
            (Some(3), Some(1))
        );
        assert_eq!(
            inventory.entries["B"].updated_at,
            "2026-12-02T09:00:00.5Z".parse::<jiff::Timestamp>().unwrap()
        );
        assert!(!format!("{inventory:?}").contains("s3cret"));
        assert_eq!(decode(b"[]").expect("empty"), Inventory::default());
    }

    #[test]
    fn list_should_refuse_what_is_not_a_list_of_entries_without_quoting_it() {
        for body in [
            &br#"{"name":"A"}"#[..],
            br#"[{"name":"A","version":1}]"#,
            br#"[{"name":"A","version":-1,"updated_at":"2026-12-01T10:00:00Z"}]"#,
            br#"[{"name":"A","version":"2","updated_at":"2026-12-01T10:00:00Z"}]"#,
            br#"[{"name":"A","name":"B","version":1,"updated_at":"2026-12-01T10:00:00Z"}]"#,
            br#"[{"name":"A","version":1,"updated_at":"hunter2"}]"#,
            br#"[] trailing"#,
        ] {
            let error = decode(body).expect_err("refused");
            assert_eq!(error.reason(), "DecodeError", "{error}");
            assert!(!error.to_string().contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn list_should_stop_at_its_entry_and_byte_bounds() {
        assert_eq!(
            decode(&entries(MAX_LIST_ENTRIES, 8))
                .expect("at the bound")
                .entries
                .len(),
            MAX_LIST_ENTRIES
        );
        let too_many = decode(&entries(MAX_LIST_ENTRIES + 1, 8)).expect_err("over");
        assert!(matches!(
            too_many,
            FerrVaultError::ResponseTooLarge(ResponseBound::Keys(MAX_LIST_ENTRIES))
        ));
        let name_len = MAX_LIST_BYTES / 1000 + 1;
        let too_long = decode(&entries(1000, name_len)).expect_err("over");
        assert!(matches!(
            too_long,
            FerrVaultError::ResponseTooLarge(ResponseBound::Bytes(MAX_LIST_BYTES))
        ));
    }
}
