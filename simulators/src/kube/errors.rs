//! Kubernetes `Status` error objects, as the real API server returns them.
//!
//! Every failure the simulator reports is an [`ApiError`] that renders to a `Status`
//! (`kind: Status`, `apiVersion: v1`, `status: Failure`) with the standard `reason` and
//! `code`, so kube's error helpers (`get_opt` → `None`, `ErrorResponse.code == 409`, …)
//! and kubectl's messages behave as against a cluster.

use super::field_errors::{FieldError, aggregate};
use serde_json::{Value, json};

/// A failed API request: the HTTP code, the machine-readable reason and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code (404, 409, 410, 422, 429, …).
    pub code: u16,
    /// `Status.reason` (`NotFound`, `AlreadyExists`, `Conflict`, …).
    pub reason: &'static str,
    /// Human-readable message, worded like the real server's.
    pub message: String,
    /// `Status.details`: the object the error is about, if any.
    pub details: Option<Value>,
    /// Seconds for the `Retry-After` header (429/503 only).
    pub retry_after: Option<u32>,
}

/// The group/kind/name triple that `Status.details` describes.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// API group ("" for core).
    pub group: &'a str,
    /// Plural resource name, as the real server puts in `details.kind`.
    pub resource: &'a str,
    /// Object name.
    pub name: &'a str,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    fn with_subject(mut self, s: Subject<'_>) -> Self {
        let mut d = json!({ "name": s.name, "kind": s.resource });
        if !s.group.is_empty() {
            d["group"] = json!(s.group);
        }
        self.details = Some(d);
        self
    }

    /// 404 NotFound for a named object.
    pub fn not_found(s: Subject<'_>) -> Self {
        let msg = format!("{} \"{}\" not found", qualified(s), s.name);
        Self::new(404, "NotFound", msg).with_subject(s)
    }

    /// 404 NotFound for a path the server does not serve.
    pub fn no_route(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
    }

    /// 409 AlreadyExists on create.
    pub fn already_exists(s: Subject<'_>) -> Self {
        let msg = format!("{} \"{}\" already exists", qualified(s), s.name);
        Self::new(409, "AlreadyExists", msg).with_subject(s)
    }

    /// 409 Conflict on a stale resourceVersion.
    pub fn conflict(s: Subject<'_>) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} \"{}\": the object has been modified; \
             please apply your changes to the latest version and try again",
            qualified(s),
            s.name
        );
        Self::new(409, "Conflict", msg).with_subject(s)
    }

    /// 422 Invalid: the object failed validation. `group`/`kind` name the kind (the
    /// message says `Kind.group "name" is invalid: …`); one cause per error.
    pub fn invalid_fields(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{qualified} \"{name}\" is invalid: {}", aggregate(errors));
        let mut e = Self::new(422, "Invalid", msg);
        let mut details = json!({ "causes": errors.iter().map(FieldError::cause).collect::<Vec<_>>() });
        if !kind.is_empty() {
            details["kind"] = json!(kind);
        }
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        e.details = Some(details);
        e
    }

    /// 410 Gone / Expired: a resourceVersion older than the retained history.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 401 Unauthorized: credentials nobody issued.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 403 Forbidden (for example, creating in a terminating namespace).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 415 UnsupportedMediaType (for example, protobuf bodies).
    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got {content_type:?})"
            ),
        )
    }

    /// 406 NotAcceptable: the client accepts no media type the resource is served in.
    pub fn not_acceptable() -> Self {
        Self::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml",
        )
    }

    /// An injected failure (429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable,
    /// 504 Timeout).
    pub fn injected(code: u16) -> Self {
        match code {
            429 => {
                let mut e = Self::new(
                    429,
                    "TooManyRequests",
                    "Too many requests, please try again later.",
                );
                e.retry_after = Some(1);
                e
            }
            503 => {
                let mut e = Self::new(
                    503,
                    "ServiceUnavailable",
                    "the server is currently unable to handle the request",
                );
                e.retry_after = Some(1);
                e
            }
            504 => {
                let mut e = Self::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within requested timeout - context deadline exceeded",
                );
                e.details = Some(json!({}));
                e
            }
            _ => Self::new(code, "InternalError", "Internal error occurred: injected fault"),
        }
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        let mut details = self.details.clone();
        if let Some(secs) = self.retry_after {
            let d = details.get_or_insert_with(|| json!({}));
            d["retryAfterSeconds"] = json!(secs);
        }
        if let Some(d) = details {
            s["details"] = d;
        }
        s
    }
}

/// `secrets` or `leases.coordination.k8s.io`, as the real messages qualify a resource.
fn qualified(s: Subject<'_>) -> String {
    if s.group.is_empty() {
        s.resource.to_string()
    } else {
        format!("{}.{}", s.resource, s.group)
    }
}

/// The `Status` object of a successful delete that returns no object.
pub fn success_status(s: Subject<'_>, uid: &str) -> Value {
    let mut details = json!({ "name": s.name, "kind": s.resource, "uid": uid });
    if !s.group.is_empty() {
        details["group"] = json!(s.group);
    }
    json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_should_render_a_status_with_reason_and_details() {
        let s = ApiError::not_found(Subject {
            group: "coordination.k8s.io",
            resource: "leases",
            name: "x",
        })
        .to_status();
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["code"], 404);
        assert_eq!(s["message"], "leases.coordination.k8s.io \"x\" not found");
        assert_eq!(s["details"]["group"], "coordination.k8s.io");
    }

    #[test]
    fn injected_429_should_carry_retry_after_seconds() {
        let s = ApiError::injected(429).to_status();
        assert_eq!(s["details"]["retryAfterSeconds"], 1);
        assert_eq!(s["reason"], "TooManyRequests");
    }
}
