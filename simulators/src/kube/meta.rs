//! Server-owned metadata on create and update: uid, creationTimestamp, generateName,
//! generation, resourceVersion preconditions and the status-subresource split.
//!
//! All functions are pure: they take the stored and the submitted object and return the
//! object to store, or the `Status` error the real server would give.
//!
//! # Guarantees
//! - Kinds with a generation (see [`strategy::generation`]) get 1 on create and grow by one
//!   only on the changes their strategy counts; others never carry one (a submitted
//!   `generation` is dropped).
//! - For kinds with a status subresource the main endpoint never changes `status`, and
//!   `/status` changes nothing but `status`.
//! - Submitted `managedFields` are ignored: a create starts without any, an update keeps the
//!   stored ones (the caller records the write, see [`super::managed`]).

use super::{
    defaults::normalize,
    errors::{ApiError, Subject},
    field_errors::FieldError,
    immutability,
    registry::ResourceType,
    strategy::{self, Generation},
};
use serde_json::{Value, json};

/// Values the server generates for a new object; passed in so tests are deterministic.
#[derive(Debug, Clone)]
pub struct Stamp {
    /// RFC 3339 time, second precision (`2026-01-02T03:04:05Z`).
    pub now: String,
    /// New uid.
    pub uid: String,
}

impl Stamp {
    /// A stamp for "now" with a fresh random uid.
    pub fn fresh() -> Self {
        Stamp {
            now: now_rfc3339(),
            uid: uuid::Uuid::new_v4().to_string(),
        }
    }

    /// Five characters from the alphabet the real server uses for `generateName` suffixes.
    pub fn name_suffix(&self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        self.uid
            .bytes()
            .filter(u8::is_ascii_hexdigit)
            .take(5)
            .map(|b| ALPHABET[b as usize % ALPHABET.len()] as char)
            .collect()
    }
}

/// The current time as the API server writes timestamps.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The name of an object, "" if missing.
pub fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The object to store for a create at `namespace` (None for cluster-scoped types).
///
/// # Errors
/// 400 when the body's namespace differs from the URL's; 422 without name or generateName;
/// the kind's own validation errors (see [`normalize`]).
pub fn prepare_create(
    rt: &ResourceType,
    version: &str,
    namespace: Option<&str>,
    mut obj: Value,
    stamp: &Stamp,
) -> Result<Value, ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    obj["kind"] = json!(rt.kind);
    obj["apiVersion"] = json!(rt.api_version(version));
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    check_namespace(&mut obj, namespace)?;
    let meta = obj["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object");
    if meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        match meta.get("generateName").and_then(Value::as_str) {
            Some(prefix) if !prefix.is_empty() => {
                let name = format!("{prefix}{}", stamp.name_suffix());
                meta.insert("name".into(), json!(name));
            }
            _ => {
                return Err(ApiError::invalid_fields(
                    &rt.group,
                    &rt.kind,
                    "",
                    &[FieldError::required(
                        "metadata.name",
                        "name or generateName is required",
                    )],
                ));
            }
        }
    }
    for server_owned in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    ] {
        meta.remove(server_owned);
    }
    meta.insert("uid".into(), json!(stamp.uid));
    meta.insert("creationTimestamp".into(), json!(stamp.now));
    if strategy::generation(rt) == Generation::None {
        meta.remove("generation");
    } else {
        meta.insert("generation".into(), json!(1));
    }
    if rt.has_status
        && let Some(map) = obj.as_object_mut()
    {
        map.remove("status");
    }
    normalize(rt, &mut obj)?;
    Ok(obj)
}

fn check_namespace(obj: &mut Value, namespace: Option<&str>) -> Result<(), ApiError> {
    let meta = obj["metadata"]
        .as_object_mut()
        .expect("caller made metadata an object");
    match namespace {
        Some(ns) => match meta.get("namespace").and_then(Value::as_str) {
            Some(body_ns) if !body_ns.is_empty() && body_ns != ns => Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            _ => {
                meta.insert("namespace".into(), json!(ns));
                Ok(())
            }
        },
        None => {
            meta.remove("namespace");
            Ok(())
        }
    }
}

/// The object to store for an update (PUT or the result of a patch) of `old`.
///
/// `subresource` is `Some("status")` for writes to `/status`.
///
/// # Errors
/// 409 Conflict when the submitted resourceVersion is set and stale; 400 when the name
/// differs; 422 when finalizers are added to an object being deleted.
pub fn prepare_update(
    rt: &ResourceType,
    subresource: Option<&str>,
    old: &Value,
    mut new: Value,
) -> Result<Value, ApiError> {
    if !new.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request must be a JSON object",
        ));
    }
    let name = name_of(old).to_string();
    let subject = Subject {
        group: &rt.group,
        resource: &rt.plural,
        name: &name,
    };
    let submitted_rv = new
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let current_rv = old
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !submitted_rv.is_empty() && submitted_rv != current_rv {
        return Err(ApiError::conflict(subject));
    }
    let new_name = name_of(&new);
    if !new_name.is_empty() && new_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({new_name}) does not match the name on the URL ({name})"
        )));
    }
    if subresource == Some("status") {
        let mut out = old.clone();
        match new.get("status") {
            Some(status) => out["status"] = status.clone(),
            None => drop(out.as_object_mut().map(|m| m.remove("status"))),
        }
        return Ok(out);
    }
    new["kind"] = old["kind"].clone();
    new["apiVersion"] = old["apiVersion"].clone();
    if !new["metadata"].is_object() {
        new["metadata"] = json!({});
    }
    keep_server_owned_metadata(&mut new, old);
    check_no_new_finalizers_while_deleting(rt, &name, old, &new)?;
    if rt.has_status {
        match old.get("status") {
            Some(status) => new["status"] = status.clone(),
            None => drop(new.as_object_mut().map(|m| m.remove("status"))),
        }
    }
    normalize(rt, &mut new)?;
    immutability::check_update(rt, &name, old, &new)?;
    Ok(new)
}

