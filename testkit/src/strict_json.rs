//! A JSON reader that refuses duplicate keys at any depth, where `serde_json` silently keeps the
//! last value: log pipelines differ on which one they keep, so a duplicate is a defect.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// `text` as JSON, or why not (a syntax error, or the first duplicate key).
pub fn parse_strict(text: &str) -> Result<Value, String> {
    serde_json::from_str::<Strict>(text)
        .map(|strict| strict.0)
        .map_err(|error| error.to_string())
}

/// Every line of a zap-style JSON log: parsed strictly, each an object with `ts`, `level`,
/// `logger` and `msg`.
///
/// # Errors
/// The first offending line, numbered from 1, and why.
pub fn zap_log_lines(log: &str) -> Result<Vec<Map<String, Value>>, String> {
    let mut lines = Vec::new();
    for (index, line) in log
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
    {
        let fail = |why: String| format!("log line {}: {why}: {line}", index + 1);
        let Value::Object(object) = parse_strict(line).map_err(fail)? else {
            return Err(fail("not a JSON object".into()));
        };
        for key in ["ts", "level", "logger", "msg"] {
            if !object.contains_key(key) {
                return Err(fail(format!("no {key:?} key")));
            }
        }
        lines.push(object);
    }
    Ok(lines)
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Strict, E> {
        Ok(Strict(Value::from(v)))
    }

    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Strict(Value::Array(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Strict, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let Strict(value) = access.next_value()?;
            if map.insert(key.clone(), value).is_some() {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
        }
        Ok(Strict(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_should_be_refused_at_any_depth_and_unique_ones_read() {
        assert!(parse_strict(r#"{"a":1,"b":{"c":[1,{"d":2}]}}"#).is_ok());
        let error = parse_strict(r#"{"target":"x","target":"y"}"#).expect_err("duplicate");
        assert!(error.contains("duplicate key \"target\""), "{error}");
        parse_strict(r#"{"a":[{"m":1,"m":2}]}"#).expect_err("nested duplicate");
        let error = zap_log_lines("{\"ts\":1,\"level\":\"info\",\"logger\":\"x\"}\n").expect_err("no msg");
        assert!(error.contains("\"msg\""), "{error}");
    }
}
