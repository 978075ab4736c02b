//! The OpenAPI value validations of a structural schema, in kube-openapi's words and order,
//! turned into field errors as the apiextensions server turns them
//! (`kubeOpenAPIResultToFieldErrors`), then the `x-kubernetes-list-type` invariants.
//!
//! # Guarantees
//! - Ratcheting: a value equal to the one it replaces (same field, or the list entry with
//!   the same map keys / the same set element) is not validated, nor is anything below it.
//! - A value of the wrong type gets one type error (and an enum error if it is outside the
//!   enum); nothing below it is checked.
//! - `metadata` at the root is left to ObjectMeta validation (not done here).
//! - Formats checked: `date-time`, `date`, `byte`, `uuid`, `ipv4`, `ipv6`; other formats are
//!   accepted as any string.

use super::walk::{child_path, correlated_item, list_map_keys};
use crate::kube::field_errors::{BadValue, FieldError, go_syntax};
use base64::{Engine, engine::general_purpose::STANDARD};
use serde_json::{Map, Value};

/// The value errors of `obj` against its root `schema`; `old` is the object an update
/// replaces (ratcheting), None on create.
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if old == Some(obj) {
        return errors;
    }
    if let Value::Object(map) = obj {
        let mut without_meta = map.clone();
        without_meta.remove("metadata");
        let old_without_meta = old.and_then(Value::as_object).map(|m| {
            let mut m = m.clone();
            m.remove("metadata");
            Value::Object(m)
        });
        node(
            schema,
            &Value::Object(without_meta.clone()),
            old_without_meta.as_ref(),
            "",
            &mut errors,
        );
        let old_list_errors = old_without_meta.as_ref().map(|o| list_errors(schema, o, ""));
        if old_list_errors.is_none_or(|e| e.is_empty()) {
            errors.extend(list_errors(schema, &Value::Object(without_meta), ""));
        }
    }
    errors
}

fn node(schema: &Value, value: &Value, old: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    if old == Some(value) {
        return;
    }
    if value.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
        return;
    }
    if let Some(expected) = type_mismatch(schema, value) {
        let actual = json_type(value);
        errors.push(FieldError::type_invalid(
            path,
            BadValue::Str(actual.into()),
            format!("{path} in body must be of type {expected}: \"{actual}\""),
        ));
        enumeration(schema, value, path, errors);
        return;
    }
    for branch in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        node(branch, value, old, path, errors);
    }
    match value {
        Value::String(s) => string(schema, s, path, errors),
        Value::Number(_) => number(schema, value, path, errors),
        Value::Array(items) => array(schema, items, old, path, errors),
        _ => {}
    }
    enumeration(schema, value, path, errors);
    if let Value::Object(map) = value {
        object(schema, map, old, path, errors);
    }
}

/// The expected type when `value` does not have it.
fn type_mismatch(schema: &Value, value: &Value) -> Option<&'static str> {
    if schema.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return (!(value.is_string() || is_integer(value))).then_some("integer,string");
    }
    let expected = schema.get("type").and_then(Value::as_str)?;
    let matches = match expected {
        "string" => value.is_string(),
        "integer" => is_integer(value),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => true,
    };
    (!matches).then_some(match expected {
        "string" => "string",
        "integer" => "integer",
        "number" => "number",
        "boolean" => "boolean",
        "object" => "object",
        _ => "array",
    })
}

