//! `ClusterFerrVaultConnection` (`cfvc`): one FerrVault connection for many namespaces, used only
//! from the namespaces its `allowedNamespaces` lets in.
//!
//! # Guarantees (enforced by the CRD schema)
//! - Cluster-scoped: only a ClusterRole can grant it, so no tenant's namespaced Role can create,
//!   change or read it.
//! - The connection fields are a FerrVaultConnection's, with the same bounds and rules; its
//!   `tokenSecretRef` and `caBundleSecretRef` name their namespace explicitly.
//! - `allowedNamespaces` empty (the default) allows **no** namespace; `names: ["*"]` must be
//!   spelled out to allow every one.
//!
//! # Trust
//! The platform team that creates one lends its credential to every allowed namespace: a
//! FerrVaultSecret there reads whatever vault that credential may read. See
//! `docs/cluster-scope.md`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    ChangeDetection,
    bounds::{MAX_IDENTIFIER, MAX_NAME, MAX_NAMESPACE_NAME, MAX_SECRET_KEY, MAX_URL},
    client_cert::{
        CLIENT_CERT_NAMESPACE_MESSAGE, CLIENT_CERT_NAMESPACE_RULE, ClientCertSecretRef, MAX_PINS,
        NamespacedClientCertSecretRef, PIN_LENGTH, PINS_MESSAGE, PINS_RULE,
    },
    common::{SecretKeyRef, conditions_schema},
    connection::{ConnectionMode, FerrVaultConnectionSpec, OidcSpec, URL_PATTERN},
    namespaces::{NamespaceSelection, Revocation},
};

/// The CEL rule keeping a CA bundle beside its token: both Secrets in one namespace (the
/// platform's credentials namespace), and no tenant-chosen CA beside the cluster identity.
/// (`namespace` is a CEL reserved word: Kubernetes spells the field `__namespace__` in rules.)
const SAME_NAMESPACE_RULE: &str = "!has(self.caBundleSecretRef) || \
     (has(self.tokenSecretRef) && self.caBundleSecretRef.__namespace__ == self.tokenSecretRef.__namespace__)";

/// The message of [`SAME_NAMESPACE_RULE`].
pub const SAME_NAMESPACE_MESSAGE: &str = "caBundleSecretRef needs a tokenSecretRef in the same namespace";

