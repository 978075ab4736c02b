//! Server-side table columns of the built-in kinds users list, as the real server's
//! printers (`pkg/printers/internalversion`) define and fill them. Kinds not listed here
//! get Name and Age, like custom resources without printer columns.

use super::{registry::ResourceType, table::human_age};
use serde_json::{Value, json};

/// A built-in kind's columns: definitions (`name`, `type`, `priority`, `description`) and
/// the cells of one object.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// `(name, type, priority, description)` of each column, `Name` included where shown.
    pub columns: &'static [(&'static str, &'static str, i64, &'static str)],
    /// One row's cells, in column order.
    pub cells: fn(&Value) -> Vec<Value>,
}

const NAME: (&str, &str, i64, &str) = (
    "Name",
    "string",
    0,
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
);
const AGE: (&str, &str, i64, &str) = (
    "Age",
    "string",
    0,
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
);

/// The printer of `rt`, if it has its own columns.
pub fn printer(rt: &ResourceType) -> Option<Printer> {
    let (columns, cells): (&'static [_], fn(&Value) -> Vec<Value>) =
        match (rt.group.as_str(), rt.plural.as_str()) {
            ("apps", "deployments") => (DEPLOYMENT, deployment),
            ("", "secrets") => (SECRET, secret),
            ("", "configmaps") => (CONFIGMAP, configmap),
            ("", "namespaces") => (NAMESPACE, namespace),
            ("", "events") | ("events.k8s.io", "events") => (EVENT, event),
            ("coordination.k8s.io", "leases") => (LEASE, lease),
            _ => return None,
        };
    Some(Printer { columns, cells })
}

/// The column definitions of a Table, in the shape `meta.k8s.io/v1` gives them.
pub fn definitions(p: &Printer) -> Vec<Value> {
    p.columns
        .iter()
        .map(|(name, ty, priority, description)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({ "name": name, "type": ty, "format": format, "description": description, "priority": priority })
        })
        .collect()
}

fn text<'v>(obj: &'v Value, pointer: &str) -> &'v str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

fn int(obj: &Value, pointer: &str) -> i64 {
    obj.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn count(obj: &Value, pointer: &str) -> usize {
    obj.pointer(pointer)
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len)
}

fn name(obj: &Value) -> Value {
    json!(text(obj, "/metadata/name"))
}

fn age(obj: &Value) -> Value {
    json!(human_age(text(obj, "/metadata/creationTimestamp")))
}

