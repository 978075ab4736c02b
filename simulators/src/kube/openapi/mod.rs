//! OpenAPI documents, generated from what is served whenever they are asked for (so a CRD
//! change shows at once, with a new hash in the v3 index):
//!
//! - `/openapi/v3`: the index and one document per group-version that lists each
//!   resource's PATCH operation with its `x-kubernetes-group-version-kind` and the
//!   `fieldValidation` query parameter, and the schemas of the CRDs served in it (see
//!   [`crd_schemas`]). kubectl (1.27+) reads the operations to decide that the server
//!   validates fields itself (`kubectl apply`/`create`/`replace` then send
//!   `fieldValidation=Strict`), and the schemas for `kubectl explain`.
//! - `/openapi/v2` (see [`v2`]): the CRDs' schemas in one Swagger 2.0 document, JSON or
//!   protobuf; kubectl validates the items of a `kind: List` against it.
//!
//! Built-in kinds have no schemas here: kubectl computes strategic merge patches from its
//! compiled-in types, `kubectl explain` works for custom resources only, and the
//! simulator does not reject unknown fields of built-in kinds (those of custom resources it
//! prunes or, with `fieldValidation=Strict`, refuses: see [`super::admission`]).

pub mod crd_schemas;
mod gnostic;
pub mod v2;

use super::{
    registry::{Registry, ResourceType},
    store::Store,
};
use crd_schemas::{OBJECT_META, metadata_property, object_meta, published};
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
pub fn document(store: &Store, group: &str, version: &str) -> Option<Value> {
    let registry = &store.registry;
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
    let mut schemas = Map::new();
    let metadata = metadata_property(&format!("#/components/schemas/{OBJECT_META}"));
    for crd in published(store, Some((group, version))) {
        schemas.insert(crd.definition_name(), crd.definition(metadata.clone()));
    }
    if !schemas.is_empty() {
        schemas.insert(OBJECT_META.into(), object_meta());
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": super::discovery::GIT_VERSION },
        "paths": paths,
        "components": { "schemas": schemas },
    }))
}

/// `/openapi/v3`: where each group-version's document lives, with a content hash so
/// clients refetch a document when CRDs change it.
pub fn index(store: &Store) -> Value {
    let mut paths = Map::new();
    for (g, v) in group_versions(&store.registry) {
        let Some(doc) = document(store, &g, &v) else {
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
pub fn document_at(store: &Store, rest: &[String]) -> Option<Value> {
    match rest.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["api", v] => document(store, "", v),
        ["apis", g, v] => document(store, g, v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_should_point_at_a_document_advertising_field_validation_for_each_kind() {
        let store = Store::new(10);
        let index = index(&store);
        assert!(
            index["paths"]["apis/apps/v1"]["serverRelativeURL"]
                .as_str()
                .expect("url")
                .starts_with("/openapi/v3/apis/apps/v1?hash=")
        );
        let doc = document(&store, "", "v1").expect("core v1");
        let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/secrets/{name}"]["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Secret");
        assert_eq!(patch["parameters"][0]["name"], "fieldValidation");
        assert!(doc["paths"]["/api/v1/namespaces/{name}"]["patch"].is_object());
    }
}
