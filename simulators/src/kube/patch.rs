//! The four patch types, applied to the stored object.
//!
//! - `application/merge-patch+json`: RFC 7386 (the `json-patch` crate's `merge`).
//! - `application/json-patch+json`: RFC 6902 (the `json-patch` crate's `patch`).
//! - `application/strategic-merge-patch+json`: merge semantics for maps. Lists are
//!   replaced, except lists of objects that all carry a `name` key (containers, env,
//!   volumes, ports with names, …) or all a `type` key (conditions): those merge by that
//!   key, the way the real merge keys (`name`, `type`) do for the common fields. Directive
//!   keys (`$patch`, `$setElementOrder/…`, `$retainKeys`, `$deleteFromPrimitiveList/…`)
//!   are honoured for `$patch: delete` in list items and map entries and otherwise dropped.
//! - `application/apply-patch+yaml`: server-side apply approximated as a merge of the
//!   applied configuration (no conflict detection; the caller records an `Apply`
//!   managedFields entry, see [`super::managed`]); creates the object if missing (the
//!   caller handles that case).

use super::errors::ApiError;
use serde_json::{Map, Value};

/// A supported patch type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 7386 JSON merge patch.
    Merge,
    /// RFC 6902 JSON patch.
    Json,
    /// Kubernetes strategic merge patch (see module docs for list handling).
    Strategic,
    /// Server-side apply (merge of the applied configuration).
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type`, ignoring parameters.
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/json-patch+json" => Some(PatchType::Json),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Parses a patch body (YAML for apply patches, JSON otherwise).
///
/// # Errors
/// 400 BadRequest when the body does not parse.
pub fn parse_body(kind: PatchType, body: &[u8]) -> Result<Value, ApiError> {
    let parsed = match kind {
        PatchType::Apply => serde_norway::from_slice::<Value>(body).map_err(|e| e.to_string()),
        _ => serde_json::from_slice::<Value>(body).map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
}

/// Applies a parsed patch to `target`.
///
/// # Errors
/// 422 Invalid when a JSON patch operation fails (missing path, failed test), as the
/// real server reports it; 400 when a JSON patch is not a list of operations.
pub fn apply(kind: PatchType, target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let mut out = target.clone();
    match kind {
        PatchType::Merge | PatchType::Apply => json_patch::merge(&mut out, patch),
        PatchType::Strategic => strategic_merge(&mut out, patch),
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("error decoding json patch: {e}")))?;
            json_patch::patch(&mut out, &ops).map_err(|e| ApiError {
                code: 422,
                reason: "Invalid",
                message: format!("the server rejected our request due to an error in our request: {e}"),
                details: None,
                retry_after: None,
            })?;
        }
    }
    Ok(out)
}

const MERGE_KEYS: [&str; 2] = ["name", "type"];

fn strategic_merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = Value::Object(strip_directives(p));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let t = target.as_object_mut().expect("made an object above");
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        match v {
            Value::Null => {
                t.remove(k);
            }
            Value::Object(o) if o.get("$patch").and_then(Value::as_str) == Some("delete") => {
                t.remove(k);
            }
            Value::Array(items) => {
                let merged = merge_list(t.get(k), items);
                t.insert(k.clone(), merged);
            }
            _ => strategic_merge(t.entry(k.clone()).or_insert(Value::Null), v),
        }
    }
}

fn strip_directives(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The merge key shared by every object in `items`, if any.
fn merge_key(items: &[Value]) -> Option<&'static str> {
    MERGE_KEYS
        .into_iter()
        .find(|k| !items.is_empty() && items.iter().all(|i| i.get(*k).is_some()))
}

fn merge_list(current: Option<&Value>, patch_items: &[Value]) -> Value {
    let current_items = current.and_then(Value::as_array).cloned().unwrap_or_default();
    let Some(key) = merge_key(patch_items) else {
        return Value::Array(patch_items.iter().map(|v| strip_value(v.clone())).collect());
    };
    if !current_items.iter().all(|i| i.get(key).is_some()) {
        return Value::Array(patch_items.iter().map(|v| strip_value(v.clone())).collect());
    }
    let mut out = current_items;
    for item in patch_items {
        let pos = out.iter().position(|c| c.get(key) == item.get(key));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                out.remove(i);
            }
            (Some(i), false) => strategic_merge(&mut out[i], item),
            (None, true) => {}
            (None, false) => out.push(strip_value(item.clone())),
        }
    }
    Value::Array(out)
}

fn strip_value(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            strip_directives(&m)
                .into_iter()
                .map(|(k, v)| (k, strip_value(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_should_remove_nulls_and_merge_maps() {
        let out = apply(
            PatchType::Merge,
            &json!({"a": {"b": 1, "c": 2}}),
            &json!({"a": {"b": null, "d": 3}}),
        )
        .expect("patch");
        assert_eq!(out, json!({"a": {"c": 2, "d": 3}}));
    }

    #[test]
    fn json_patch_should_fail_with_422_on_a_missing_path() {
        let e = apply(
            PatchType::Json,
            &json!({}),
            &json!([{"op": "remove", "path": "/x"}]),
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
    }

    #[test]
    fn strategic_merge_should_merge_named_lists_and_drop_directives() {
        let target =
            json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}});
        let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "b", "image": "2"}, {"name": "a", "$patch": "delete"}]}});
        let out = apply(PatchType::Strategic, &target, &patch).expect("patch");
        assert_eq!(
            out,
            json!({"spec": {"containers": [{"name": "b", "image": "2"}]}})
        );
    }

    #[test]
    fn strategic_merge_should_replace_lists_without_merge_keys() {
        let out = apply(
            PatchType::Strategic,
            &json!({"f": ["a", "b"]}),
            &json!({"f": ["c"]}),
        )
        .expect("patch");
        assert_eq!(out, json!({"f": ["c"]}));
    }
}
