//! The `jsonExpand` transform: flattens a JSON object value into upper-cased keys.
//!
//! # Guarantees (reference §3.7)
//! - `in[key]` must be a JSON object; the source key is dropped.
//! - Leaves become `UPPER(key)_UPPER(subkey)`, recursively for nested objects, visited in sorted
//!   order (so which collision is reported is deterministic).
//! - Leaf text: a string as is; `true`/`false`; a whole number as an integer (`5432`), another
//!   number in Go's shortest `%g` form (`1.5`, `1.2345675e+06`); `null` as ""; arrays as compact JSON.
//! - A missing `key` is a no-op; an existing flattened key is a collision error.
//!
//! # Bounds (issue 34)
//! A tenant's FerrVault chooses the value, so nothing it holds may multiply into memory:
//! - Before it is parsed, the value is scanned (no allocation): nested deeper than
//!   [`MAX_DEPTH`] or holding more than [`MAX_VALUES`] JSON values, it is refused. The parsed
//!   tree is then at most [`MAX_VALUES`] nodes plus the value's own bytes.
//! - While expanding, at most [`MAX_LEAVES`] keys are added and the output's size is tracked:
//!   a key name is measured before it is built, into one reused buffer, and the first leaf that
//!   would take the output over the caller's limit stops the expansion
//!   ([`ExpandFailure::OutputTooLarge`]). Long names repeated under many leaves (the way such a
//!   value multiplies) therefore cost at most the limit.

use serde_json::{Map, Value};

use super::{SecretData, payload_bytes};

/// Deepest nesting of objects and arrays in an expanded value: configuration documents nest a
/// few levels; 32 keeps the flattening recursion (and serde's, limited to 128) shallow.
pub const MAX_DEPTH: usize = 32;

/// Most keys one `jsonExpand` adds: 4,096, more than any configuration object flattens into
/// (and a Secret of 4,096 keys is already unusually large).
pub const MAX_LEAVES: usize = 4096;

/// Most JSON values an expanded document may hold, counted before parsing as one per `[`, `,`
/// and `:` outside strings plus the document itself (an over-estimate, up to twice the members
/// of an object): four times [`MAX_LEAVES`], so a document within the leaf cap is never refused
/// for it, while the parsed tree stays small (16,384 nodes, about 1 MiB).
pub const MAX_VALUES: usize = 4 * MAX_LEAVES;

/// Why `jsonExpand` failed. Texts follow the Go operator's; key names only, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandFailure {
    /// The value does not parse as JSON.
    #[error("key {0:?}: not valid JSON")]
    NotJson(String),
    /// Valid JSON that is not an object.
    #[error("key {0:?}: JSON value is not an object")]
    NotJsonObject(String),
    /// A flattened key that already exists.
    #[error("expanded key {0:?} collides with existing key")]
    ExpandedKeyCollides(String),
    /// The value nests objects or arrays deeper than [`MAX_DEPTH`]; it was not parsed.
    #[error("key {0:?}: JSON nested deeper than {MAX_DEPTH} levels")]
    TooDeep(String),
    /// The value holds more than [`MAX_VALUES`] JSON values; it was not parsed.
    #[error("key {0:?}: JSON value with more than {MAX_VALUES} values")]
    TooManyValues(String),
    /// The value would flatten into more than [`MAX_LEAVES`] keys.
    #[error("key {0:?}: expands into more than {MAX_LEAVES} keys")]
    TooManyLeaves(String),
    /// The expansion would take the content over `limit` bytes; it stopped before that.
    #[error("output over the {limit}-byte limit")]
    OutputTooLarge {
        /// The limit the caller gave.
        limit: usize,
    },
}

/// Expands `key` in `data`, the result being at most `limit` bytes (keys and values, as
/// [`payload_bytes`] counts); see the module guarantees and bounds.
///
/// # Errors
/// An [`ExpandFailure`]; none of them quotes the value.
pub fn expand(mut data: SecretData, key: &str, limit: usize) -> Result<SecretData, ExpandFailure> {
    let Some(raw) = data.remove(key) else {
        return Ok(data);
    };
    check_shape(&raw).map_err(|failure| failure(key.to_owned()))?;
    let parsed: Value = serde_json::from_slice(&raw).map_err(|_| ExpandFailure::NotJson(key.to_owned()))?;
    drop(raw);
    let Value::Object(object) = parsed else {
        return Err(ExpandFailure::NotJsonObject(key.to_owned()));
    };
    let bytes_left = limit
        .checked_sub(payload_bytes(&data))
        .ok_or(ExpandFailure::OutputTooLarge { limit })?;
    let mut expansion = Expansion {
        source: key,
        out: &mut data,
        leaves: 0,
        bytes_left,
        limit,
    };
    expansion.flatten(&mut key.to_uppercase(), &object)?;
    Ok(data)
}

