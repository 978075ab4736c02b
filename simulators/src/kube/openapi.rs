//! A minimal OpenAPI v3 surface: the `/openapi/v3` index and one document per
//! group-version that lists each resource's PATCH operation with its
//! `x-kubernetes-group-version-kind` and the `fieldValidation` query parameter.
//!
//! That is exactly what kubectl (1.27+) reads to decide that the server validates fields
//! itself: with it, `kubectl apply`/`create`/`replace` under the default
//! `--validate=strict` send `fieldValidation=Strict` instead of downloading schemas for
//! client-side validation (which would fail without `/openapi/v2`). No schemas are
//! served, so kubectl computes strategic merge patches from its compiled-in types, and
//! the simulator does not reject unknown fields.

use super::registry::{Registry, ResourceType};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn object_path(t: &ResourceType, version: &str) -> String {
    let ns = if t.namespaced {
        "/namespaces/{namespace}"
    } else {
        ""
    };
    format!("/{}{ns}/{}/{{name}}", gv_path(&t.group, version), t.plural)
}

/// Every served (group, version) pair.
fn group_versions(registry: &Registry) -> Vec<(String, String)> {
    let mut gvs: Vec<(String, String)> = vec![(String::new(), "v1".into())];
    for (g, vs) in registry.groups() {
        gvs.extend(vs.into_iter().map(|v| (g.clone(), v)));
    }
    gvs
}

/// The document for one group-version, if served.
pub fn document(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let types: Vec<&ResourceType> = registry
        .all()
        .filter(|t| t.group == group && t.versions.iter().any(|v| v == version) && !t.is_review())
        .collect();
    if types.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for t in types {
        let gvk = json!({ "group": t.group, "version": version, "kind": t.kind });
        let patch = json!({
            "operationId": format!("patch{}", t.kind),
            "parameters": [
                { "name": "fieldValidation", "in": "query", "schema": { "type": "string", "uniqueItems": true } },
                { "name": "fieldManager", "in": "query", "schema": { "type": "string", "uniqueItems": true } },
            ],
            "responses": { "200": { "description": "OK" } },
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
        });
        paths.insert(object_path(t, version), json!({ "patch": patch }));
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": super::discovery::GIT_VERSION },
        "paths": paths,
        "components": { "schemas": {} },
    }))
}

/// `/openapi/v3`: where each group-version's document lives, with a content hash so
/// clients refetch a document when CRDs change it.
pub fn index(registry: &Registry) -> Value {
    let mut paths = Map::new();
    for (g, v) in group_versions(registry) {
        let Some(doc) = document(registry, &g, &v) else {
            continue;
        };
        let hash = hex::encode(&Sha256::digest(doc.to_string().as_bytes())[..8]);
        let path = gv_path(&g, &v);
        paths.insert(
            path.clone(),
            json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}") }),
        );
    }
    json!({ "paths": paths })
}

/// The document at `/openapi/v3/<rest>`, if it names a served group-version.
pub fn document_at(registry: &Registry, rest: &[String]) -> Option<Value> {
    match rest.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["api", v] => document(registry, "", v),
        ["apis", g, v] => document(registry, g, v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_should_point_at_a_document_advertising_field_validation_for_each_kind() {
        let registry = Registry::default();
        let index = index(&registry);
        assert!(
            index["paths"]["apis/apps/v1"]["serverRelativeURL"]
                .as_str()
                .expect("url")
                .starts_with("/openapi/v3/apis/apps/v1?hash=")
        );
        let doc = document(&registry, "", "v1").expect("core v1");
        let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/secrets/{name}"]["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Secret");
        assert_eq!(patch["parameters"][0]["name"], "fieldValidation");
        assert!(doc["paths"]["/api/v1/namespaces/{name}"]["patch"].is_object());
    }
}