fn is_integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// The JSON type of a decoded value, as the validator names it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(value) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn u64_of(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn string(schema: &Value, s: &str, path: &str, errors: &mut Vec<FieldError>) {
    let chars = s.chars().count() as u64;
    if let Some(max) = u64_of(schema, "maxLength")
        && chars > max
    {
        errors.push(FieldError::too_long(path, max));
    }
    if let Some(min) = u64_of(schema, "minLength")
        && chars < min
    {
        errors.push(FieldError::invalid(
            path,
            BadValue::Str(s.into()),
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(s))
    {
        errors.push(FieldError::invalid(
            path,
            BadValue::Str(s.into()),
            format!("{path} in body should match '{pattern}'"),
        ));
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && !format_matches(format, s)
    {
        errors.push(FieldError::type_invalid(
            path,
            BadValue::Str(s.into()),
            format!("{path} in body must be of type {format}: {s:?}"),
        ));
    }
}

fn format_matches(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "date" => s.len() == 10 && s.parse::<jiff::civil::Date>().is_ok(),
        "byte" => STANDARD.decode(s).is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid::Uuid::try_parse(s).is_ok_and(|_| s.len() == 36),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        _ => true,
    }
}

fn number(schema: &Value, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let n = value.as_f64().unwrap_or_default();
    let bad = |detail: String| FieldError::invalid(path, BadValue::of(value), detail);
    let exclusive = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        if exclusive("exclusiveMaximum") && n >= max {
            errors.push(bad(format!("{path} in body should be less than {max}")));
        } else if n > max {
            errors.push(bad(format!(
                "{path} in body should be less than or equal to {max}"
            )));
        }
    }
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        if exclusive("exclusiveMinimum") && n <= min {
            errors.push(bad(format!("{path} in body should be greater than {min}")));
        } else if n < min {
            errors.push(bad(format!(
                "{path} in body should be greater than or equal to {min}"
            )));
        }
    }
    if let Some(factor) = schema.get("multipleOf").and_then(Value::as_f64)
        && factor > 0.0
        && (n / factor).fract() != 0.0
    {
        errors.push(bad(format!("{path} in body should be a multiple of {factor}")));
    }
}

fn array(schema: &Value, items: &[Value], old: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(items_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            let old_item = correlated_item(schema, item, old);
            node(items_schema, item, old_item, &format!("{path}[{i}]"), errors);
        }
    }
    let len = items.len();
    if let Some(min) = u64_of(schema, "minItems")
        && (len as u64) < min
    {
        errors.push(FieldError::invalid(
            path,
            BadValue::Plain(len.to_string()),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = u64_of(schema, "maxItems")
        && len as u64 > max
    {
        errors.push(FieldError::too_many(path, len, max));
    }
}

fn enumeration(schema: &Value, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(allowed) = schema.get("enum").and_then(Value::as_array) else {
        return;
    };
    if allowed.contains(value) {
        return;
    }
    let supported: Vec<String> = allowed
        .iter()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .collect();
    errors.push(FieldError::not_supported(path, BadValue::of(value), &supported));
}

fn object(
    schema: &Value,
    map: &Map<String, Value>,
    old: Option<&Value>,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let count = map.len();
    if let Some(min) = u64_of(schema, "minProperties")
        && (count as u64) < min
    {
        errors.push(FieldError::invalid(
            path,
            BadValue::Plain(count.to_string()),
            format!("{path} in body should have at least {min} properties"),
        ));
        return;
    }
    if let Some(max) = u64_of(schema, "maxProperties")
        && count as u64 > max
    {
        errors.push(FieldError::too_many(path, count, max));
        return;
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let is_property = |k: &str| properties.is_some_and(|p| p.contains_key(k));
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        for (key, value) in map.iter().filter(|(k, _)| !is_property(k)) {
            let old_value = old.and_then(|o| o.get(key));
            node(additional, value, old_value, &child_path(path, key), errors);
        }
    }
    for (name, property) in properties.into_iter().flatten() {
        if let Some(value) = map.get(name) {
            let old_value = old.and_then(|o| o.get(name));
            node(property, value, old_value, &child_path(path, name), errors);
        }
    }
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = required.as_str()
            && !map.contains_key(name)
        {
            errors.push(FieldError::required(&child_path(path, name), ""));
        }
    }
}

/// Duplicates in lists typed `set` (equal elements) or `map` (equal key fields).
fn list_errors(schema: &Value, value: &Value, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match value {
        Value::Array(items) => {
            if let Some(items_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    errors.extend(list_errors(items_schema, item, &format!("{path}[{i}]")));
                }
            }
            errors.extend(duplicates(schema, items, path));
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, v) in map {
                if let Some(s) = properties.and_then(|p| p.get(key)).or(additional) {
                    errors.extend(list_errors(s, v, &child_path(path, key)));
                }
            }
        }
        _ => {}
    }
    errors
}