/// Scans `raw` as JSON text without parsing it: `Err` with the failure's constructor when it
/// nests deeper than [`MAX_DEPTH`] or holds more than [`MAX_VALUES`] values. Text that is not
/// JSON passes or fails alike; the parser then refuses it, having allocated no more values
/// than were counted (each value it reads follows a `[`, `,` or `:`, or is the document).
fn check_shape(raw: &[u8]) -> Result<(), fn(String) -> ExpandFailure> {
    let (mut depth, mut values) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in raw {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                (false, _) => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(ExpandFailure::TooDeep);
                }
                values += usize::from(byte == b'[');
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' | b':' => values += 1,
            _ => {}
        }
        if values > MAX_VALUES {
            return Err(ExpandFailure::TooManyValues);
        }
    }
    Ok(())
}

/// One expansion in progress.
struct Expansion<'a> {
    /// The expanded key, for error messages.
    source: &'a str,
    /// The content being expanded into (the source key already removed).
    out: &'a mut SecretData,
    /// Keys added so far; at most [`MAX_LEAVES`].
    leaves: usize,
    /// Bytes the output may still grow by before it is over [`Expansion::limit`].
    bytes_left: usize,
    /// The caller's limit on the whole output.
    limit: usize,
}

impl Expansion<'_> {
    /// Adds `object`'s leaves under `name` (restored as it was on return). Every key below a
    /// name is longer than it, so a name that cannot fit stops the expansion at once.
    fn flatten(&mut self, name: &mut String, object: &Map<String, Value>) -> Result<(), ExpandFailure> {
        let mut entries: Vec<_> = object.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (subkey, value) in entries {
            let parent = name.len();
            let subkey = subkey.to_uppercase();
            if parent + 1 + subkey.len() > self.bytes_left {
                return Err(self.too_large());
            }
            name.push('_');
            name.push_str(&subkey);
            match value {
                Value::Object(inner) => self.flatten(name, inner)?,
                leaf => self.insert(name, leaf)?,
            }
            name.truncate(parent);
        }
        Ok(())
    }

    /// Adds the leaf `name`, if it is new, within the leaf cap and the size limit.
    fn insert(&mut self, name: &str, leaf: &Value) -> Result<(), ExpandFailure> {
        if self.out.contains_key(name) {
            return Err(ExpandFailure::ExpandedKeyCollides(name.to_owned()));
        }
        if self.leaves == MAX_LEAVES {
            return Err(ExpandFailure::TooManyLeaves(self.source.to_owned()));
        }
        let text = leaf_text(leaf);
        self.bytes_left = self
            .bytes_left
            .checked_sub(name.len() + text.len())
            .ok_or_else(|| self.too_large())?;
        self.leaves += 1;
        self.out.insert(name.to_owned(), text.into_bytes());
        Ok(())
    }

    fn too_large(&self) -> ExpandFailure {
        ExpandFailure::OutputTooLarge { limit: self.limit }
    }
}

fn leaf_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(flag) => flag.to_string(),
        Value::Null => String::new(),
        Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(int), _, _) => int.to_string(),
            (None, Some(uint), _) => uint.to_string(),
            (None, None, Some(float)) => format_json_float(float),
            (None, None, None) => number.to_string(),
        },
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// Largest magnitude printed as an integer; beyond it an `i64` cannot hold the value.
const LARGEST_INTEGER_PRINTED: f64 = 9.2e18;

/// A whole float as an integer, else Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
fn format_json_float(float: f64) -> String {
    if float.fract() == 0.0 && float.abs() < LARGEST_INTEGER_PRINTED {
        // Whole and inside i64: the cast is exact.
        return (float as i64).to_string();
    }
    go_shortest_g(float)
}

