//! The hint body: `{"vault": "<name>", "names": ["<name>", …]}` (`names` optional), parsed
//! within bounds. The fuzz target `hint_body` drives [`parse_hint`].
//!
//! # Guarantees
//! - The body itself is at most [`MAX_BODY_BYTES`] (the endpoint refuses a longer one before
//!   reading it), so nothing parsed from it can be larger.
//! - At most [`MAX_NAMES`] names are taken, each at most [`MAX_NAME_BYTES`], and the vault at most
//!   [`MAX_NAME_BYTES`]: the parser stops at the first item past a bound, before storing it.
//! - Unknown fields, a missing or empty `vault`, an empty name and any other type are refused.
//! - An error says which rule broke, never what the body held.

use std::{collections::BTreeSet, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor},
};

/// The longest body taken (larger: 413 before it is read).
pub const MAX_BODY_BYTES: u64 = 64 * 1024;
/// The most names in one hint.
pub const MAX_NAMES: usize = 1_000;
/// The longest vault or secret name in a hint (FerrVault's names are far shorter).
pub const MAX_NAME_BYTES: usize = 253;

/// A parsed hint: which vault changed, and which of its names (all when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The vault.
    pub vault: String,
    /// The names that changed; `None`: any.
    pub names: Option<BTreeSet<String>>,
}

/// Why a body is not a hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the hint body is not {{\"vault\": <name>, \"names\"?: [<name>, …]}} within bounds: {0}")]
pub struct BodyError(String);

/// Parses `body` as a hint.
///
/// # Errors
/// [`BodyError`] naming the rule it breaks.
pub fn parse_hint(body: &[u8]) -> Result<Hint, BodyError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let hint = Hint::deserialize(&mut deserializer).map_err(|e| BodyError(rule_of(&e)))?;
    deserializer.end().map_err(|e| BodyError(rule_of(&e)))?;
    Ok(hint)
}

/// The rule an error broke, without a quote of the input: serde_json quotes unknown fields and
/// unexpected strings, which are the sender's bytes.
fn rule_of(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match error.classify() {
        Category::Data => {
            let text = error.to_string();
            if text.contains(LIMIT_NOTE) {
                LIMIT_NOTE.to_owned()
            } else {
                "a field is missing, unknown or of the wrong type".to_owned()
            }
        }
        Category::Syntax | Category::Eof | Category::Io => "not JSON".to_owned(),
    }
}

/// The custom error of a bound, recognised by [`rule_of`].
const LIMIT_NOTE: &str = "over a bound (vault or name longer than 253 bytes, more than 1000 names, or empty)";

impl<'de> Deserialize<'de> for Hint {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(HintVisitor)
    }
}

struct HintVisitor;

impl<'de> Visitor<'de> for HintVisitor {
    type Value = Hint;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a hint object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Hint, A::Error> {
        let mut vault = None;
        let mut names = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Vault if vault.is_none() => vault = Some(map.next_value::<BoundedName>()?.0),
                Field::Names if names.is_none() => names = Some(map.next_value::<BoundedNames>()?.0),
                Field::Vault | Field::Names => return Err(de::Error::custom("a field repeated")),
            }
        }
        let vault = vault.ok_or_else(|| de::Error::missing_field("vault"))?;
        Ok(Hint { vault, names })
    }
}

/// The fields of a hint; any other is refused (without quoting it).
enum Field {
    Vault,
    Names,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = BoundedName::deserialize(deserializer)
            .map_err(|_| de::Error::custom("a field name over a bound"))?;
        match name.0.as_str() {
            "vault" => Ok(Field::Vault),
            "names" => Ok(Field::Names),
            _ => Err(de::Error::custom("an unknown field")),
        }
    }
}

/// A non-empty string of at most [`MAX_NAME_BYTES`], refused before it is copied when longer.
struct BoundedName(String);

impl<'de> Deserialize<'de> for BoundedName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = BoundedName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<BoundedName, E> {
                if value.is_empty() || value.len() > MAX_NAME_BYTES {
                    return Err(E::custom(LIMIT_NOTE));
                }
                Ok(BoundedName(value.to_owned()))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// At most [`MAX_NAMES`] bounded names; the list stops at the first name past the count.
struct BoundedNames(BTreeSet<String>);

impl<'de> Deserialize<'de> for BoundedNames {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NamesVisitor;
        impl<'de> Visitor<'de> for NamesVisitor {
            type Value = BoundedNames;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of names")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BoundedNames, A::Error> {
                let mut names = BTreeSet::new();
                let mut count = 0;
                while count < MAX_NAMES {
                    match seq.next_element::<BoundedName>()? {
                        Some(name) => {
                            names.insert(name.0);
                            count += 1;
                        }
                        None => return Ok(BoundedNames(names)),
                    }
                }
                match seq.next_element::<IgnoredAny>()? {
                    None => Ok(BoundedNames(names)),
                    Some(_) => Err(de::Error::custom(LIMIT_NOTE)),
                }
            }
        }
        deserializer.deserialize_seq(NamesVisitor)
    }
}

#[cfg(test)]
mod tests;
