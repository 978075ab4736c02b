//! `metadata.managedFields`, kept the way the real API server keeps them, simplified.
//!
//! Every create, update and patch that changes an object records who wrote it: one entry per
//! (manager, operation, subresource) — `{manager, operation, apiVersion, time, fieldsType:
//! "FieldsV1", fieldsV1, subresource?}`. A later write by the same manager with the same
//! operation and subresource replaces its entry in place; a new one is appended.
//!
//! The manager is the `fieldManager` query parameter, else the User-Agent up to its first `/`
//! (the real server's `prefixFromUserAgent`), else `unknown` (what a real server records for
//! kube-rs clients, which send no User-Agent, when no `fieldManager` is given).
//!
//! # Guarantees
//! - A write that changes nothing records nothing (no new resourceVersion, no event), as on a
//!   real server; a managedFields entry alone never bumps `generation` (it is metadata).
//! - Clients cannot set managedFields: what a create or update sends is ignored and the stored
//!   entries are kept — except the reset the real server documents: an update or patch whose
//!   object carries `managedFields: [{}]` (one empty entry) strips them all, and that write
//!   records no entry. An empty list `[]` does not reset (on purpose upstream, so clients
//!   unaware of the field cannot wipe it).
//!
//! # Simplifications
//! - `fieldsV1` is the set of field paths present in what the write sent, not ownership
//!   computed by structured-merge-diff: for `Update` the whole written object (main endpoint:
//!   everything but `status` for kinds with a status subresource, and server-owned or
//!   identifying metadata; `/status`: only `status`), for `Apply` the applied configuration.
//!   Nested maps become nested `f:<key>` sets; lists and scalars are leaves (`{}`): no `k:`/`v:`
//!   list-item keys and no `.` markers. Fields are not taken away from other managers, so
//!   their sets can overlap, and no apply conflicts are detected.
//! - Writes the simulator makes itself (CRD `status`, finalizer release by garbage collection)
//!   record nothing; the bootstrap namespaces are recorded as written by `kube-apiserver`.

use serde_json::{Map, Value, json};

/// The manager recorded when neither `fieldManager` nor a User-Agent names one.
pub const UNKNOWN_MANAGER: &str = "unknown";

/// The operation of a managedFields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Create, update and every patch type but apply.
    Update,
    /// Server-side apply.
    Apply,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Update => "Update",
            Operation::Apply => "Apply",
        }
    }
}

/// The field manager of a request: `fieldManager` if given and not empty, else the printable
/// part of the User-Agent before its first `/` (at most 128 characters), else [`UNKNOWN_MANAGER`].
pub fn manager_name(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    let prefix: String = user_agent
        .unwrap_or_default()
        .split('/')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(128)
        .collect();
    if prefix.is_empty() {
        UNKNOWN_MANAGER.to_owned()
    } else {
        prefix
    }
}

/// One write to record.
#[derive(Debug, Clone)]
pub struct Write<'a> {
    /// Who writes.
    pub manager: &'a str,
    /// How.
    pub operation: Operation,
    /// The `apiVersion` of the request (`group/version`, or `v1`).
    pub api_version: &'a str,
    /// `Some("status")` for writes to `/status`.
    pub subresource: Option<&'a str>,
    /// RFC 3339 time of the write.
    pub time: &'a str,
}

/// Metadata fields a manager does not own: identity and what the server sets.
const NOT_MANAGED_METADATA: [&str; 11] = [
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
    "managedFields",
    "generateName",
];

/// The `fieldsV1` set of the fields in `written`: for `/status` writes only `status`, else
/// everything but `kind`, `apiVersion`, server-owned metadata and (when `status_is_separate`,
/// the kind has a status subresource) `status`.
pub fn fields_v1(written: &Value, subresource: Option<&str>, status_is_separate: bool) -> Value {
    let Some(obj) = written.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for (key, value) in obj {
        let keep = match (subresource, key.as_str()) {
            (Some(_), k) => k == "status",
            (None, "kind" | "apiVersion") => false,
            (None, "status") => !status_is_separate,
            (None, _) => true,
        };
        if !keep {
            continue;
        }
        let set = if key == "metadata" {
            let mut meta = value.as_object().cloned().unwrap_or_default();
            NOT_MANAGED_METADATA.iter().for_each(|f| drop(meta.remove(*f)));
            if meta.is_empty() {
                continue;
            }
            field_set(&Value::Object(meta))
        } else {
            field_set(value)
        };
        out.insert(format!("f:{key}"), set);
    }
    Value::Object(out)
}

fn field_set(value: &Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (format!("f:{k}"), field_set(v))).collect()),
        _ => json!({}),
    }
}

/// Whether a submitted object asks to clear managedFields: exactly one empty entry.
pub fn requests_reset(submitted: &Value) -> bool {
    submitted
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .is_some_and(|entries| entries.len() == 1 && entries[0].as_object().is_some_and(Map::is_empty))
}

