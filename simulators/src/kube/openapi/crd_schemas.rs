//! The schemas of the stored CustomResourceDefinitions as the real server publishes them:
//! one definition per served version, named `<reversed group>.<version>.<Kind>`
//! (`com.ferrvault.v1alpha1.FerrVaultSecret`), the version's `openAPIV3Schema` with the
//! `apiVersion`, `kind` and `metadata` properties every object has, tagged with its
//! `x-kubernetes-group-version-kind`.

use crate::kube::{registry::ResourceId, store::Store};
use serde_json::{Value, json};

/// The name under which `ObjectMeta` is published (and referenced).
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One served version of a CRD.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// API group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The version's `openAPIV3Schema` as stored.
    pub schema: Value,
}

impl Published {
    /// `com.ferrvault.v1alpha1.FerrVaultSecret`.
    pub fn definition_name(&self) -> String {
        let reversed: Vec<&str> = self.group.split('.').rev().collect();
        format!("{}.{}.{}", reversed.join("."), self.version, self.kind)
    }

    /// The published schema; `metadata` is the property schema of `metadata` (a reference
    /// in the document's dialect).
    pub fn definition(&self, metadata: Value) -> Value {
        let mut schema = self.schema.clone();
        if !schema.is_object() {
            schema = json!({ "type": "object" });
        }
        if !schema["properties"].is_object() {
            schema["properties"] = json!({});
        }
        schema["properties"]["apiVersion"] = json!({ "type": "string", "description": API_VERSION_DOC });
        schema["properties"]["kind"] = json!({ "type": "string", "description": KIND_DOC });
        schema["properties"]["metadata"] = metadata;
        schema["x-kubernetes-group-version-kind"] =
            json!([{ "group": self.group, "kind": self.kind, "version": self.version }]);
        schema
    }
}

/// The metadata property of a published definition referring to `reference`.
pub fn metadata_property(reference: &str) -> Value {
    json!({ "allOf": [{ "$ref": reference }], "default": {}, "description": METADATA_DOC })
}

/// Every served version of every established CRD in `group`/`version` (all when `None`).
pub fn published(store: &Store, group_version: Option<(&str, &str)>) -> Vec<Published> {
    let crds = ResourceId {
        group: "apiextensions.k8s.io".into(),
        plural: "customresourcedefinitions".into(),
    };
    let mut out = Vec::new();
    for (_, crd) in store.range(&crds, None, None) {
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let kind = spec["names"]["kind"].as_str().unwrap_or_default();
        for v in spec["versions"].as_array().into_iter().flatten() {
            let version = v["name"].as_str().unwrap_or_default();
            let served = v["served"].as_bool().unwrap_or(true);
            if !served || group_version.is_some_and(|gv| gv != (group, version)) {
                continue;
            }
            out.push(Published {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                schema: v
                    .pointer("/schema/openAPIV3Schema")
                    .cloned()
                    .unwrap_or(Value::Null),
            });
        }
    }
    out
}

/// `ObjectMeta`'s schema: the fields clients set and read, as published by a real server
/// (references inlined).
pub fn object_meta() -> Value {
    let string = |d: &str| json!({ "type": "string", "description": d });
    let string_map = |d: &str| json!({ "type": "object", "additionalProperties": { "type": "string", "default": "" }, "description": d });
    json!({
        "type": "object",
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "properties": {
            "annotations": string_map("Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations"),
            "creationTimestamp": { "type": "string", "format": "date-time", "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC." },
            "deletionGracePeriodSeconds": { "type": "integer", "format": "int64", "description": "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. May only be shortened. Read-only." },
            "deletionTimestamp": { "type": "string", "format": "date-time", "description": "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client." },
            "finalizers": { "type": "array", "items": { "type": "string", "default": "" }, "x-kubernetes-list-type": "set", "description": "Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list." },
            "generateName": string("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "generation": { "type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only." },
            "labels": string_map("Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels"),
            "managedFields": { "type": "array", "items": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }, "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow." },
            "name": string("Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"),
            "namespace": string("Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the \"default\" namespace. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces"),
            "ownerReferences": { "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"], "description": "List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected.", "items": {
                "type": "object", "required": ["apiVersion", "kind", "name", "uid"], "properties": {
                    "apiVersion": string("API version of the referent."),
                    "blockOwnerDeletion": { "type": "boolean", "description": "If true, AND if the owner has the \"foregroundDeletion\" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed." },
                    "controller": { "type": "boolean", "description": "If true, this reference points to the managing controller." },
                    "kind": string("Kind of the referent."),
                    "name": string("Name of the referent."),
                    "uid": string("UID of the referent."),
                }}},
            "resourceVersion": string("An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. Read-only."),
            "selfLink": string("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
            "uid": string("UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations. Read-only."),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_should_be_named_by_reversed_group_and_carry_type_meta() {
        let p = Published {
            group: "ferrvault.com".into(),
            version: "v1alpha1".into(),
            kind: "FerrVaultSecret".into(),
            schema: json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
        };
        assert_eq!(p.definition_name(), "com.ferrvault.v1alpha1.FerrVaultSecret");
        let d = p.definition(json!({"$ref": "x"}));
        assert_eq!(d["properties"]["spec"], json!({"type": "object"}));
        assert_eq!(d["properties"]["kind"]["type"], "string");
        assert_eq!(d["x-kubernetes-group-version-kind"][0]["kind"], "FerrVaultSecret");
    }
}
