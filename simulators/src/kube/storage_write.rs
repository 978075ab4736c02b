//! A test control: an object written straight into storage, as `etcdctl put` would, past
//! every admission step (schema pruning, defaulting and validation, the kind's own
//! validation). It is how a test gets an object a real cluster can hold but no longer
//! accepts through its API: one stored under an older or a missing CRD schema.
//!
//! The server still does what storage itself does: a resourceVersion, the watch event, and
//! the metadata a create would set (uid, creationTimestamp, generation).

use super::{
    api::Target,
    errors::ApiError,
    gc,
    meta::{Stamp, prepare_create},
    metadata::View,
    state::Shared,
};
use serde_json::Value;

/// Stores `object` (with `metadata.name`, and `metadata.namespace` for namespaced kinds)
/// as `group`/`plural` at `version` and returns it as a client would read it.
///
/// # Errors
/// 404 for a resource not served, 409 AlreadyExists, 400/422 for an object without a name.
pub fn store_bypassing_admission(
    shared: &Shared,
    group: &str,
    version: &str,
    plural: &str,
    object: Value,
) -> Result<Value, ApiError> {
    let rt = shared
        .read()
        .registry
        .lookup(group, version, plural)
        .cloned()
        .ok_or_else(|| ApiError::no_route(plural))?;
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|_| rt.namespaced);
    let status = object.get("status").cloned();
    let stored = shared.write(|store| {
        let mut obj = prepare_create(&rt, version, namespace.as_deref(), object, &Stamp::fresh())?;
        if let Some(status) = status {
            obj["status"] = status;
        }
        let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let target = Target {
            rt: rt.clone(),
            version: version.to_owned(),
            namespace: namespace.clone(),
            name: Some(name.clone()),
            subresource: None,
        };
        let key = (namespace.clone().unwrap_or_default(), name);
        if store.get(&rt.id(), &key).is_some() {
            return Err(ApiError::already_exists(target.subject()));
        }
        let stored = store.put(&rt.id(), key, obj);
        Ok(target.render(&stored, View::Full))
    })?;
    if gc::concerns_collector(&stored) {
        shared.wake_collector();
    }
    Ok(stored)
}