/// Sets `new`'s generation from `old`'s as the strategy says, once `new` is final (after a
/// custom resource's defaulting). Writes to `/status` keep the generation.
pub fn settle_generation(rt: &ResourceType, subresource: Option<&str>, old: &Value, new: &mut Value) {
    let generation = match subresource {
        Some("status") => old.pointer("/metadata/generation").and_then(Value::as_i64),
        _ => strategy::next_generation(rt, old, new),
    };
    if let Some(meta) = new["metadata"].as_object_mut() {
        match generation {
            Some(g) => meta.insert("generation".into(), json!(g)),
            None => meta.remove("generation"),
        };
    }
}

fn keep_server_owned_metadata(new: &mut Value, old: &Value) {
    let meta = new["metadata"]
        .as_object_mut()
        .expect("caller made metadata an object");
    for field in [
        "managedFields",
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
    ] {
        match old["metadata"].get(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
}

fn check_no_new_finalizers_while_deleting(
    rt: &ResourceType,
    name: &str,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    if old.pointer("/metadata/deletionTimestamp").is_none() {
        return Ok(());
    }
    let old_f = finalizers(old);
    if finalizers(new).iter().any(|f| !old_f.contains(f)) {
        return Err(ApiError::invalid_fields(
            &rt.group,
            &rt.kind,
            name,
            &[FieldError::forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the object is being deleted",
            )],
        ));
    }
    Ok(())
}

/// The object's finalizers.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| {
            a.iter().filter_map(|f| f.as_str().map(String::from)).collect()
        })
}

/// Whether two versions of an object differ in anything but resourceVersion.
pub fn differs(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        v
    };
    strip(a) != strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::Registry;

    fn stamp() -> Stamp {
        Stamp {
            now: "2026-01-01T00:00:00Z".into(),
            uid: "0123456789abcdef".into(),
        }
    }

    #[test]
    fn create_should_generate_name_and_set_server_metadata() {
        let body = json!({"metadata": {"generateName": "web-", "resourceVersion": "9"}, "spec": {"replicas": 1}, "status": {"x": 1}});
        let o = prepare_create(
            &Registry::builtin_type("apps", "deployments"),
            "v1",
            Some("ns"),
            body,
            &stamp(),
        )
        .expect("valid");
        assert!(name_of(&o).starts_with("web-") && name_of(&o).len() == 9, "{o}");
        assert_eq!(o["metadata"]["generation"], 1);
        assert_eq!(o["metadata"]["namespace"], "ns");
        assert_eq!(o["apiVersion"], "apps/v1");
        assert!(
            o.get("status").is_none(),
            "status is ignored on create for kinds with /status"
        );
        assert!(o["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn update_should_bump_generation_only_for_spec_changes() {
        let deploy = Registry::builtin_type("apps", "deployments");
        let old = prepare_create(
            &deploy,
            "v1",
            Some("ns"),
            json!({"metadata": {"name": "d"}, "spec": {"r": 1}}),
            &stamp(),
        )
        .expect("valid");
        let generation_after = |body: Value| {
            let mut new = prepare_update(&deploy, None, &old, body).expect("valid");
            settle_generation(&deploy, None, &old, &mut new);
            new["metadata"]["generation"].clone()
        };
        assert_eq!(
            generation_after(json!({"metadata": {"name": "d", "labels": {"a": "b"}}, "spec": {"r": 1}})),
            1
        );
        assert_eq!(
            generation_after(json!({"metadata": {"name": "d"}, "spec": {"r": 2}})),
            2
        );
    }

    #[test]
    fn kinds_without_a_generation_should_never_carry_one() {
        let secrets = Registry::builtin_type("", "secrets");
        let created = prepare_create(
            &secrets,
            "v1",
            Some("ns"),
            json!({"metadata": {"name": "s", "generation": 7}}),
            &stamp(),
        )
        .expect("valid");
        assert!(created["metadata"].get("generation").is_none(), "{created}");
    }

    #[test]
    fn main_endpoint_should_ignore_status_and_status_endpoint_everything_else() {
        let deploy = Registry::builtin_type("apps", "deployments");
        let mut old = json!({"metadata": {"name": "d", "resourceVersion": "5", "generation": 1}, "spec": {"r": 1}, "status": {"ready": 0}});
        old["kind"] = json!("Deployment");
        let main = prepare_update(
            &deploy,
            None,
            &old,
            json!({"metadata": {}, "spec": {"r": 1}, "status": {"ready": 9}}),
        )
        .expect("valid");
        assert_eq!(main["status"]["ready"], 0);
        let status = prepare_update(
            &deploy,
            Some("status"),
            &old,
            json!({"metadata": {}, "spec": {"r": 7}, "status": {"ready": 9}}),
        )
        .expect("valid");
        assert_eq!(
            (status["status"]["ready"].clone(), status["spec"]["r"].clone()),
            (json!(9), json!(1))
        );
    }

    #[test]
    fn update_with_stale_resource_version_should_conflict() {
        let old = json!({"metadata": {"name": "l", "resourceVersion": "5"}});
        let e = prepare_update(
            &Registry::builtin_type("coordination.k8s.io", "leases"),
            None,
            &old,
            json!({"metadata": {"resourceVersion": "4"}}),
        )
        .unwrap_err();
        assert_eq!((e.code, e.reason), (409, "Conflict"));
    }
}
