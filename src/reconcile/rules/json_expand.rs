//! The `jsonExpand` transform: flattens a JSON object value into upper-cased keys.
//!
//! # Guarantees (reference §3.7)
//! - `in[key]` must be a JSON object; the source key is dropped.
//! - Leaves become `UPPER(key)_UPPER(subkey)`, recursively for nested objects, visited in sorted
//!   order (so which collision is reported is deterministic).
//! - Leaf text: a string as is; `true`/`false`; a whole number as an integer (`5432`), another
//!   number in Go's shortest `%g` form (`1.5`, `1.2345675e+06`); `null` as ""; arrays as compact JSON.
//! - A missing `key` is a no-op; an existing flattened key is a collision error.

use serde_json::{Map, Value};

use super::SecretData;

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
}

/// Expands `key` in `data`; see the module guarantees.
///
/// # Errors
/// An [`ExpandFailure`]; none of them quotes the value.
pub fn expand(mut data: SecretData, key: &str) -> Result<SecretData, ExpandFailure> {
    let Some(raw) = data.remove(key) else {
        return Ok(data);
    };
    let parsed: Value = serde_json::from_slice(&raw).map_err(|_| ExpandFailure::NotJson(key.to_owned()))?;
    let Value::Object(object) = parsed else {
        return Err(ExpandFailure::NotJsonObject(key.to_owned()));
    };
    flatten(&key.to_uppercase(), &object, &mut data)?;
    Ok(data)
}

fn flatten(prefix: &str, object: &Map<String, Value>, out: &mut SecretData) -> Result<(), ExpandFailure> {
    let mut entries: Vec<_> = object.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (subkey, value) in entries {
        let name = format!("{prefix}_{}", subkey.to_uppercase());
        match value {
            Value::Object(inner) => flatten(&name, inner, out)?,
            leaf => {
                if out.contains_key(&name) {
                    return Err(ExpandFailure::ExpandedKeyCollides(name));
                }
                out.insert(name, leaf_text(leaf).into_bytes());
            }
        }
    }
    Ok(())
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
    use crate::reconcile::rules::secret_data_from_strings;

    fn one(key: &str, value: &str) -> SecretData {
        secret_data_from_strings([(key.to_owned(), value.to_owned())])
    }

    fn text(data: &SecretData, key: &str) -> String {
        String::from_utf8(data[key].clone()).expect("utf-8")
    }

    #[test]
    fn json_expand_should_flatten_nested_objects_into_upper_case_keys_and_drop_the_source() {
        let out = expand(
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
        let out = expand(one("k", json), "k").unwrap();
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
        assert_eq!(expand(input.clone(), "db").unwrap(), input);
    }

    #[test]
    fn json_expand_should_refuse_invalid_json_and_non_objects_without_quoting_the_value() {
        let err = expand(one("db", "{not json secret-value"), "db").unwrap_err();
        assert_eq!(err, ExpandFailure::NotJson("db".into()));
        assert!(!err.to_string().contains("secret-value"));
        let err = expand(one("db", r#"["secret-value"]"#), "db").unwrap_err();
        assert_eq!(err.to_string(), r#"key "db": JSON value is not an object"#);
    }

    #[test]
    fn json_expand_should_refuse_a_flattened_key_that_already_exists() {
        let mut input = one("db", r#"{"host":"h"}"#);
        input.insert("DB_HOST".into(), b"old".to_vec());
        let err = expand(input, "db").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"expanded key "DB_HOST" collides with existing key"#
        );
    }

    #[test]
    fn json_expand_should_refuse_two_subkeys_that_flatten_to_the_same_name() {
        let err = expand(one("x", r#"{"a_b":"1","a":{"b":"2"}}"#), "x").unwrap_err();
        assert_eq!(err, ExpandFailure::ExpandedKeyCollides("X_A_B".into()));
    }
}
