//! CustomResourceDefinitions: validation of the names, registration of the resource and
//! the `NamesAccepted`/`Established` status the real apiextensions controller writes.

use super::{
    errors::ApiError,
    field_errors::{BadValue, FieldError},
    meta::{name_of, now_rfc3339},
    registry::ResourceType,
    store::{ObjKey, Store},
};
use serde_json::{Value, json};
use std::sync::Arc;

/// Checks what the real server checks before it will serve a CRD.
///
/// # Errors
/// 422 Invalid when required fields are missing or the name is not `<plural>.<group>`.
pub fn validate(crd: &Value) -> Result<(), ApiError> {
    let name = name_of(crd);
    let invalid = |error: FieldError| {
        ApiError::invalid_fields("apiextensions.k8s.io", "CustomResourceDefinition", name, &[error])
    };
    let t = ResourceType::from_crd(crd).ok_or_else(|| {
        invalid(FieldError::required(
            "spec",
            "group, names.plural, names.kind, scope and versions are required",
        ))
    })?;
    if t.versions.is_empty() {
        return Err(invalid(FieldError::invalid(
            "spec.versions",
            BadValue::GoSyntax("[]apiextensions.CustomResourceDefinitionVersion(nil)".into()),
            "must have exactly one version marked as storage version",
        )));
    }
    let expected = format!("{}.{}", t.plural, t.group);
    if name != expected {
        return Err(invalid(FieldError::invalid(
            "metadata.name",
            BadValue::Str(name.to_owned()),
            "must be spec.names.plural+\".\"+spec.group",
        )));
    }
    Ok(())
}

/// Registers the CRD's resource and writes its accepted/established status.
/// Returns the stored CRD (unchanged if it was already established as described).
pub fn establish(store: &mut Store, crd_type: &ResourceType, key: &ObjKey, crd: Arc<Value>) -> Arc<Value> {
    if crd.pointer("/metadata/deletionTimestamp").is_some() {
        return crd;
    }
    let Some(t) = ResourceType::from_crd(&crd) else {
        return crd;
    };
    let storage = t.preferred_version().to_string();
    store.registry.register(t);
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let names = crd.pointer("/spec/names").cloned().unwrap_or_default();
    let wanted_conditions = [
        ("NamesAccepted", "NoConflicts", "no conflicts found"),
        (
            "Established",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        ),
    ];
    let existing = status
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let conditions: Vec<Value> = wanted_conditions
        .iter()
        .map(|(ty, reason, message)| {
            existing.iter().find(|c| c["type"] == *ty && c["status"] == "True").cloned().unwrap_or_else(|| {
                json!({ "type": ty, "status": "True", "reason": reason, "message": message, "lastTransitionTime": now_rfc3339() })
            })
        })
        .collect();
    status["conditions"] = json!(conditions);
    status["acceptedNames"] = names;
    let mut stored_versions: Vec<Value> = status
        .get("storedVersions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !stored_versions.contains(&json!(storage)) {
        stored_versions.push(json!(storage));
    }
    status["storedVersions"] = json!(stored_versions);
    if crd.get("status") == Some(&status) {
        return crd;
    }
    let mut updated = (*crd).clone();
    updated["status"] = status;
    store.put(&crd_type.id(), key.clone(), updated)
}
