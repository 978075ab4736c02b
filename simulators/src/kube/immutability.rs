//! Fields of built-in kinds an update may not change, as `ValidateSecretUpdate` and
//! `ValidateConfigMapUpdate` refuse them: a Secret's `type`, and the content of Secrets and
//! ConfigMaps marked `immutable: true` (whose flag cannot be unset either; deleting the
//! object is the only way out). Metadata stays editable.

use super::{
    errors::ApiError,
    field_errors::{BadValue, FieldError},
    registry::ResourceType,
};
use serde_json::{Map, Value};

const LOCKED: &str = "field is immutable when `immutable` is set";

/// Refuses an update of `old` to `new` (both normalised, the object `name`) that changes what
/// cannot change.
///
/// # Errors
/// 422 Invalid with one cause per refused field, in the order the real validation lists them.
pub fn check_update(rt: &ResourceType, name: &str, old: &Value, new: &Value) -> Result<(), ApiError> {
    let errors = match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "secrets") => {
            let mut errors: Vec<FieldError> = Vec::new();
            if old.get("type") != new.get("type") {
                errors.push(FieldError::invalid(
                    "type",
                    BadValue::Str(new["type"].as_str().unwrap_or_default().to_owned()),
                    "field is immutable",
                ));
            }
            errors.extend(content_lock(old, new, &["data"]));
            errors
        }
        ("", "configmaps") => content_lock(old, new, &["data", "binaryData"]),
        _ => return Ok(()),
    };
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid_fields("", &rt.kind, name, &errors))
}

/// The errors of an update of an `immutable: true` object that unsets the flag or changes
/// `fields`.
fn content_lock(old: &Value, new: &Value, fields: &[&str]) -> Vec<FieldError> {
    if !is_immutable(old) {
        return Vec::new();
    }
    let mut errors = Vec::new();
    if !is_immutable(new) {
        errors.push(FieldError::forbidden("immutable", LOCKED));
    }
    for field in fields {
        if content(old, field) != content(new, field) {
            errors.push(FieldError::forbidden(field, LOCKED));
        }
    }
    errors
}

fn is_immutable(obj: &Value) -> bool {
    obj.get("immutable").and_then(Value::as_bool) == Some(true)
}

/// A map field, an empty one counting as absent (storage does not keep empty maps).
fn content<'a>(obj: &'a Value, field: &str) -> Option<&'a Map<String, Value>> {
    obj.get(field)
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::Registry;
    use serde_json::json;

    #[test]
    fn a_secret_type_should_never_change() {
        let old = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {}});
        let mut retyped = old.clone();
        retyped["type"] = json!("kubernetes.io/tls");
        let e = check_update(&Registry::builtin_type("", "secrets"), "s", &old, &retyped).unwrap_err();
        assert_eq!(
            e.message,
            r#"Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable"#
        );
    }

    #[test]
    fn an_immutable_config_map_should_keep_its_content_and_flag_but_not_its_labels() {
        let old = json!({"metadata": {"name": "c"}, "immutable": true, "data": {"a": "1"}});
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"x": "y"});
        assert!(check_update(&Registry::builtin_type("", "configmaps"), "c", &old, &relabelled).is_ok());
        let unlocked = json!({"metadata": {"name": "c"}, "data": {"a": "2"}});
        let e = check_update(&Registry::builtin_type("", "configmaps"), "c", &old, &unlocked).unwrap_err();
        assert_eq!(
            e.message,
            "ConfigMap \"c\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: Forbidden: field is immutable when `immutable` is set]"
        );
    }
}
