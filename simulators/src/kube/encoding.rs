//! Request and response bodies in the media types a real server speaks: JSON, YAML
//! (requests) and, for built-in kinds, protobuf (see [`protobuf`]).

use super::{
    errors::ApiError,
    protobuf::{self, Wire, kinds},
    registry::ResourceType,
};
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use warp::{Reply, reply::Response};

/// Whether `rt` has a protobuf form (built-in kinds do, custom resources do not).
pub fn speaks_protobuf(rt: &ResourceType, version: &str) -> bool {
    kinds::codec(&rt.api_version(version), &rt.kind).is_some()
}

/// A JSON response.
pub fn json_response(code: u16, body: &Value) -> Response {
    let mut r = warp::reply::with_status(
        body.to_string(),
        StatusCode::from_u16(code).unwrap_or(StatusCode::OK),
    )
    .into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// The object a request body carries, by its `Content-Type`; protobuf only where
/// `protobuf` (the addressed kind has a protobuf form).
///
/// # Errors
/// 400 for a body that does not decode, 415 for a media type not accepted here.
pub fn read_object(content_type: Option<&str>, body: &[u8], protobuf: bool) -> Result<Value, ApiError> {
    let ct = content_type.unwrap_or("application/json");
    let mime = ct.split(';').next().unwrap_or_default().trim();
    match mime {
        "application/json" | "" => serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}"))),
        "application/yaml" => serde_norway::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}"))),
        protobuf::MEDIA_TYPE if protobuf => protobuf::decode(body),
        other => Err(ApiError::unsupported_media_type(other)),
    }
}

/// A response with `body` encoded as `wire` asks; kinds without a protobuf form (tables,
/// custom resources) are JSON whatever was asked, as content negotiation allowed them.
pub fn respond(wire: Wire, code: u16, body: &Value) -> Response {
    let (bytes, wire) = match wire {
        Wire::Protobuf => match protobuf::encode(body) {
            Some(bytes) => (bytes, Wire::Protobuf),
            None => (body.to_string().into_bytes(), Wire::Json),
        },
        Wire::Json => (body.to_string().into_bytes(), Wire::Json),
    };
    let mut r =
        warp::reply::with_status(bytes, StatusCode::from_u16(code).unwrap_or(StatusCode::OK)).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(wire.content_type()),
    );
    r
}

/// An error as a `Status` in `wire`, with its `Retry-After`.
pub fn respond_error(wire: Wire, e: &ApiError) -> Response {
    let mut r = respond(wire, e.code, &e.to_status());
    if let Some(secs) = e.retry_after {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    r
}
