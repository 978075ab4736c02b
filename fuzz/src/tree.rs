//! [`Tree`]: a JSON document as written, the reference the decoders are compared with.
//!
//! The decoders under test read JSON with hand-written serde visitors (bounded, without a
//! generic tree); the fuzz targets check them against this plain reading of the same bytes.
//! Unlike `serde_json::Value` it keeps every member of an object, in order, duplicates
//! included, so the reference can say what a duplicated field means instead of silently keeping
//! the last one.
//!
//! # Guarantees
//! - The same parser as the decoders (`serde_json`, same recursion limit, same syntax), so a
//!   syntax error is one for both. The one difference: every value is read whole here, where a
//!   decoder skipping one with `IgnoredAny` only checks its syntax (not that a number fits an
//!   `f64`, such as `1e400`, that a string is UTF-8, or that its escapes are characters, such as
//!   a lone `\ud800`); [`Parsed::Unsure`] tells these apart.

use std::fmt;

use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, SeqAccess, Visitor},
};

/// A JSON value with objects kept as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number: its value when it is an unsigned integer (what a `u64` field accepts), `None`
    /// for any other (negative, fractional).
    Number(Option<u64>),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Seq(Vec<Tree>),
    /// An object: every member in order, duplicates included.
    Map(Vec<(String, Tree)>),
}

/// What reading a body as a [`Tree`] gave.
#[derive(Debug)]
pub enum Parsed {
    /// A whole JSON document.
    Json(Tree),
    /// JSON refused here for what a value holds, not for its syntax: a decoder that skips the
    /// value accepts it, one that reads it does not.
    Unsure,
    /// Not JSON.
    NotJson,
}

impl Parsed {
    /// Reads `body` as one JSON document (trailing whitespace only).
    pub fn from_slice(body: &[u8]) -> Self {
        match serde_json::from_slice(body) {
            Ok(tree) => Parsed::Json(tree),
            Err(_) if serde_json::from_slice::<IgnoredAny>(body).is_ok() => Parsed::Unsure,
            Err(_) => Parsed::NotJson,
        }
    }
}

impl Tree {
    /// The members of an object named `name`, in order.
    pub fn members<'t>(entries: &'t [(String, Tree)], name: &'t str) -> impl Iterator<Item = &'t Tree> {
        entries
            .iter()
            .filter(move |(key, _)| key == name)
            .map(|(_, value)| value)
    }

    /// The unsigned integer, if this is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Tree::Number(n) => *n,
            Tree::Null | Tree::Bool | Tree::Str(_) | Tree::Seq(_) | Tree::Map(_) => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tree::Str(text) => Some(text),
            Tree::Null | Tree::Bool | Tree::Number(_) | Tree::Seq(_) | Tree::Map(_) => None,
        }
    }
}

/// The one member named `name` of an object: `Ok(None)` when absent, `Err` when duplicated (as
/// a derived or hand-written deserializer refuses a field given twice).
pub fn single<'t>(entries: &'t [(String, Tree)], name: &'t str) -> Result<Option<&'t Tree>, ()> {
    let mut found = Tree::members(entries, name);
    let first = found.next();
    match found.next() {
        Some(_) => Err(()),
        None => Ok(first),
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Tree, E> {
        Ok(Tree::Bool)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Tree, E> {
        Ok(Tree::Number(None))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Tree, E> {
        Ok(Tree::Number(Some(n)))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Tree, E> {
        Ok(Tree::Number(None))
    }

    fn visit_str<E>(self, text: &str) -> Result<Tree, E> {
        Ok(Tree::Str(text.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Tree>()? {
            entries.push(entry);
        }
        Ok(Tree::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_should_keep_duplicated_members_in_order() {
        let Parsed::Json(Tree::Map(entries)) = Parsed::from_slice(br#"{"a":"1","b":null,"a":[2]}"#) else {
            panic!("an object")
        };
        assert_eq!(
            Tree::members(&entries, "a").collect::<Vec<_>>(),
            [&Tree::Str("1".into()), &Tree::Seq(vec![Tree::Number(Some(2))])]
        );
        assert_eq!(single(&entries, "a"), Err(()));
        assert_eq!(single(&entries, "b"), Ok(Some(&Tree::Null)));
        assert_eq!(single(&entries, "c"), Ok(None));
    }

    #[test]
    fn tree_should_tell_what_a_skipping_decoder_accepts_from_a_syntax_error() {
        for skipped in [&br#"{"a":1e400}"#[..], b"{\"a\":\"\x92\"}", br#"{"a":"\ud800"}"#] {
            assert!(serde_json::from_slice::<IgnoredAny>(skipped).is_ok());
            assert!(matches!(Parsed::from_slice(skipped), Parsed::Unsure));
        }
        assert!(matches!(Parsed::from_slice(br#"{"a":1e4"#), Parsed::NotJson));
        assert!(matches!(Parsed::from_slice(b"[] x"), Parsed::NotJson));
    }
}
