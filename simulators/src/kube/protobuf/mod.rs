//! Protobuf bodies (`application/vnd.kubernetes.protobuf`) for built-in kinds, as the real
//! server reads and writes them: the magic prefix `k8s\0`, then a `runtime.Unknown`
//! whose `typeMeta` names the kind and whose `raw` is the object's message.
//!
//! Messages are k8s-pb's (decoded and encoded by prost); [`convert`] maps them to and
//! from the JSON the store keeps, [`kinds`] lists the kinds served this way. Custom
//! resources have no protobuf form, on a real server as here: their requests are JSON.
//!
//! Watches stay JSON (a protobuf watch stream frames every event; no client of the
//! simulator asks for one and accepts nothing else).

mod access;
mod cluster;
pub mod convert;
mod core;
pub mod kinds;
mod meta;
mod pod;
mod rbac;
mod special;
mod workloads;

use super::errors::ApiError;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;
use serde_json::{Value, json};

/// The protobuf media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// What prefixes every protobuf body.
const MAGIC: &[u8; 4] = b"k8s\0";

/// How a response body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `application/json`.
    Json,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Wire {
    /// The encoding `accept` asks for first among those offered (protobuf only when
    /// `protobuf_offered`). Views (`;as=Table`, …) are JSON: only a plain protobuf media
    /// type selects protobuf. `None` when nothing offered is acceptable (406).
    pub fn negotiate(accept: &str, protobuf_offered: bool) -> Option<Wire> {
        let mut clauses = accept
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .peekable();
        if clauses.peek().is_none() {
            return Some(Wire::Json);
        }
        for clause in clauses {
            let mut params = clause.split(';').map(str::trim);
            let mime = params.next().unwrap_or_default();
            let plain = !params.any(|p| p.starts_with("as="));
            match mime {
                MEDIA_TYPE if protobuf_offered && plain => return Some(Wire::Protobuf),
                MEDIA_TYPE => {}
                _ => return Some(Wire::Json),
            }
        }
        None
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Wire::Json => "application/json",
            Wire::Protobuf => MEDIA_TYPE,
        }
    }
}

fn bad_body(detail: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("error decoding body: {detail}"))
}

/// Decodes a protobuf request body into the JSON object it stands for (with its
/// `apiVersion` and `kind`).
///
/// # Errors
/// 400 BadRequest without the magic prefix, for a malformed message or a kind that has no
/// protobuf form here.
pub fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let envelope = body.strip_prefix(MAGIC).ok_or_else(|| {
        bad_body("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")
    })?;
    let unknown = Unknown::decode(envelope).map_err(bad_body)?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let codec = kinds::codec(&api_version, &kind).ok_or_else(|| {
        bad_body(format!(
            "no kind {kind:?} is registered for version {api_version:?}"
        ))
    })?;
    let mut obj = (codec.decode)(unknown.raw.as_deref().unwrap_or_default()).map_err(bad_body)?;
    // List items carry no TypeMeta on the wire; in JSON they name their kind.
    if let (Some(item_kind), Some(items)) = (
        kind.strip_suffix("List"),
        obj.get_mut("items").and_then(Value::as_array_mut),
    ) {
        for item in items {
            item["apiVersion"] = json!(api_version);
            item["kind"] = json!(item_kind);
        }
    }
    obj["apiVersion"] = json!(api_version);
    obj["kind"] = json!(kind);
    Ok(obj)
}

/// Encodes a JSON object (or list, or `Status`) as a protobuf body, `None` when its kind
/// has no protobuf form here.
pub fn encode(obj: &Value) -> Option<Vec<u8>> {
    let api_version = obj["apiVersion"].as_str()?;
    let kind = obj["kind"].as_str()?;
    let raw = (kinds::codec(api_version, kind)?.encode)(obj).ok()?;
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_string()),
            kind: Some(kind.to_string()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = MAGIC.to_vec();
    unknown.encode(&mut body).expect("a Vec grows as needed");
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_should_follow_the_order_of_accept() {
        let kubectl = "application/vnd.kubernetes.protobuf,application/json";
        assert_eq!(Wire::negotiate(kubectl, true), Some(Wire::Protobuf));
        assert_eq!(Wire::negotiate(kubectl, false), Some(Wire::Json));
        assert_eq!(Wire::negotiate("application/json, */*", true), Some(Wire::Json));
        assert_eq!(Wire::negotiate("", true), Some(Wire::Json));
        assert_eq!(Wire::negotiate(MEDIA_TYPE, false), None);
        let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json";
        assert_eq!(Wire::negotiate(table, true), Some(Wire::Json));
    }

    #[test]
    fn a_body_should_survive_encode_then_decode() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "ns", "creationTimestamp": "2026-01-02T03:04:05Z"},
            "data": {"k": "dg=="}, "type": "Opaque"});
        let body = encode(&secret).expect("Secrets have a protobuf form");
        assert!(body.starts_with(b"k8s\0"));
        assert_eq!(decode(&body).expect("decodes"), secret);
    }

    #[test]
    fn a_body_without_the_magic_prefix_should_be_a_bad_request() {
        let e = decode(b"{}").unwrap_err();
        assert_eq!((e.code, e.reason), (400, "BadRequest"));
    }
}