const DEPLOYMENT: &[(&str, &str, i64, &str)] = &[
    NAME,
    ("Ready", "string", 0, "Number of the pod with ready state"),
    (
        "Up-to-date",
        "string",
        0,
        "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
    ),
    (
        "Available",
        "string",
        0,
        "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    AGE,
    (
        "Containers",
        "string",
        1,
        "Names of each container in the template.",
    ),
    (
        "Images",
        "string",
        1,
        "Images referenced by each container in the template.",
    ),
    (
        "Selector",
        "string",
        1,
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
    ),
];

fn deployment(d: &Value) -> Vec<Value> {
    let desired = d.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
    let containers = d
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let joined = |field: &str| {
        containers
            .iter()
            .map(|c| c[field].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    vec![
        name(d),
        json!(format!("{}/{desired}", int(d, "/status/readyReplicas"))),
        json!(int(d, "/status/updatedReplicas")),
        json!(int(d, "/status/availableReplicas")),
        age(d),
        json!(joined("name")),
        json!(joined("image")),
        json!(selector(d.pointer("/spec/selector"))),
    ]
}

/// A label selector as `metav1.FormatLabelSelector` prints it (`<none>` when empty).
fn selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel else {
        return "<none>".into();
    };
    let mut parts: Vec<String> = sel["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    for e in sel["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        parts.push(match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            _ => format!("!{key}"),
        });
    }
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

const SECRET: &[(&str, &str, i64, &str)] = &[
    NAME,
    (
        "Type",
        "string",
        0,
        "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    (
        "Data",
        "string",
        0,
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    AGE,
];

fn secret(s: &Value) -> Vec<Value> {
    vec![name(s), json!(text(s, "/type")), json!(count(s, "/data")), age(s)]
}

const CONFIGMAP: &[(&str, &str, i64, &str)] = &[
    NAME,
    (
        "Data",
        "string",
        0,
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    AGE,
];

fn configmap(c: &Value) -> Vec<Value> {
    vec![
        name(c),
        json!(count(c, "/data") + count(c, "/binaryData")),
        age(c),
    ]
}

const NAMESPACE: &[(&str, &str, i64, &str)] =
    &[NAME, ("Status", "string", 0, "The status of the namespace"), AGE];

fn namespace(n: &Value) -> Vec<Value> {
    vec![name(n), json!(text(n, "/status/phase")), age(n)]
}

const EVENT: &[(&str, &str, i64, &str)] = &[
    (
        "Last Seen",
        "string",
        0,
        "The time at which the most recent occurrence of this event was recorded.",
    ),
    (
        "Type",
        "string",
        0,
        "Type of this event (Normal, Warning), new types could be added in the future",
    ),
    (
        "Reason",
        "string",
        0,
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    ("Object", "string", 0, "The object that this event is about."),
    (
        "Subobject",
        "string",
        1,
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
    ),
    (
        "Source",
        "string",
        1,
        "The component reporting this event. Should be a short machine understandable string.",
    ),
    (
        "Message",
        "string",
        0,
        "A human-readable description of the status of this operation.",
    ),
    (
        "First Seen",
        "string",
        1,
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    ),
    (
        "Count",
        "string",
        1,
        "The number of times this event has occurred.",
    ),
    ("Name", "string", 1, NAME.3),
];

/// A core Event (as stored) the way `printEvent` prints it: times fall back from
/// `lastTimestamp` to `firstTimestamp` to `eventTime`, a series overrides both.
fn event(e: &Value) -> Vec<Value> {
    let since = |pointer: &str| Some(text(e, pointer)).filter(|t| !t.is_empty()).map(human_age);
    let first = since("/firstTimestamp")
        .or_else(|| since("/eventTime"))
        .unwrap_or_else(|| "<unknown>".into());
    let mut last = since("/lastTimestamp").unwrap_or_else(|| first.clone());
    let mut times = int(e, "/count");
    if e.get("series").is_some_and(Value::is_object) {
        last = since("/series/lastObservedTime").unwrap_or_else(|| "<unknown>".into());
        times = int(e, "/series/count");
    } else if times == 0 {
        times = 1;
    }
    let kind = text(e, "/involvedObject/kind").to_lowercase();
    let object = match text(e, "/involvedObject/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    vec![
        json!(last),
        json!(text(e, "/type")),
        json!(text(e, "/reason")),
        json!(object),
        json!(text(e, "/involvedObject/fieldPath")),
        json!(event_source(e)),
        json!(text(e, "/message").trim()),
        json!(first),
        json!(times),
        name(e),
    ]
}

/// `formatEventSource`: the source component (or reporting controller) and host.
fn event_source(e: &Value) -> String {
    let component = match text(e, "/source/component") {
        "" => text(e, "/reportingComponent"),
        c => c,
    };
    let host = match text(e, "/source/host") {
        "" => text(e, "/reportingInstance"),
        h => h,
    };
    match (component, host) {
        ("", _) => "<unknown>".into(),
        (c, "") => c.into(),
        (c, h) => format!("{c}, {h}"),
    }
}

const LEASE: &[(&str, &str, i64, &str)] = &[
    NAME,
    (
        "Holder",
        "string",
        0,
        "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
    ),
    AGE,
];

fn lease(l: &Value) -> Vec<Value> {
    vec![name(l), json!(text(l, "/spec/holderIdentity")), age(l)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::registry::{Registry, ResourceId};

    fn printer_of(group: &str, plural: &str) -> Printer {
        let rt = Registry::default()
            .get(&ResourceId {
                group: group.into(),
                plural: plural.into(),
            })
            .cloned()
            .expect("built in");
        printer(&rt).expect("has columns")
    }

    #[test]
    fn deployment_rows_should_show_ready_of_desired_and_the_selector() {
        let p = printer_of("apps", "deployments");
        let d = json!({"metadata": {"name": "web"}, "spec": {"replicas": 3,
            "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]},
            "template": {"spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "envoy"}]}}},
            "status": {"readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1}});
        let cells = (p.cells)(&d);
        assert_eq!(cells[..4], [json!("web"), json!("1/3"), json!(2), json!(1)]);
        assert_eq!(
            cells[5..],
            [json!("a,b"), json!("nginx,envoy"), json!("app=web,tier in (a,b)")]
        );
    }

    #[test]
    fn event_rows_should_name_the_object_and_count_a_series() {
        let p = printer_of("", "events");
        let e = json!({"metadata": {"name": "x.1"}, "type": "Warning", "reason": "SyncFailed",
            "involvedObject": {"kind": "FerrVaultSecret", "name": "app"}, "message": " boom ",
            "reportingComponent": "ferrvault-operator", "series": {"count": 4}});
        let cells = (p.cells)(&e);
        assert_eq!(
            cells[1..4],
            [
                json!("Warning"),
                json!("SyncFailed"),
                json!("ferrvaultsecret/app")
            ]
        );
        assert_eq!(
            (cells[5].clone(), cells[6].clone(), cells[8].clone()),
            (json!("ferrvault-operator"), json!("boom"), json!(4))
        );
        assert_eq!(definitions(&p)[0]["name"], "Last Seen");
    }
}