fn duplicates(schema: &Value, items: &[Value], path: &str) -> Vec<FieldError> {
    let list_type = schema.get("x-kubernetes-list-type").and_then(Value::as_str);
    let identity = |item: &Value| -> Value {
        match list_type {
            Some("map") => Value::Object(
                list_map_keys(schema)
                    .into_iter()
                    .filter_map(|k| Some((k.to_owned(), item.get(k)?.clone())))
                    .collect(),
            ),
            _ => item.clone(),
        }
    };
    if !matches!(list_type, Some("map" | "set")) {
        return Vec::new();
    }
    let mut seen: Vec<Value> = Vec::new();
    let mut errors = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = identity(item);
        if seen.contains(&id) {
            let value = match list_type {
                Some("map") => BadValue::GoSyntax(go_syntax(&id)),
                _ => BadValue::of(item),
            };
            errors.push(FieldError::duplicate(&format!("{path}[{i}]"), value));
        } else {
            seen.push(id);
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: &Value, obj: &Value) -> Vec<String> {
        validate(schema, obj, None)
            .iter()
            .map(FieldError::message)
            .collect()
    }

    #[test]
    fn strings_should_be_checked_for_length_pattern_format_and_enum() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "minLength": 1},
            "b": {"type": "string", "pattern": "^https?://"},
            "c": {"type": "string", "format": "date-time"},
            "d": {"type": "string", "enum": ["x", "y"]},
            "e": {"type": "string", "maxLength": 2}
        }});
        assert_eq!(
            messages(
                &schema,
                &json!({"a": "", "b": "ftp://", "c": "now", "d": "z", "e": "abc"})
            ),
            [
                r#"a: Invalid value: "": a in body should be at least 1 chars long"#,
                r#"b: Invalid value: "ftp://": b in body should match '^https?://'"#,
                r#"c: Invalid value: "now": c in body must be of type date-time: "now""#,
                r#"d: Unsupported value: "z": supported values: "x", "y""#,
                "e: Too long: may not be more than 2 bytes",
            ]
        );
    }

    #[test]
    fn required_fields_and_items_should_be_reported_with_their_paths() {
        let schema = json!({"type": "object", "required": ["spec"], "properties": {"list": {
            "type": "array", "maxItems": 1,
            "items": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}}}}});
        assert_eq!(
            messages(&schema, &json!({"list": [{"type": 1}, {}]})),
            [
                r#"list[0].type: Invalid value: "integer": list[0].type in body must be of type string: "integer""#,
                "list[1].type: Required value",
                "list: Too many: 2: must have at most 1 item",
                "spec: Required value",
            ]
        );
    }

    #[test]
    fn list_maps_should_refuse_duplicate_keys() {
        let schema = json!({"type": "object", "properties": {"conditions": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
            "items": {"type": "object", "properties": {"type": {"type": "string"}}}}}});
        assert_eq!(
            messages(
                &schema,
                &json!({"conditions": [{"type": "Ready"}, {"type": "Ready"}]})
            ),
            [r#"conditions[1]: Duplicate value: map[string]interface {}{"type":"Ready"}"#]
        );
    }

    #[test]
    fn unchanged_list_map_entries_should_be_ratcheted() {
        let schema = json!({"type": "object", "properties": {"conditions": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
            "items": {"type": "object", "properties": {"type": {"type": "string"}, "n": {"type": "integer"}}}}}});
        let old = json!({"conditions": [{"type": "A", "n": "bad"}]});
        let new = json!({"conditions": [{"type": "B", "n": 1}, {"type": "A", "n": "bad"}]});
        assert!(validate(&schema, &new, Some(&old)).is_empty());
        assert_eq!(validate(&schema, &new, None).len(), 1);
    }
}