/// Records `write` in `obj`'s managedFields with `fields` (see [`fields_v1`]): replaces the
/// entry of the same manager, operation and subresource, or appends one.
pub fn record(obj: &mut Value, write: &Write<'_>, fields: Value) {
    let mut entry = json!({
        "manager": write.manager,
        "operation": write.operation.as_str(),
        "apiVersion": write.api_version,
        "time": write.time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    });
    if let Some(sub) = write.subresource {
        entry["subresource"] = json!(sub);
    }
    let same = |e: &Value| {
        e["manager"] == entry["manager"]
            && e["operation"] == entry["operation"]
            && e["subresource"] == entry["subresource"]
    };
    let meta = &mut obj["metadata"];
    if !meta["managedFields"].is_array() {
        meta["managedFields"] = json!([]);
    }
    let entries = meta["managedFields"].as_array_mut().expect("made an array above");
    match entries.iter_mut().find(|e| same(e)) {
        Some(existing) => *existing = entry,
        None => entries.push(entry),
    }
}

/// Removes all managedFields from `obj` (the reset).
pub fn clear(obj: &mut Value) {
    if let Some(meta) = obj["metadata"].as_object_mut() {
        meta.remove("managedFields");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write<'a>(manager: &'a str, operation: Operation, subresource: Option<&'a str>) -> Write<'a> {
        Write {
            manager,
            operation,
            api_version: "v1",
            subresource,
            time: "2026-01-01T00:00:00Z",
        }
    }

    #[test]
    fn manager_name_should_prefer_field_manager_then_user_agent_prefix_then_unknown() {
        assert_eq!(
            manager_name(Some("ferrvault"), Some("kubectl/v1.33")),
            "ferrvault"
        );
        assert_eq!(
            manager_name(None, Some("kubectl-client-side-apply/v1.33.0 (linux/amd64)")),
            "kubectl-client-side-apply"
        );
        assert_eq!(manager_name(Some(""), Some("curl/8.0")), "curl");
        assert_eq!(manager_name(None, None), UNKNOWN_MANAGER);
        assert_eq!(manager_name(None, Some("/x")), UNKNOWN_MANAGER);
    }

    #[test]
    fn fields_v1_should_nest_map_keys_and_leave_out_server_owned_metadata_and_separate_status() {
        let obj = json!({"kind": "Secret", "apiVersion": "v1",
            "metadata": {"name": "s", "uid": "u", "resourceVersion": "3", "labels": {"a": "b"}, "finalizers": ["x"]},
            "data": {"k": "dg=="}, "spec": {"vault": {"path": "p"}, "list": [{"a": 1}]}, "status": {"ok": true}});
        assert_eq!(
            fields_v1(&obj, None, true),
            json!({"f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {}},
                "f:data": {"f:k": {}}, "f:spec": {"f:vault": {"f:path": {}}, "f:list": {}}})
        );
        assert_eq!(
            fields_v1(&obj, Some("status"), true),
            json!({"f:status": {"f:ok": {}}})
        );
        assert!(fields_v1(&obj, None, false).get("f:status").is_some());
    }

    #[test]
    fn record_should_replace_the_entry_of_the_same_manager_operation_and_subresource() {
        let mut obj = json!({"metadata": {"name": "s"}});
        record(
            &mut obj,
            &write("a", Operation::Update, None),
            json!({"f:data": {}}),
        );
        record(&mut obj, &write("b", Operation::Update, None), json!({}));
        record(&mut obj, &write("a", Operation::Apply, None), json!({}));
        record(
            &mut obj,
            &write("a", Operation::Update, Some("status")),
            json!({}),
        );
        record(
            &mut obj,
            &write("a", Operation::Update, None),
            json!({"f:spec": {}}),
        );
        let entries = obj["metadata"]["managedFields"].as_array().expect("entries");
        let ids: Vec<_> = entries
            .iter()
            .map(|e| {
                (
                    e["manager"].clone(),
                    e["operation"].clone(),
                    e.get("subresource").cloned(),
                )
            })
            .collect();
        assert_eq!(
            ids,
            [
                (json!("a"), json!("Update"), None),
                (json!("b"), json!("Update"), None),
                (json!("a"), json!("Apply"), None),
                (json!("a"), json!("Update"), Some(json!("status"))),
            ]
        );
        assert_eq!(entries[0]["fieldsV1"], json!({"f:spec": {}}));
        assert_eq!(entries[0]["fieldsType"], "FieldsV1");
    }

    #[test]
    fn only_a_single_empty_entry_should_request_a_reset() {
        assert!(requests_reset(&json!({"metadata": {"managedFields": [{}]}})));
        assert!(!requests_reset(&json!({"metadata": {"managedFields": []}})));
        assert!(!requests_reset(&json!({"metadata": {}})));
        assert!(!requests_reset(
            &json!({"metadata": {"managedFields": [{"manager": "x"}]}})
        ));
    }
}
