//! Per-kind normalisation applied on every write, as the real API server's defaulting,
//! decoding and validation do: Secrets fold `stringData` into base64 `data` and reject
//! undecodable `data`, Namespaces get their name label and `kubernetes` finalizer,
//! Deployments and StatefulSets default `spec.replicas` to 1.

use super::{
    errors::ApiError,
    field_errors::{BadValue, FieldError},
    registry::ResourceType,
};
use base64::{Engine, engine::general_purpose::STANDARD};
use serde_json::{Map, Value, json};

/// Normalises `obj` (already carrying its name) for its kind.
///
/// # Errors
/// Secrets: `data` values that are not base64 give 400 BadRequest, exactly as the real
/// server's JSON decoder refuses them (`Secret in version "v1" cannot be handled as a
/// Secret: illegal base64 data at input byte N`); keys that are not valid config keys give
/// 422 Invalid.
pub fn normalize(rt: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "secrets") => normalize_secret(obj),
        ("", "namespaces") => {
            normalize_namespace(obj);
            Ok(())
        }
        ("apps", "deployments" | "statefulsets") => {
            if obj["spec"].is_object() && obj["spec"].get("replicas").is_none() {
                obj["spec"]["replicas"] = json!(1);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn normalize_secret(obj: &mut Value) -> Result<(), ApiError> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(map) = obj.as_object_mut() else {
        return Ok(());
    };
    if !matches!(map.get("data"), Some(Value::Object(_))) {
        map.remove("data");
    }
    if let Some(Value::Object(data)) = map.get("data") {
        for (key, value) in data {
            let text = value.as_str().unwrap_or_default();
            if let Err(e) = STANDARD.decode(text) {
                return Err(ApiError::bad_request(format!(
                    "Secret in version \"v1\" cannot be handled as a Secret: {}",
                    go_base64_message(&e, key)
                )));
            }
        }
    }
    if let Some(Value::Object(string_data)) = map.remove("stringData") {
        let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
        for (key, value) in string_data {
            data[key.as_str()] = json!(STANDARD.encode(value.as_str().unwrap_or_default()));
        }
    }
    if let Some(Value::Object(data)) = map.get("data")
        && let Some(bad) = data.keys().find(|k| !is_config_key(k))
    {
        return Err(ApiError::invalid_fields(
            "",
            "Secret",
            &name,
            &[FieldError::invalid(
                &format!("data[{bad}]"),
                BadValue::Str(bad.clone()),
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            )],
        ));
    }
    map.entry("type").or_insert_with(|| json!("Opaque"));
    Ok(())
}

fn go_base64_message(e: &base64::DecodeError, key: &str) -> String {
    match e {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            format!("illegal base64 data at input byte {at} (data[{key}])")
        }
        _ => format!("illegal base64 data (data[{key}])"),
    }
}

fn is_config_key(k: &str) -> bool {
    !k.is_empty() && k.len() <= 253 && k.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn normalize_namespace(obj: &mut Value) {
    let name = obj.pointer("/metadata/name").cloned().unwrap_or(Value::Null);
    let meta = &mut obj["metadata"];
    if !meta["labels"].is_object() {
        meta["labels"] = json!({});
    }
    meta["labels"]["kubernetes.io/metadata.name"] = name;
    if obj.pointer("/spec/finalizers").is_none() {
        obj["spec"] = json!({ "finalizers": ["kubernetes"] });
    }
    if obj.pointer("/status/phase").is_none() {
        obj["status"] = json!({ "phase": "Active" });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::{Registry, ResourceId};

    fn secret_type() -> ResourceType {
        Registry::default()
            .get(&ResourceId {
                group: "".into(),
                plural: "secrets".into(),
            })
            .cloned()
            .expect("builtin")
    }

    #[test]
    fn secret_should_fold_string_data_into_base64_data() {
        let mut s =
            json!({"metadata": {"name": "s"}, "data": {"a": "eA=="}, "stringData": {"b": "hi", "a": "y"}});
        normalize(&secret_type(), &mut s).expect("valid");
        assert_eq!(
            s,
            json!({"metadata": {"name": "s"}, "data": {"a": "eQ==", "b": "aGk="}, "type": "Opaque"})
        );
    }

    #[test]
    fn secret_with_undecodable_data_should_be_refused_like_the_real_decoder() {
        let mut s = json!({"metadata": {"name": "s"}, "data": {"a": "not base64!"}});
        let e = normalize(&secret_type(), &mut s).unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
        assert!(
            e.message.contains("illegal base64 data at input byte 3"),
            "{}",
            e.message
        );
    }

    #[test]
    fn secret_with_invalid_key_should_be_invalid() {
        let mut s = json!({"metadata": {"name": "s"}, "stringData": {"a/b": "x"}});
        assert_eq!(normalize(&secret_type(), &mut s).unwrap_err().code, 422);
    }
}
