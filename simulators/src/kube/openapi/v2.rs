//! `/openapi/v2`: the CRDs' schemas in one Swagger 2.0 document, as JSON or, for clients
//! that ask for it as client-go does (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`),
//! as gnostic protobuf.
//!
//! Schemas are published the way the real server publishes them for v2, where kubectl's
//! validator cannot follow everything a structural schema says: `allOf`/`anyOf`/`oneOf`/
//! `not` are dropped, a nullable field loses its type and structure, a field preserving
//! unknown fields loses its properties and items (so kubectl accepts what it does not
//! know), and an array left without items loses its type. Only type, format,
//! description, required, properties, items, additionalProperties, `$ref` and `x-`
//! extensions are kept.

use super::{
    crd_schemas::{OBJECT_META, metadata_property, object_meta, published},
    gnostic,
};
use crate::kube::{discovery::GIT_VERSION, store::Store};
use http::{HeaderValue, StatusCode, header};
use prost::Message;
use serde_json::{Map, Value, json};
use warp::{Reply, reply::Response};

/// The media type client-go asks for the protobuf form with.
const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// Its other spelling, which is also the `Content-Type` of the answer (Go's media type
/// parser refuses the `@` one).
const PROTOBUF_ANSWERED: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Whether `accept` asks for the protobuf form.
fn wants_protobuf(accept: &str) -> bool {
    accept.contains(PROTOBUF) || accept.contains(PROTOBUF_ANSWERED)
}

/// The answer to `GET /openapi/v2`: protobuf when `accept` asks for it (client-go asks
/// for nothing else), JSON otherwise.
pub fn response(store: &Store, accept: &str) -> Response {
    let (body, content_type) = if wants_protobuf(accept) {
        (protobuf(store), PROTOBUF_ANSWERED)
    } else {
        (document(store).to_string().into_bytes(), "application/json")
    };
    let mut r = warp::reply::with_status(body, StatusCode::OK).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// The JSON document.
pub fn document(store: &Store) -> Value {
    let mut definitions = Map::new();
    let metadata = json!({
        "$ref": format!("#/definitions/{OBJECT_META}"),
        "description": metadata_property("")["description"],
    });
    for crd in published(store, None) {
        definitions.insert(crd.definition_name(), to_v2(&crd.definition(metadata.clone())));
    }
    definitions.insert(OBJECT_META.into(), to_v2(&object_meta()));
    json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": GIT_VERSION },
        "paths": {},
        "definitions": definitions,
    })
}

/// A structural schema as published in v2 (see the module docs).
fn to_v2(schema: &Value) -> Value {
    let Some(s) = schema.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for key in ["$ref", "type", "format", "description"] {
        if let Some(v) = s.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for (key, v) in s.iter().filter(|(k, _)| k.starts_with("x-")) {
        out.insert(key.clone(), v.clone());
    }
    let nullable = s.get("nullable").and_then(Value::as_bool) == Some(true);
    let preserve = s
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true);
    if nullable {
        out.remove("type");
    }
    if !nullable && !preserve {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            let converted: Map<String, Value> = props.iter().map(|(k, v)| (k.clone(), to_v2(v))).collect();
            out.insert("properties".into(), Value::Object(converted));
            let required: Vec<&Value> = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|r| {
                    let field = r.as_str().unwrap_or_default();
                    props[field].get("nullable").and_then(Value::as_bool) != Some(true)
                })
                .collect();
            if !required.is_empty() {
                out.insert("required".into(), json!(required));
            }
        }
        if let Some(items) = s.get("items") {
            out.insert("items".into(), to_v2(items));
        }
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => drop(out.insert("additionalProperties".into(), json!(b))),
        Some(sub @ Value::Object(_)) => drop(out.insert("additionalProperties".into(), to_v2(sub))),
        _ => {}
    }
    if out.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
        out.remove("type");
    }
    Value::Object(out)
}

/// The document as gnostic protobuf.
pub fn protobuf(store: &Store) -> Vec<u8> {
    let doc = document(store);
    let definitions = doc["definitions"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, s)| named(name, s))
        .collect();
    gnostic::Document {
        swagger: "2.0".into(),
        info: Some(gnostic::Info {
            title: "Kubernetes".into(),
            version: GIT_VERSION.into(),
        }),
        paths: Some(gnostic::Paths {}),
        definitions: Some(gnostic::Definitions {
            additional_properties: definitions,
        }),
    }
    .encode_to_vec()
}

fn named(name: &str, schema: &Value) -> gnostic::NamedSchema {
    gnostic::NamedSchema {
        name: name.into(),
        value: Some(gnostic_schema(schema)),
    }
}

fn gnostic_schema(s: &Value) -> gnostic::Schema {
    let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(String::from))
            .collect()
    };
    let additional = match &s["additionalProperties"] {
        Value::Bool(b) => Some(gnostic::AdditionalProperties::Boolean(*b)),
        sub @ Value::Object(_) => Some(gnostic::AdditionalProperties::Schema(Box::new(gnostic_schema(
            sub,
        )))),
        _ => None,
    };
    gnostic::Schema {
        r#ref: text("$ref"),
        format: text("format"),
        description: text("description"),
        required: strings(&s["required"]),
        additional_properties: additional
            .map(|a| Box::new(gnostic::AdditionalPropertiesItem { oneof: Some(a) })),
        r#type: s["type"].as_str().map(|t| gnostic::TypeItem {
            value: vec![t.into()],
        }),
        items: s.get("items").map(|i| gnostic::ItemsItem {
            schema: vec![gnostic_schema(i)],
        }),
        properties: s["properties"].as_object().map(|p| gnostic::Properties {
            additional_properties: p.iter().map(|(k, v)| named(k, v)).collect(),
        }),
        vendor_extension: s
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.starts_with("x-"))
            .map(|(k, v)| gnostic::NamedAny {
                name: k.clone(),
                value: Some(gnostic::Any {
                    yaml: serde_norway::to_string(v).expect("JSON values are YAML"),
                }),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_should_drop_what_kubectl_cannot_validate() {
        let schema = json!({"type": "object", "required": ["a", "n"], "properties": {
            "a": {"type": "string", "enum": ["x"], "maxLength": 3},
            "n": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}},
            "p": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"x": {"type": "string"}}},
            "i": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "l": {"type": "array", "x-kubernetes-preserve-unknown-fields": true, "items": {"type": "string"}},
        }});
        let v2 = to_v2(&schema);
        assert_eq!(
            v2["required"],
            json!(["a"]),
            "a nullable field is not required in v2"
        );
        assert_eq!(v2["properties"]["a"], json!({"type": "string"}));
        assert_eq!(v2["properties"]["n"], json!({}));
        assert_eq!(
            v2["properties"]["p"],
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(v2["properties"]["i"], json!({"x-kubernetes-int-or-string": true}));
        assert_eq!(
            v2["properties"]["l"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
    }
}