/// Go's shortest `%g`: scientific when the decimal exponent is < -4 or >= 6 (Go's rule for the
/// shortest precision), with a signed exponent of at least two digits; plain decimal otherwise.
fn go_shortest_g(float: f64) -> String {
    let scientific = format!("{float:e}"); // shortest round-trip digits, e.g. "1.2345675e6"
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always prints an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` prints an integer exponent");
    if (-4..6).contains(&exponent) {
        return float.to_string(); // shortest round-trip digits without an exponent
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::content::{MAX_SECRET_BYTES, secret_data_from_strings};

    /// `expand` within a Secret's limit.
    fn expanded(data: SecretData, key: &str) -> Result<SecretData, ExpandFailure> {
        expand(data, key, MAX_SECRET_BYTES)
    }

    fn one(key: &str, value: &str) -> SecretData {
        secret_data_from_strings([(key.to_owned(), value.to_owned())])
    }

    fn text(data: &SecretData, key: &str) -> String {
        String::from_utf8(data[key].clone()).expect("utf-8")
    }

    #[test]
    fn json_expand_should_flatten_nested_objects_into_upper_case_keys_and_drop_the_source() {
        let out = expanded(
            one("db", r#"{"host":"h","port":5432,"tls":{"on":true,"ca":null}}"#),
            "db",
        )
        .unwrap();
        let keys: Vec<_> = out.keys().cloned().collect();
        assert_eq!(keys, ["DB_HOST", "DB_PORT", "DB_TLS_CA", "DB_TLS_ON"]);
        assert_eq!(text(&out, "DB_HOST"), "h");
        assert_eq!(text(&out, "DB_PORT"), "5432");
        assert_eq!(text(&out, "DB_TLS_ON"), "true");
        assert_eq!(text(&out, "DB_TLS_CA"), "");
    }

    #[test]
    fn json_expand_should_print_numbers_and_arrays_like_the_go_operator() {
        let json = r#"{"a":1.5,"b":5432.0,"c":[1,"x",{"y":2}],"d":1234567.5,"e":0.00001,"f":-0.25,"g":1e3}"#;
        let out = expanded(one("k", json), "k").unwrap();
        assert_eq!(text(&out, "K_A"), "1.5");
        assert_eq!(text(&out, "K_B"), "5432");
        assert_eq!(text(&out, "K_C"), r#"[1,"x",{"y":2}]"#);
        assert_eq!(text(&out, "K_D"), "1.2345675e+06");
        assert_eq!(text(&out, "K_E"), "1e-05");
        assert_eq!(text(&out, "K_F"), "-0.25");
        assert_eq!(text(&out, "K_G"), "1000");
    }

    #[test]
    fn json_expand_of_a_missing_key_should_change_nothing() {
        let input = one("other", "v");
        assert_eq!(expanded(input.clone(), "db").unwrap(), input);
    }

    #[test]
    fn json_expand_should_refuse_invalid_json_and_non_objects_without_quoting_the_value() {
        let err = expanded(one("db", "{not json secret-value"), "db").unwrap_err();
        assert_eq!(err, ExpandFailure::NotJson("db".into()));
        assert!(!err.to_string().contains("secret-value"));
        let err = expanded(one("db", r#"["secret-value"]"#), "db").unwrap_err();
        assert_eq!(err.to_string(), r#"key "db": JSON value is not an object"#);
    }

    #[test]
    fn json_expand_should_refuse_a_flattened_key_that_already_exists() {
        let mut input = one("db", r#"{"host":"h"}"#);
        input.insert("DB_HOST".into(), b"old".to_vec());
        let err = expanded(input, "db").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"expanded key "DB_HOST" collides with existing key"#
        );
    }

    #[test]
    fn json_expand_should_refuse_two_subkeys_that_flatten_to_the_same_name() {
        let err = expanded(one("x", r#"{"a_b":"1","a":{"b":"2"}}"#), "x").unwrap_err();
        assert_eq!(err, ExpandFailure::ExpandedKeyCollides("X_A_B".into()));
    }

    /// `levels` objects nested in each other around one leaf.
    fn nested(levels: usize) -> String {
        format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn json_expand_should_take_the_deepest_allowed_nesting_and_refuse_one_level_more() {
        let out = expanded(one("x", &nested(MAX_DEPTH)), "x").unwrap();
        assert_eq!(out.len(), 1);
        let err = expanded(one("x", &nested(MAX_DEPTH + 1)), "x").unwrap_err();
        assert_eq!(err, ExpandFailure::TooDeep("x".into()));
        assert_eq!(err.to_string(), r#"key "x": JSON nested deeper than 32 levels"#);
        // Arrays nest too (inside a leaf).
        let arrays = format!(r#"{{"a":{}{}}}"#, "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(
            expanded(one("x", &arrays), "x").unwrap_err(),
            ExpandFailure::TooDeep("x".into())
        );
    }

    #[test]
    fn json_expand_should_count_values_before_parsing_and_refuse_one_over_the_cap() {
        // {"a":[0,0,…]}: the object, its member and the array's elements.
        let array = |elements: usize| format!(r#"{{"a":[{}]}}"#, vec!["0"; elements].join(","));
        let out = expanded(one("x", &array(MAX_VALUES - 2)), "x").unwrap();
        assert_eq!(
            out["X_A"].len(),
            2 * (MAX_VALUES - 2) + 1,
            "one leaf, the array as JSON"
        );
        let err = expanded(one("x", &array(MAX_VALUES - 1)), "x").unwrap_err();
        assert_eq!(err, ExpandFailure::TooManyValues("x".into()));
        assert_eq!(
            err.to_string(),
            r#"key "x": JSON value with more than 16384 values"#
        );
    }

    #[test]
    fn json_expand_should_ignore_brackets_and_separators_inside_strings() {
        let tricky = format!(r#"{{"a":"{}","b\"[{{":"\\\"[[,:"}}"#, "[{,:".repeat(MAX_VALUES));
        let out = expanded(one("x", &tricky), "x").unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(text(&out, r#"X_B"[{"#), r#"\"[[,:"#);
    }

    #[test]
    fn json_expand_should_add_the_most_leaves_allowed_and_refuse_one_more() {
        let flat = |leaves: usize| {
            let members: Vec<String> = (0..leaves).map(|i| format!(r#""k{i}":1"#)).collect();
            format!("{{{}}}", members.join(","))
        };
        assert_eq!(
            expanded(one("x", &flat(MAX_LEAVES)), "x").unwrap().len(),
            MAX_LEAVES
        );
        let err = expanded(one("x", &flat(MAX_LEAVES + 1)), "x").unwrap_err();
        assert_eq!(err, ExpandFailure::TooManyLeaves("x".into()));
        assert_eq!(err.to_string(), r#"key "x": expands into more than 4096 keys"#);
    }

    #[test]
    fn json_expand_should_fill_its_limit_exactly_and_refuse_one_byte_over() {
        // Output: "rest" + "r" (5 bytes) and "X_K" + the leaf.
        let mut input = one("x", r#"{"k":"0123456789"}"#);
        input.insert("rest".into(), b"r".to_vec());
        let exact = 5 + 3 + 10;
        assert_eq!(payload_bytes(&expand(input.clone(), "x", exact).unwrap()), exact);
        let err = expand(input, "x", exact - 1).unwrap_err();
        assert_eq!(err, ExpandFailure::OutputTooLarge { limit: exact - 1 });
    }

    #[test]
    fn json_expand_should_stop_a_multiplying_value_at_its_limit() {
        // Ten levels of 10,000-character keys over 2,000 leaves: each leaf's name is 100 KB, the
        // whole expansion 200 MB. It stops at the limit, having built at most that.
        let long = |c: char| format!("\"{}\"", c.to_string().repeat(10_000));
        let leaves: Vec<String> = (0..2000).map(|i| format!(r#""l{i}":1"#)).collect();
        let mut json = format!("{{{}}}", leaves.join(","));
        for level in 0..10u8 {
            json = format!("{{{}:{json}}}", long(char::from(b'a' + level)));
        }
        let err = expanded(one("x", &json), "x").unwrap_err();
        assert_eq!(
            err,
            ExpandFailure::OutputTooLarge {
                limit: MAX_SECRET_BYTES
            }
        );
        // A name longer than the limit stops the expansion before any leaf below it.
        let err = expand(one("x", &json), "x", 50_000).unwrap_err();
        assert_eq!(err, ExpandFailure::OutputTooLarge { limit: 50_000 });
    }

    #[test]
    fn json_expand_bound_errors_should_never_quote_the_value() {
        let secret = "s3cr3t-value";
        for json in [
            format!(r#"{{"{secret}":{}}}"#, nested(MAX_DEPTH)),
            format!(r#"{{"{secret}":[{}]}}"#, vec!["0"; MAX_VALUES].join(",")),
            format!(r#"{{"{secret}":"{}"}}"#, "v".repeat(64)),
        ] {
            let err = expand(one("x", &json), "x", 32).unwrap_err();
            assert!(!err.to_string().contains("s3cr3t"), "{err}");
            assert!(!format!("{err:?}").contains("s3cr3t"), "{err:?}");
        }
    }
}
