//! One Event resource served through two APIs, as the real server does: objects are kept
//! as core `v1` Events and `events.k8s.io/v1` reads and writes them converted, so an
//! Event an operator writes through `events.k8s.io` shows in `kubectl get events` and
//! `kubectl describe` (which read core `v1` with `involvedObject.*` field selectors).
//!
//! The conversion renames fields (`regarding` ↔ `involvedObject`, `note` ↔ `message`,
//! `reportingController` ↔ `reportingComponent`, `deprecated*` ↔ their core names);
//! everything else has the same name in both. Field selectors on `events.k8s.io` name
//! the `events.k8s.io` fields and are matched against the stored core ones.

use super::registry::ResourceType;
use serde_json::Value;

/// `(events.k8s.io/v1 name, core v1 name)` of every field whose name differs.
const RENAMED: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Whether `rt` is the `events.k8s.io` view of core Events.
pub fn is_events_api(rt: &ResourceType) -> bool {
    rt.group == "events.k8s.io" && rt.plural == "events"
}

fn rename(obj: &mut Value, to_core: bool) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    for (api, core) in RENAMED {
        let (from, to) = if to_core { (api, core) } else { (core, api) };
        if let Some(v) = map.remove(from) {
            map.insert(to.to_string(), v);
        }
    }
}

/// An object as `rt` keeps it (a no-op for every type but `events.k8s.io` Events).
pub fn to_stored(rt: &ResourceType, mut obj: Value) -> Value {
    if is_events_api(rt) {
        rename(&mut obj, true);
    }
    obj
}

/// A stored object as `rt` serves it (a no-op for every type but `events.k8s.io` Events).
pub fn from_stored(rt: &ResourceType, obj: &Value) -> Value {
    let mut obj = obj.clone();
    if is_events_api(rt) {
        rename(&mut obj, false);
    }
    obj
}

/// The stored field a field selector on `rt` names (`regarding.name` →
/// `involvedObject.name` for `events.k8s.io`).
pub fn stored_field(rt_group: &str, field: &str) -> String {
    if rt_group != "events.k8s.io" {
        return field.to_string();
    }
    let (head, rest) = field.split_once('.').map_or((field, None), |(h, r)| (h, Some(r)));
    let head = RENAMED
        .iter()
        .find(|(api, _)| *api == head)
        .map_or(head, |(_, stored)| stored);
    match rest {
        Some(rest) => format!("{head}.{rest}"),
        None => head.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::{Registry, ResourceId};
    use serde_json::json;

    fn events_api() -> ResourceType {
        Registry::default()
            .get(&ResourceId {
                group: "events.k8s.io".into(),
                plural: "events".into(),
            })
            .cloned()
            .expect("served")
    }

    #[test]
    fn an_events_api_event_should_be_stored_as_a_core_event_and_read_back_unchanged() {
        let event = json!({"metadata": {"name": "e"}, "regarding": {"kind": "Pod", "name": "p"},
            "note": "pulled", "reason": "Pulled", "type": "Normal", "reportingController": "kubelet",
            "eventTime": "2026-01-02T03:04:05.000000Z", "series": {"count": 2}});
        let stored = to_stored(&events_api(), event.clone());
        assert_eq!(stored["involvedObject"]["name"], "p");
        assert_eq!(
            (&stored["message"], &stored["reportingComponent"]),
            (&json!("pulled"), &json!("kubelet"))
        );
        assert!(stored.get("regarding").is_none() && stored.get("note").is_none());
        assert_eq!(from_stored(&events_api(), &stored), event);
    }

    #[test]
    fn field_selectors_on_the_events_api_should_name_stored_fields() {
        assert_eq!(
            stored_field("events.k8s.io", "regarding.name"),
            "involvedObject.name"
        );
        assert_eq!(
            stored_field("events.k8s.io", "reportingController"),
            "reportingComponent"
        );
        assert_eq!(stored_field("events.k8s.io", "metadata.name"), "metadata.name");
        assert_eq!(stored_field("", "involvedObject.name"), "involvedObject.name");
    }
}
