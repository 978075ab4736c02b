//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}` and
//! `/apis/{group}/{version}`, in the legacy (unaggregated) JSON form that client-go's
//! discovery and kubectl's REST mapper fall back to when the server answers a request
//! for aggregated discovery with plain `application/json`.

use super::{
    registry::{Registry, ResourceType},
    scale::is_scalable,
};
use serde_json::{Value, json};

/// The Kubernetes version the simulator claims to be.
pub const GIT_VERSION: &str = "v1.33.0-ferrvault-sim";

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24.0", "compiler": "gc", "platform": "linux/amd64",
    })
}

/// `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }],
    })
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({ "groupVersion": format!("{name}/{v}"), "version": v });
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry.groups().iter().map(|(g, vs)| group_doc(g, vs)).collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `/apis/{group}`, if served.
pub fn group(registry: &Registry, name: &str) -> Option<Value> {
    let (g, vs) = registry.groups().into_iter().find(|(g, _)| g == name)?;
    let mut doc = group_doc(&g, &vs);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

fn resource_entries(t: &ResourceType) -> Vec<Value> {
    let mut main = json!({
        "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced,
        "kind": t.kind, "verbs": t.verbs,
    });
    if !t.short_names.is_empty() {
        main["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        main["categories"] = json!(t.categories);
    }
    let mut out = vec![main];
    if t.has_status {
        out.push(json!({
            "name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced,
            "kind": t.kind, "verbs": ["get", "patch", "update"],
        }));
    }
    if is_scalable(t) {
        out.push(json!({
            "name": format!("{}/scale", t.plural), "singularName": "", "namespaced": t.namespaced,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `/api/v1` or `/apis/{group}/{version}`, if served.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let resources: Vec<Value> = registry
        .all()
        .filter(|t| t.group == group && t.versions.iter().any(|v| v == version))
        .flat_map(resource_entries)
        .collect();
    if resources.is_empty() && !(group.is_empty() && version == "v1") {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({ "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_list_should_describe_status_subresources_and_short_names() {
        let doc = resource_list(&Registry::default(), "apps", "v1").expect("apps/v1 served");
        let names: Vec<&str> = doc["resources"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(
            names.contains(&"deployments") && names.contains(&"deployments/status"),
            "{names:?}"
        );
        assert_eq!(doc["resources"][0]["shortNames"], json!(["ds"]));
        assert_eq!(
            doc["resources"][0]["categories"],
            json!(["all"]),
            "kubectl get all includes daemonsets"
        );
    }

    #[test]
    fn group_list_should_prefer_the_first_version() {
        let doc = group_list(&Registry::default());
        let apps = doc["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .find(|g| g["name"] == "apps")
            .cloned()
            .expect("apps");
        assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    }
}
