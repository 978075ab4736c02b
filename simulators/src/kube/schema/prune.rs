//! Pruning, as the real decoder does for a structural schema (`preserveUnknownFields: false`):
//! fields the schema does not specify are dropped, and so are `null`s of fields that are
//! not `nullable` (a default then fills them in).
//!
//! # Guarantees
//! - `apiVersion`, `kind` and `metadata` survive at the root and in embedded resources
//!   (`x-kubernetes-embedded-resource`); `metadata` keeps only `ObjectMeta` fields.
//! - Below `x-kubernetes-preserve-unknown-fields: true` unknown fields stay; specified
//!   properties are still pruned by their own schema.
//! - Every dropped unknown field is reported by path (`spec.items[0].foo`), in the order
//!   found, for `fieldValidation=Strict|Warn`; dropped nulls are not reported.

use super::walk::child_path;
use serde_json::{Map, Value};

/// The fields of `ObjectMeta`: the only ones `metadata` keeps.
const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The fields every object (the root, an embedded resource) keeps whatever its schema says.
const TYPE_AND_OBJECT_META: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prunes a whole object against its root schema, collecting unknown field paths.
pub fn prune_root(obj: &mut Value, schema: &Value, unknown: &mut Vec<String>) {
    prune_resource(obj, schema, "", unknown);
}

/// An object that carries `apiVersion`, `kind` and `metadata` (the root or an embedded one).
fn prune_resource(obj: &mut Value, schema: &Value, path: &str, unknown: &mut Vec<String>) {
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        let meta_path = child_path(path, "metadata");
        meta.retain(|k, _| {
            let known = OBJECT_META_FIELDS.contains(&k.as_str());
            if !known {
                unknown.push(child_path(&meta_path, k));
            }
            known
        });
    }
    if let Value::Object(map) = obj {
        prune_object(map, schema, path, unknown, &TYPE_AND_OBJECT_META);
    }
}

fn prune_value(value: &mut Value, schema: &Value, path: &str, unknown: &mut Vec<String>) {
    if schema
        .get("x-kubernetes-embedded-resource")
        .and_then(Value::as_bool)
        == Some(true)
    {
        prune_resource(value, schema, path, unknown);
        return;
    }
    match value {
        Value::Object(map) => prune_object(map, schema, path, unknown, &[]),
        Value::Array(items) => {
            if let Some(items_schema) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    prune_value(item, items_schema, &format!("{path}[{i}]"), unknown);
                }
            }
        }
        _ => {}
    }
}

fn prune_object(
    map: &mut Map<String, Value>,
    schema: &Value,
    path: &str,
    unknown: &mut Vec<String>,
    always_kept: &[&str],
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    let preserves = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true);
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        if always_kept.contains(&key.as_str()) {
            continue;
        }
        let field_path = child_path(path, &key);
        let field_schema = properties
            .and_then(|p| p.get(&key))
            .or_else(|| additional.filter(|a| a.is_object()));
        match field_schema {
            Some(s) if map[&key].is_null() && !is_nullable(s) => {
                map.remove(&key);
            }
            Some(s) => {
                if let Some(v) = map.get_mut(&key) {
                    prune_value(v, s, &field_path, unknown);
                }
            }
            None if preserves || additional.and_then(Value::as_bool) == Some(true) => {}
            None => {
                map.remove(&key);
                unknown.push(field_path);
            }
        }
    }
}

fn is_nullable(schema: &Value) -> bool {
    schema.get("nullable").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_should_go_but_preserved_and_map_values_stay() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                     "properties": {"inner": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "gone": {"type": "string"}
        }}}});
        let mut obj = json!({"kind": "K", "apiVersion": "v", "metadata": {"name": "n"}, "spec": {
            "labels": {"x": "y"},
            "free": {"anything": 1, "inner": {"a": "b", "b": 2}},
            "list": [{"a": "x", "z": 1}],
            "gone": null,
            "what": 1
        }});
        let mut unknown = Vec::new();
        prune_root(&mut obj, &schema, &mut unknown);
        assert_eq!(
            obj["spec"],
            json!({"labels": {"x": "y"}, "free": {"anything": 1, "inner": {"a": "b"}}, "list": [{"a": "x"}]})
        );
        assert_eq!(unknown, ["spec.free.inner.b", "spec.list[0].z", "spec.what"]);
    }
}
