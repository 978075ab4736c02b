//! References and the conditions list shared by both custom resources.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::bounds::{MAX_NAME, MAX_SECRET_KEY};

/// A key inside a `Secret` in the same namespace as the object that holds the reference.
///
/// Both fields are required, and may be empty, as in the Go CRD: a reference that cannot
/// resolve is reported by the reconciler (`TokenUnreadable`, `CaBundleUnreadable`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct SecretKeyRef {
    /// Name of the Secret, in the same namespace.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
    /// Key inside the Secret's `data`.
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub key: String,
}

/// Names a `FerrVaultConnection` in the same namespace, or a `ClusterFerrVaultConnection` that
/// allows this namespace; there is deliberately no namespace field, so a FerrVaultSecret can never
/// borrow another namespace's credential.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ConnectionRef {
    /// Name of the connection (an empty one is reported as `ConnectionNotFound`, as the Go CRD
    /// admitted it).
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
    /// `FerrVaultConnection` (the default: in the same namespace) or `ClusterFerrVaultConnection`
    /// (cluster-scoped; used only when its `allowedNamespaces` lets this namespace in).
    #[serde(default, skip_serializing_if = "ConnectionKind::is_default")]
    pub kind: ConnectionKind,
}

impl ConnectionRef {
    /// A reference to FerrVaultConnection `name` in the same namespace.
    pub fn namespaced(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: ConnectionKind::FerrVaultConnection,
        }
    }

    /// Whether this names a FerrVaultConnection `name` (the namespaced kind).
    pub fn is_namespaced(&self, name: &str) -> bool {
        self.kind == ConnectionKind::FerrVaultConnection && self.name == name
    }
}

/// The kinds a [`ConnectionRef`] may name.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ConnectionKind {
    /// A FerrVaultConnection in the FerrVaultSecret's namespace.
    #[default]
    FerrVaultConnection,
    /// A ClusterFerrVaultConnection.
    ClusterFerrVaultConnection,
}

impl ConnectionKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FerrVaultConnection => "FerrVaultConnection",
            Self::ClusterFerrVaultConnection => "ClusterFerrVaultConnection",
        }
    }

    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The statuses a `metav1.Condition` may carry, as the API server's schema enum.
const CONDITION_STATUSES: [&str; 3] = ["True", "False", "Unknown"];

/// Schema of `status.conditions`: a list of `metav1.Condition` that is a *map list* keyed by
/// `type` (so server-side apply and strategic tools treat each condition type as one entry), with
/// the `status` enum the Kubernetes API conventions require. Used through `schema_with` by both
/// status types, so the two kinds can never disagree.
pub(crate) fn conditions_schema(generator: &mut SchemaGenerator) -> Schema {
    let mut item = Condition::json_schema(generator);
    if let Some(status) = item
        .get_mut("properties")
        .and_then(|properties| properties.get_mut("status"))
        .and_then(|status| status.as_object_mut())
    {
        status.insert("enum".into(), CONDITION_STATUSES.as_slice().into());
    }
    json_schema!({
        "description": "Latest observations of the object's state; one entry per condition type.",
        "type": "array",
        "items": item,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
    })
}
