//! The review APIs: each is a `create` answered from the stored RBAC objects and the token
//! registry, returned with its `status` (201) and never stored.
//!
//! - `SelfSubjectAccessReview`: may the requester do this? (`kubectl auth can-i`)
//! - `SubjectAccessReview` / `LocalSubjectAccessReview`: may `spec.user` with
//!   `spec.groups` do this? Exactly the given user and groups are checked (no group is
//!   added), as a delegating authorizer expects.
//! - `SelfSubjectRulesReview`: the requester's rules in a namespace (`kubectl auth can-i --list`).
//! - `TokenReview`: whom a bearer token authenticates (a registered ServiceAccount token
//!   only while its ServiceAccount exists, as bound tokens are checked).
//! - `SelfSubjectReview`: who the requester is (`kubectl auth whoami`).

use super::{
    rbac::{Attributes, authorize, rules_of},
    users::{UserInfo, service_account},
};
use crate::kube::{
    api::Target,
    audit::AuditLog,
    errors::ApiError,
    field_errors::{BadValue, FieldError},
    registry::{ResourceId, ResourceType},
    store::Store,
};
use serde_json::{Value, json};

/// The audiences a token is valid for when a review names none (the API server's).
const API_AUDIENCES: [&str; 1] = ["https://kubernetes.default.svc.cluster.local"];

/// Answers a review `body` created at `t` by `requester` (`None`: a bearer token nobody
/// registered).
///
/// # Errors
/// 401 for an unknown token, 422 for a review without the fields it needs, 400 for a
/// body of another kind.
pub fn create(
    store: &Store,
    tokens: &AuditLog,
    t: &Target,
    requester: Option<&UserInfo>,
    mut body: Value,
) -> Result<Value, ApiError> {
    let requester = requester.ok_or_else(ApiError::unauthorized)?;
    let spec = body["spec"].clone();
    let status = match t.rt.plural.as_str() {
        "selfsubjectaccessreviews" => access(store, requester, &spec, &t.rt, None)?,
        "subjectaccessreviews" => access(store, &subject(&spec, &t.rt)?, &spec, &t.rt, None)?,
        "localsubjectaccessreviews" => access(
            store,
            &subject(&spec, &t.rt)?,
            &spec,
            &t.rt,
            t.namespace.as_deref(),
        )?,
        "selfsubjectrulesreviews" => rules(store, requester, &spec),
        "tokenreviews" => token(store, tokens, &spec, &t.rt)?,
        "selfsubjectreviews" => json!({ "userInfo": requester.to_json() }),
        other => return Err(ApiError::no_route(other)),
    };
    body["apiVersion"] = json!(t.rt.api_version(&t.version));
    body["kind"] = json!(t.rt.kind);
    if !body["metadata"].is_object() {
        body["metadata"] = json!({});
    }
    body["status"] = status;
    Ok(body)
}

fn invalid(rt: &ResourceType, error: FieldError) -> ApiError {
    ApiError::invalid_fields(&rt.group, &rt.kind, "", &[error])
}

/// The user a `SubjectAccessReview` asks about.
fn subject(spec: &Value, rt: &ResourceType) -> Result<UserInfo, ApiError> {
    let username = spec["user"].as_str().unwrap_or_default().to_string();
    let groups: Vec<String> = spec["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g.as_str().map(String::from))
        .collect();
    if username.is_empty() && groups.is_empty() {
        return Err(invalid(
            rt,
            FieldError::invalid(
                "spec.user",
                BadValue::Str(String::new()),
                "at least one of user or group must be specified",
            ),
        ));
    }
    Ok(UserInfo { username, groups })
}

/// The status of an access review of `spec` for `user`; `namespace` is the URL's for a
/// `LocalSubjectAccessReview` (the attributes must name the same).
fn access(
    store: &Store,
    user: &UserInfo,
    spec: &Value,
    rt: &ResourceType,
    namespace: Option<&str>,
) -> Result<Value, ApiError> {
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let attrs = match (spec.get("resourceAttributes"), spec.get("nonResourceAttributes")) {
        (Some(r), None) if r.is_object() => {
            if let Some(ns) = namespace
                && text(r, "namespace") != ns
            {
                return Err(invalid(
                    rt,
                    FieldError::invalid(
                        "spec.resourceAttributes.namespace",
                        BadValue::Str(text(r, "namespace")),
                        "must match metadata.namespace",
                    ),
                ));
            }
            Attributes::Resource {
                verb: text(r, "verb"),
                group: text(r, "group"),
                resource: text(r, "resource"),
                subresource: text(r, "subresource"),
                namespace: text(r, "namespace"),
                name: text(r, "name"),
            }
        }
        (None, Some(n)) if n.is_object() && namespace.is_none() => Attributes::NonResource {
            verb: text(n, "verb"),
            path: text(n, "path"),
        },
        _ => {
            return Err(invalid(
                rt,
                FieldError::invalid(
                    "spec.resourceAttributes",
                    BadValue::Str("null".into()),
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                ),
            ));
        }
    };
    let decision = authorize(store, user, &attrs);
    let mut status = json!({ "allowed": decision.allowed });
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    Ok(status)
}

/// The status of a `SelfSubjectRulesReview`: resource and non-resource rules apart.
fn rules(store: &Store, user: &UserInfo, spec: &Value) -> Value {
    let namespace = spec["namespace"].as_str().unwrap_or_default();
    let (mut resource_rules, mut non_resource_rules) = (Vec::new(), Vec::new());
    for rule in rules_of(store, user, namespace) {
        let pick = |keys: &[&str]| {
            let mut out = json!({});
            for k in keys {
                if let Some(v) = rule
                    .get(*k)
                    .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                {
                    out[*k] = v.clone();
                }
            }
            out
        };
        if rule.get("nonResourceURLs").is_some() {
            non_resource_rules.push(pick(&["verbs", "nonResourceURLs"]));
        } else {
            resource_rules.push(pick(&["verbs", "apiGroups", "resources", "resourceNames"]));
        }
    }
    json!({ "resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false })
}

/// The status of a `TokenReview`.
fn token(store: &Store, tokens: &AuditLog, spec: &Value, rt: &ResourceType) -> Result<Value, ApiError> {
    let Some(token) = spec["token"].as_str().filter(|t| !t.is_empty()) else {
        return Err(invalid(
            rt,
            FieldError::required("spec.token", "token must be specified"),
        ));
    };
    let unauthenticated = || json!({ "user": {}, "error": "[invalid bearer token, token lookup failed]" });
    let Some(username) = tokens.user_of_token(token) else {
        return Ok(unauthenticated());
    };
    let mut user = UserInfo::named(&username).to_json();
    if let Some((ns, name)) = service_account(&username) {
        let accounts = ResourceId {
            group: String::new(),
            plural: "serviceaccounts".into(),
        };
        let Some(account) = store.get(&accounts, &(ns.to_string(), name.to_string())) else {
            return Ok(unauthenticated());
        };
        user["uid"] = account["metadata"]["uid"].clone();
    }
    let audiences = match spec["audiences"].as_array().filter(|a| !a.is_empty()) {
        Some(asked) => Value::Array(asked.clone()),
        None => json!(API_AUDIENCES),
    };
    Ok(json!({ "authenticated": true, "user": user, "audiences": audiences }))
}
