//! The `scale` subresource (`autoscaling/v1` `Scale`) of Deployments, StatefulSets and
//! ReplicaSets, as `kubectl scale` and autoscalers use it: reads show `spec.replicas`,
//! `status.replicas` and the selector; writes change the parent's `spec.replicas` only.
//!
//! A write is an update of the parent (its managedFields entry names no subresource, see
//! the caveats in [`super`]).

use super::{
    api::{self, Target, WriteOpts},
    errors::{ApiError, Subject},
    field_errors::{BadValue, FieldError},
    metadata::View,
    patch::{self, PatchType},
    registry::ResourceType,
    state::Shared,
};
use serde_json::{Value, json};

/// Whether `rt` has a scale subresource.
pub fn is_scalable(rt: &ResourceType) -> bool {
    rt.group == "apps" && matches!(rt.plural.as_str(), "deployments" | "statefulsets" | "replicasets")
}

/// The parent object's target (the request's, without the subresource).
fn parent(t: &Target) -> Target {
    Target {
        subresource: None,
        ..t.clone()
    }
}

/// The `Scale` of a stored parent object.
fn scale_of(obj: &Value) -> Value {
    let meta = &obj["metadata"];
    let mut metadata = json!({});
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(v) = meta.get(field) {
            metadata[field] = v.clone();
        }
    }
    let mut spec = json!({});
    if let Some(r) = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .filter(|r| *r != 0)
    {
        spec["replicas"] = json!(r);
    }
    let mut status =
        json!({ "replicas": obj.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0) });
    let selector = selector_string(obj.pointer("/spec/selector"));
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({ "kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata, "spec": spec, "status": status })
}

/// A label selector as `labels.Selector.String()` renders it (requirements sorted by key).
fn selector_string(sel: Option<&Value>) -> String {
    let Some(sel) = sel else {
        return String::new();
    };
    let mut parts: Vec<(String, String)> = sel["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default().to_string();
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            _ => format!("!{key}"),
        };
        parts.push((key, text));
    }
    parts.sort();
    parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}

/// GET the Scale.
///
/// # Errors
/// 404 when the parent does not exist.
pub fn get(shared: &Shared, t: &Target) -> Result<Value, ApiError> {
    api::get(shared, &parent(t), View::Full).map(|o| scale_of(&o))
}

/// PUT a Scale: sets the parent's `spec.replicas`.
///
/// # Errors
/// 404 without the parent, 409 for a stale `metadata.resourceVersion`, 422 for negative
/// or missing replicas.
pub fn update(shared: &Shared, t: &Target, scale: Value, opts: &WriteOpts) -> Result<Value, ApiError> {
    let current = api::get(shared, &parent(t), View::Full)?;
    write(shared, t, &current, &scale, opts)
}

/// PATCH a Scale (any patch type, applied to the Scale as read).
///
/// # Errors
/// As [`update`], plus 400/422 for a patch that does not apply.
pub fn patch(
    shared: &Shared,
    t: &Target,
    kind: PatchType,
    body: &[u8],
    opts: &WriteOpts,
) -> Result<Value, ApiError> {
    let current = api::get(shared, &parent(t), View::Full)?;
    let patched = patch::apply(kind, &scale_of(&current), &patch::parse_body(kind, body)?)?;
    write(shared, t, &current, &patched, opts)
}

fn write(
    shared: &Shared,
    t: &Target,
    current: &Value,
    scale: &Value,
    opts: &WriteOpts,
) -> Result<Value, ApiError> {
    let name = t.name.as_deref().unwrap_or_default();
    let rv = scale
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !rv.is_empty()
        && Some(rv)
            != current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
    {
        return Err(ApiError::conflict(Subject {
            group: &t.rt.group,
            resource: &t.rt.plural,
            name,
        }));
    }
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if replicas < 0 {
        return Err(ApiError::invalid_fields(
            "autoscaling",
            "Scale",
            name,
            &[FieldError::invalid(
                "spec.replicas",
                BadValue::Plain(replicas.to_string()),
                "must be greater than or equal to 0",
            )],
        ));
    }
    let mut updated = current.clone();
    updated["spec"]["replicas"] = json!(replicas);
    api::update(shared, &parent(t), updated, opts).map(|o| scale_of(&o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_should_show_desired_and_observed_replicas_and_the_selector() {
        let d = json!({"metadata": {"name": "web", "namespace": "ns", "resourceVersion": "7", "labels": {"a": "b"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b", "a"]}]}},
            "status": {"replicas": 2}});
        let s = scale_of(&d);
        assert_eq!(s["spec"], json!({"replicas": 3}));
        assert_eq!(
            s["status"],
            json!({"replicas": 2, "selector": "app=web,tier notin (a,b)"})
        );
        assert_eq!(
            s["metadata"],
            json!({"name": "web", "namespace": "ns", "resourceVersion": "7"})
        );
    }
}