/// Desired state of a ClusterFerrVaultConnection.
// Each `printcolumn(...)` repeats `type_ = "string"`; clippy reads that as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ferrvault.com",
    version = "v1alpha1",
    kind = "ClusterFerrVaultConnection",
    plural = "clusterferrvaultconnections",
    singular = "clusterferrvaultconnection",
    shortname = "cfvc",
    status = "ClusterFerrVaultConnectionStatus",
    derive = "PartialEq",
    doc = "A FerrVault connection shared by the namespaces its allowedNamespaces lets in.",
    printcolumn(name = "URL", type_ = "string", json_path = ".spec.url"),
    printcolumn(name = "Allowed", type_ = "integer", json_path = ".status.allowedNamespaces"),
    printcolumn(name = "Refused", type_ = "integer", json_path = ".status.refusedNamespaces"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(
    validation = Rule::new("self.mode != 'cloud' || (has(self.organization) && size(self.organization) > 0)")
        .message("organization is required when mode is cloud"),
    validation = Rule::new(SAME_NAMESPACE_RULE).message(SAME_NAMESPACE_MESSAGE),
    validation = Rule::new(CLIENT_CERT_NAMESPACE_RULE).message(CLIENT_CERT_NAMESPACE_MESSAGE),
    validation = Rule::new(PINS_RULE).message(PINS_MESSAGE)
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFerrVaultConnectionSpec {
    /// API flavour: `ferrvault` (the default) or `cloud`.
    #[serde(default)]
    pub mode: ConnectionMode,
    /// Base URL of the FerrVault API.
    #[schemars(regex(pattern = URL_PATTERN), length(max = MAX_URL))]
    pub url: String,
    /// Organization; required in cloud mode, ignored in ferrvault mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_IDENTIFIER))]
    pub organization: Option<String>,
    /// The API token, read from a Secret in the namespace named here (whitespace trimmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<NamespacedSecretKeyRef>,
    /// Workload identity (as a FerrVaultConnection's): in cloud mode the bearer is minted for the
    /// namespace of the FerrVaultSecret that uses it, so FerrVault authorises each namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSpec>,
    /// PEM bundle of CA certificates to trust for `url`, from a Secret key in the namespace of
    /// `tokenSecretRef` (named here again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<NamespacedSecretKeyRef>,
    /// Client certificate (mTLS) presented to `url`: a Secret with `tls.crt` and `tls.key` in the
    /// namespace of `tokenSecretRef` (named here again), read as a FerrVaultConnection's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert_secret_ref: Option<NamespacedClientCertSecretRef>,
    /// Server certificate pins, as a FerrVaultConnection's `pinSha256`: the SHA-256 (64 hex
    /// digits) of the server's whole DER leaf certificate; at most 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_PINS), inner(length(min = PIN_LENGTH, max = PIN_LENGTH)))]
    pub pin_sha256: Option<Vec<String>>,
    /// The namespaces whose FerrVaultSecrets may use this connection. Empty: none.
    #[serde(default)]
    pub allowed_namespaces: NamespaceSelection,
    /// What happens to the Secrets written through this connection in a namespace that stops
    /// being allowed: `Keep` (default) or `Delete`.
    #[serde(default)]
    pub revocation: Revocation,
    /// `true` pauses this connection: no FerrVault request by any FerrVaultSecret using it (they
    /// show `Suspended=True/ConnectionSuspended`); resuming re-syncs none of them unless
    /// something else changed. Unset means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// How its FerrVaultSecrets and ClusterFerrVaultSecrets learn of a change in FerrVault, as a
    /// FerrVaultConnection's: `{mode: Poll}` (the default) or `{mode: Versions, interval: 30s}`
    /// (one `list` of versions per interval for the whole connection, however many objects use
    /// it). See docs/change-detection.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_detection: Option<ChangeDetection>,
}

impl ClusterFerrVaultConnectionSpec {
    /// Whether `spec.suspend` is `true`.
    pub fn is_suspended(&self) -> bool {
        self.suspend == Some(true)
    }

    /// The connection fields as a FerrVaultConnection's spec, and the namespaces its token and CA
    /// bundle Secrets live in (`""` when unset): what connection access reads.
    pub fn as_connection(&self) -> (FerrVaultConnectionSpec, ReferenceNamespaces) {
        let local = |r: &NamespacedSecretKeyRef| SecretKeyRef {
            name: r.name.clone(),
            key: r.key.clone(),
        };
        let namespace_of =
            |r: &Option<NamespacedSecretKeyRef>| r.as_ref().map(|r| r.namespace.clone()).unwrap_or_default();
        let spec = FerrVaultConnectionSpec {
            mode: self.mode,
            url: self.url.clone(),
            organization: self.organization.clone(),
            token_secret_ref: self.token_secret_ref.as_ref().map(local),
            oidc: self.oidc.clone(),
            ca_bundle_secret_ref: self.ca_bundle_secret_ref.as_ref().map(local),
            client_cert_secret_ref: self
                .client_cert_secret_ref
                .as_ref()
                .map(|r| ClientCertSecretRef { name: r.name.clone() }),
            pin_sha256: self.pin_sha256.clone(),
            suspend: self.suspend,
            change_detection: self.change_detection.clone(),
        };
        let namespaces = ReferenceNamespaces {
            token: namespace_of(&self.token_secret_ref),
            ca_bundle: namespace_of(&self.ca_bundle_secret_ref),
        };
        (spec, namespaces)
    }
}

/// The namespaces a connection's token and CA bundle Secrets are read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReferenceNamespaces {
    /// The token Secret's namespace.
    pub token: String,
    /// The CA bundle Secret's namespace.
    pub ca_bundle: String,
}

/// A key inside a `Secret` in the namespace it names.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct NamespacedSecretKeyRef {
    /// Namespace of the Secret.
    #[schemars(length(min = 1, max = MAX_NAMESPACE_NAME))]
    pub namespace: String,
    /// Name of the Secret.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
    /// Key inside the Secret's `data`.
    #[schemars(length(max = MAX_SECRET_KEY))]
    pub key: String,
}

/// Observed state of a ClusterFerrVaultConnection.
///
/// # Guarantees
/// Every field is always serialized, so a merge patch of the whole struct replaces the previous
/// status exactly; `refusedReferences` holds at most 10 entries whatever the cluster holds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(description = "Observed state of a ClusterFerrVaultConnection.")]
pub struct ClusterFerrVaultConnectionStatus {
    /// `Suspended` while `spec.suspend` is true; with `changeDetection.mode: Versions`,
    /// `ChangeDetection` (reason `VersionsFollowed`, `Unsupported` or `ResponseTooLarge`).
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
    /// How many existing namespaces `allowedNamespaces` lets in.
    #[serde(default)]
    pub allowed_namespaces: u32,
    /// How many namespaces hold a FerrVaultSecret referencing this connection.
    #[serde(default)]
    pub referencing_namespaces: u32,
    /// How many of those are not allowed.
    #[serde(default)]
    pub refused_namespaces: u32,
    /// The first 10 refused references, as `namespace/name`, sorted.
    #[serde(default)]
    pub refused_references: Vec<String>,
    /// When the status was last computed.
    #[serde(default)]
    pub last_checked_at: Option<Time>,
    /// The SHA-256 (hex) of the connection fields of the spec (without `suspend`,
    /// `allowedNamespaces`, `revocation` and `changeDetection`): what its FerrVaultSecrets' syncs depend on.
    #[serde(default)]
    pub input_digest: Option<String>,
    /// The `metadata.generation` at which `inputDigest` last changed: the
    /// generation FerrVaultSecrets record as their input (so a suspend, a resume or an
    /// `allowedNamespaces` edit re-syncs none of them).
    #[serde(default)]
    pub input_generation: Option<i64>,
    /// With `--shards N > 1`, how the token's reveal budget (`--ferrvault-rate`,
    /// `--ferrvault-burst`) is split between the shards, whose holders all spend it: 1/N of it
    /// per shard, so the replicas together never exceed it (docs/sharding.md). Unset with one
    /// shard (the whole budget, as before shards); with `oidc`, says it is not split (a bearer
    /// per namespace).
    #[serde(default)]
    pub budget_share: Option<String>,
}
