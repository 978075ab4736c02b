//! The `/_sim/…` admin endpoints, for tests that drive the binary or kubectl:
//!
//! | method | path | effect |
//! |---|---|---|
//! | GET | `/_sim/faults` | the standing [`FaultConfig`] as JSON |
//! | PUT | `/_sim/faults` | replace it (JSON body, camelCase fields) |
//! | DELETE | `/_sim/faults` | clear every standing fault |
//! | POST | `/_sim/faults/drop-watches` | end every open watch |
//! | POST | `/_sim/faults/gone?count=N` | the next N watches get 410 (default 1) |
//! | POST | `/_sim/faults/compact` | compact history |
//! | GET | `/_sim/audit` | the audit log, a JSON array of [`AuditEntry`] |
//! | DELETE | `/_sim/audit` | empty the audit log |
//! | POST | `/_sim/tokens` | `{"token": "...", "identity": "..."}`: name a bearer token |
//!
//! Admin requests are not faulted and not audited.
//!
//! [`AuditEntry`]: super::audit::AuditEntry

use super::{
    encoding::json_response,
    errors::ApiError,
    faults::{FaultConfig, Faults},
    request::Query,
    state::Shared,
};
use http::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use warp::reply::Response;

/// Answers one admin request.
pub fn handle(
    shared: &Arc<Shared>,
    method: &Method,
    segments: &[String],
    query: &Query,
    body: &[u8],
) -> Response {
    let faults = Faults {
        shared: shared.clone(),
    };
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let done = || json_response(200, &json!({ "ok": true }));
    let bad = |m: String| json_response(400, &ApiError::bad_request(m).to_status());
    match (method.clone(), segs.as_slice()) {
        (Method::GET, ["faults"]) => json_response(200, &json!(faults.config())),
        (Method::PUT, ["faults"]) => match serde_json::from_slice::<FaultConfig>(body) {
            Ok(c) => {
                faults.set_config(c);
                done()
            }
            Err(e) => bad(format!("invalid fault configuration: {e}")),
        },
        (Method::DELETE, ["faults"]) => {
            faults.clear();
            done()
        }
        (Method::POST, ["faults", "drop-watches"]) => {
            faults.drop_watches();
            done()
        }
        (Method::POST, ["faults", "gone"]) => {
            faults.force_gone(query.get("count").and_then(|c| c.parse().ok()).unwrap_or(1));
            done()
        }
        (Method::POST, ["faults", "compact"]) => {
            faults.compact();
            done()
        }
        (Method::GET, ["audit"]) => json_response(200, &json!(shared.audit.snapshot())),
        (Method::DELETE, ["audit"]) => {
            shared.audit.clear();
            done()
        }
        (Method::POST, ["tokens"]) => match serde_json::from_slice::<Value>(body) {
            Ok(v) if v["token"].is_string() && v["identity"].is_string() => {
                shared.audit.register_token(
                    v["token"].as_str().unwrap_or_default().to_string(),
                    v["identity"].as_str().unwrap_or_default(),
                );
                done()
            }
            _ => bad("expected {\"token\": string, \"identity\": string}".into()),
        },
        _ => json_response(404, &ApiError::no_route("_sim").to_status()),
    }
}
