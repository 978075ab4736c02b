//! `x-kubernetes-validations` rules evaluated server-side by kube's CEL engine
//! (`kube::core::cel`), reported as the apiextensions server reports them:
//! `<path>: Invalid value: "<type>": <message>` (or `Forbidden`/`Required`/`Duplicate` when
//! the rule names that `reason`), at the rule's node or its `fieldPath`.
//!
//! # Guarantees
//! - Each node's rules see that node as `self` (and its correlated old value as `oldSelf`);
//!   rules on null or absent values do not run.
//! - Ratcheting: at a node whose value is unchanged only transition rules (those using
//!   `oldSelf`) can fail; other rules' failures there are dropped, as in v1.33.

use super::walk::{child_path, correlated_item};
use crate::kube::field_errors::{BadValue, FieldError};
use kube::core::cel::{ErrorKind, ValidationError, Validator};
use serde_json::Value;

const RULES: &str = "x-kubernetes-validations";

thread_local! {
    /// The engine, with the Kubernetes CEL libraries registered once per thread.
    static ENGINE: Validator = Validator::new();
}

/// Whether `schema` declares any rule (the real server builds no CEL validator otherwise).
pub fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key(RULES) || map.values().any(has_rules),
        Value::Array(items) => items.iter().any(has_rules),
        _ => false,
    }
}

/// The rule failures of `obj` against its root `schema`; `old` is the object an update
/// replaces, None on create.
pub fn evaluate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    walk(schema, obj, old, "", &mut errors);
    errors
}

fn walk(schema: &Value, value: &Value, old: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        return;
    }
    if schema
        .get(RULES)
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty())
    {
        errors.extend(node_rules(schema, value, old, path));
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, child) in map {
                if let Some(s) = properties.and_then(|p| p.get(key)).or(additional) {
                    walk(
                        s,
                        child,
                        old.and_then(|o| o.get(key)),
                        &child_path(path, key),
                        errors,
                    );
                }
            }
        }
        Value::Array(items) => {
            if let Some(items_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let old_item = correlated_item(schema, item, old);
                    walk(items_schema, item, old_item, &format!("{path}[{i}]"), errors);
                }
            }
        }
        _ => {}
    }
}

/// The failures of the rules declared at this node (and only there).
fn node_rules(schema: &Value, value: &Value, old: Option<&Value>, path: &str) -> Vec<FieldError> {
    let unchanged = old == Some(value);
    let node_type = schema.get("type").and_then(Value::as_str).unwrap_or_default();
    let node_schema = without_descendant_rules(schema);
    match ENGINE.with(|engine| engine.validate(&node_schema, value, old)) {
        Ok(()) => Vec::new(),
        Err(failures) => failures
            .iter()
            .filter(|f| !unchanged || f.rule.contains("oldSelf"))
            .map(|f| field_error(f, path, node_type))
            .collect(),
    }
}

/// `schema` with the rules of everything below it removed, so the engine's own walk
/// evaluates this node's rules only (the walk here visits the others with their old values).
fn without_descendant_rules(schema: &Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove(RULES);
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut node = schema.clone();
    if let Value::Object(map) = &mut node {
        for (key, child) in map.iter_mut() {
            if key != RULES {
                strip(child);
            }
        }
    }
    node
}

fn field_error(failure: &ValidationError, node_path: &str, node_type: &str) -> FieldError {
    let relative = failure.field_path.trim_start_matches('.');
    let path = if relative.is_empty() {
        node_path.to_owned()
    } else {
        child_path(node_path, relative)
    };
    let message = match failure.kind {
        ErrorKind::ValidationFailure => failure.message.clone(),
        _ => {
            let cause =
                std::error::Error::source(failure).map_or_else(|| failure.message.clone(), |s| s.to_string());
            format!("{cause} evaluating rule: {}", failure.rule)
        }
    };
    let value = BadValue::Str(node_type.to_owned());
    match failure.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::forbidden(&path, message),
        Some("FieldValueRequired") => FieldError::required(&path, message),
        Some("FieldValueDuplicate") => FieldError::duplicate(&path, value),
        _ => FieldError::invalid(&path, value, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "mode": {"type": "string"},
            "name": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "name is immutable"}]}
        },
        "x-kubernetes-validations": [
            {"rule": "self.mode != 'cloud' || has(self.name)", "message": "name is required in cloud mode"},
            {"rule": "self.mode != 'x'", "fieldPath": ".mode", "reason": "FieldValueForbidden", "message": "x is gone"}
        ]}}})
    }

    fn messages(obj: &Value, old: Option<&Value>) -> Vec<String> {
        evaluate(&schema(), obj, old)
            .iter()
            .map(FieldError::message)
            .collect()
    }

    #[test]
    fn failing_rules_should_be_reported_at_their_node_or_field_path() {
        assert_eq!(
            messages(&json!({"spec": {"mode": "cloud"}}), None),
            [r#"spec: Invalid value: "object": name is required in cloud mode"#]
        );
        assert_eq!(
            messages(&json!({"spec": {"mode": "x"}}), None),
            ["spec.mode: Forbidden: x is gone"]
        );
    }

    #[test]
    fn transition_rules_should_see_the_old_value() {
        let old = json!({"spec": {"mode": "a", "name": "one"}});
        assert_eq!(
            messages(&json!({"spec": {"mode": "a", "name": "two"}}), Some(&old)),
            [r#"spec.name: Invalid value: "string": name is immutable"#]
        );
        assert!(messages(&json!({"spec": {"mode": "a", "name": "two"}}), None).is_empty());
    }

    #[test]
    fn unchanged_values_should_not_fail_their_rules_again() {
        let old = json!({"spec": {"mode": "cloud"}});
        assert!(messages(&old, Some(&old)).is_empty());
    }
}
