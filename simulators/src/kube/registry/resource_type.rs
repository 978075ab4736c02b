//! One served resource type: its identity, names, versions, scope, verbs and schemas, for a
//! built-in kind or as a CRD describes it.

use crate::kube::{schema::VersionSchemas, table::PrinterColumn};
use serde_json::Value;
use std::sync::Arc;

/// Identity of a stored resource: API group ("" for core) and plural name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId {
    /// API group, "" for the core group.
    pub group: String,
    /// Plural resource name (`secrets`).
    pub plural: String,
}

/// Everything the server and discovery need to know about one resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    /// API group, "" for core.
    pub group: String,
    /// Served versions, preferred (storage) version first.
    pub versions: Vec<String>,
    /// Plural name used in URLs.
    pub plural: String,
    /// Singular name (`secret`).
    pub singular: String,
    /// Kind (`Secret`).
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// kubectl short names (`deploy`, `ns`).
    pub short_names: Vec<String>,
    /// Whether the kind has a `/status` subresource.
    pub has_status: bool,
    /// `additionalPrinterColumns` of the storage version (CRDs only) for `kubectl get`.
    pub printer_columns: Vec<PrinterColumn>,
    /// Discovery categories (`all` makes `kubectl get all` include the kind).
    pub categories: Vec<String>,
    /// The type whose objects this one serves, converted (None: its own objects).
    pub stored_as: Option<ResourceId>,
    /// The verbs served ([`VERBS`], or `create` alone for reviews, which store nothing).
    pub verbs: &'static [&'static str],
    /// The schemas of a custom resource's versions (None for built-in kinds).
    pub schemas: Option<Arc<VersionSchemas>>,
}

/// Built-in plurals in the `all` category, as on a real server.
const ALL_CATEGORY: [&str; 6] = [
    "pods",
    "services",
    "deployments",
    "replicasets",
    "statefulsets",
    "daemonsets",
];

/// Verbs every served resource supports.
pub const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl ResourceType {
    /// The key of this type's object store.
    pub fn id(&self) -> ResourceId {
        ResourceId {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }

    /// The preferred (storage) version.
    pub fn preferred_version(&self) -> &str {
        self.versions.first().map_or("v1", String::as_str)
    }

    /// `apiVersion` for a given version (`v1` or `apps/v1`).
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    /// `<Kind>List`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub(super) fn builtin(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        namespaced: bool,
        short: &[&str],
        status: bool,
    ) -> Self {
        ResourceType {
            group: group.into(),
            versions: vec![version.into()],
            plural: plural.into(),
            singular: kind.to_lowercase(),
            kind: kind.into(),
            namespaced,
            short_names: short.iter().map(|s| s.to_string()).collect(),
            has_status: status,
            printer_columns: Vec::new(),
            categories: if ALL_CATEGORY.contains(&plural) {
                vec!["all".into()]
            } else {
                Vec::new()
            },
            stored_as: None,
            verbs: &VERBS,
            schemas: None,
        }
    }

    /// A review: `create` only, answered from what is stored, never stored itself.
    pub(super) fn review(group: &str, plural: &str, kind: &str, namespaced: bool) -> Self {
        ResourceType {
            verbs: &["create"],
            ..Self::builtin(group, "v1", plural, kind, namespaced, &[], false)
        }
    }

    /// Whether this type is a custom resource (defined by a CRD).
    pub fn is_custom(&self) -> bool {
        self.schemas.is_some()
    }

    /// The schema objects are checked against when written at `version` (custom resources).
    pub fn schema_of(&self, version: &str) -> Option<&Value> {
        self.schemas.as_deref()?.of(version)
    }

    /// The schema of the storage version, whose defaults objects get when read.
    pub fn storage_schema(&self) -> Option<&Value> {
        self.schema_of(self.preferred_version())
    }

    /// Whether this type is a review (see [`super::auth::reviews`]).
    pub fn is_review(&self) -> bool {
        self.verbs == ["create"]
    }

    /// This type serving `storage`'s objects in its own shape.
    pub(super) fn serving(mut self, storage: &ResourceType) -> Self {
        self.stored_as = Some(storage.id());
        self
    }

    /// Types described by a CustomResourceDefinition object (one per CRD; all served
    /// versions share it). `None` when the CRD lacks the fields a real server requires.
    pub fn from_crd(crd: &Value) -> Option<Self> {
        let spec = crd.get("spec")?;
        let names = spec.get("names")?;
        let versions: Vec<&Value> = spec
            .get("versions")?
            .as_array()?
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(true))
            .collect();
        let mut ordered: Vec<&Value> = versions.iter().copied().filter(|v| is_storage(v)).collect();
        ordered.extend(versions.iter().copied().filter(|v| !is_storage(v)));
        let kind = names.get("kind")?.as_str()?.to_string();
        Some(ResourceType {
            group: spec.get("group")?.as_str()?.to_string(),
            versions: ordered
                .iter()
                .filter_map(|v| v.get("name")?.as_str().map(String::from))
                .collect(),
            plural: names.get("plural")?.as_str()?.to_string(),
            singular: names
                .get("singular")
                .and_then(Value::as_str)
                .map_or_else(|| kind.to_lowercase(), String::from),
            namespaced: spec.get("scope").and_then(Value::as_str) != Some("Cluster"),
            short_names: names
                .get("shortNames")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |a| {
                    a.iter().filter_map(|s| s.as_str().map(String::from)).collect()
                }),
            has_status: versions
                .iter()
                .any(|v| v.pointer("/subresources/status").is_some()),
            printer_columns: ordered
                .first()
                .map_or_else(Vec::new, |v| PrinterColumn::from_crd_version(v)),
            categories: names
                .get("categories")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |a| {
                    a.iter().filter_map(|s| s.as_str().map(String::from)).collect()
                }),
            kind,
            stored_as: None,
            verbs: &VERBS,
            schemas: Some(Arc::new(VersionSchemas::from_crd(crd))),
        })
    }
}

fn is_storage(v: &Value) -> bool {
    v.get("storage").and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_should_describe_a_type_with_storage_version_first_and_status() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false},
                {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}}]}});
        let t = ResourceType::from_crd(&crd).expect("valid crd");
        assert_eq!(t.versions, ["v1", "v1beta1"]);
        assert!(t.has_status && t.namespaced);
        assert_eq!(t.singular, "widget");
        assert_eq!(t.short_names, ["wd"]);
    }
}
