//! `ClusterFerrVaultSecret` (`cfvs`): one FerrVaultSecret spec fanned out to the namespaces its
//! `namespaces` selects, through a ClusterFerrVaultConnection (issue 37).
//!
//! # Guarantees (enforced by the CRD schema)
//! - Cluster-scoped: only a ClusterRole can grant it, so no tenant's namespaced Role can create,
//!   change or read it.
//! - `secretSpec` is a [`FerrVaultSecretSpec`], the very type (same fields, bounds and CEL rules):
//!   templates, transforms, target shaping, refresh policy, suspend and force-sync mean what they
//!   mean on a FerrVaultSecret. It is nested rather than flattened (as ESO's
//!   `ClusterExternalSecret.spec.externalSecretSpec`), so its schema and its rules are reused
//!   exactly, at one path.
//! - `secretSpec.connectionRef` names a ClusterFerrVaultConnection ([`CLUSTER_CONNECTION_RULE`]):
//!   a namespaced connection cannot serve other namespaces.
//! - A copy is wholly its cluster secret's: `target.creationPolicy` is `Owner` (or unset), and
//!   `rolloutRestart` is refused (no workload is restarted across namespaces).
//! - `namespaces` has the bounds of every [`NamespaceSelection`], and empty selects **no**
//!   namespace. The namespaces served are its selection **intersected** with the connection's
//!   `allowedNamespaces` (and, in list mode, with the watched namespaces).
//!
//! # Trust
//! Only a cluster admin creates one; it writes a Secret into each selected namespace, labelled
//! [`CLUSTER_SECRET_UID_LABEL`](super::names::CLUSTER_SECRET_UID_LABEL) with its UID (owner
//! references cannot cross namespaces). See `docs/cluster-scope.md`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{common::conditions_schema, namespaces::NamespaceSelection, secret::FerrVaultSecretSpec};

/// The CEL rule making a cluster secret's connection a ClusterFerrVaultConnection (an unset
/// `kind` means the namespaced kind, so it must be spelled out).
const CLUSTER_CONNECTION_RULE: &str = "has(self.secretSpec.connectionRef.kind) && \
     self.secretSpec.connectionRef.kind == 'ClusterFerrVaultConnection'";

/// The message of [`CLUSTER_CONNECTION_RULE`].
pub const CLUSTER_CONNECTION_MESSAGE: &str =
    "secretSpec.connectionRef.kind must be ClusterFerrVaultConnection";

/// The CEL rule keeping a copy wholly the cluster secret's: `target.creationPolicy` is `Owner`
/// (or unset). `Orphan` and `Merge` hand a Secret over or share it, which a copy marked by its
/// owner's UID label cannot express.
const OWNER_ONLY_RULE: &str = "!has(self.secretSpec.target) || !has(self.secretSpec.target.creationPolicy) || \
     self.secretSpec.target.creationPolicy == 'Owner'";

/// The message of [`OWNER_ONLY_RULE`].
pub const OWNER_ONLY_MESSAGE: &str =
    "secretSpec.target.creationPolicy must be Owner: a copy is wholly its cluster secret's";

/// The CEL rule refusing `rolloutRestart`: a cluster secret restarts no workload (it would reach
/// workloads of that name in every selected namespace).
const NO_ROLLOUT_RULE: &str =
    "!has(self.secretSpec.rolloutRestart) || size(self.secretSpec.rolloutRestart) == 0";

/// The message of [`NO_ROLLOUT_RULE`].
pub const NO_ROLLOUT_MESSAGE: &str = "secretSpec.rolloutRestart is not supported on a ClusterFerrVaultSecret";

/// How many failed namespaces a status lists ([`ClusterFerrVaultSecretStatus::failed_namespaces`]).
pub const MAX_FAILED_NAMESPACES: usize = 20;

/// Desired state of a ClusterFerrVaultSecret.
// Each `printcolumn(...)` repeats `type_ = "string"`; clippy reads that as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ferrvault.com",
    version = "v1alpha1",
    kind = "ClusterFerrVaultSecret",
    plural = "clusterferrvaultsecrets",
    singular = "clusterferrvaultsecret",
    shortname = "cfvs",
    status = "ClusterFerrVaultSecretStatus",
    derive = "PartialEq",
    doc = "One FerrVaultSecret spec synced into every namespace it selects, with one FerrVault read.",
    printcolumn(name = "Vault", type_ = "string", json_path = ".spec.secretSpec.vault"),
    printcolumn(name = "Provisioned", type_ = "integer", json_path = ".status.provisioned"),
    printcolumn(name = "Selected", type_ = "integer", json_path = ".status.selected"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(
    validation = Rule::new(CLUSTER_CONNECTION_RULE).message(CLUSTER_CONNECTION_MESSAGE),
    validation = Rule::new(OWNER_ONLY_RULE).message(OWNER_ONLY_MESSAGE),
    validation = Rule::new(NO_ROLLOUT_RULE).message(NO_ROLLOUT_MESSAGE)
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFerrVaultSecretSpec {
    /// What each namespace's copy is synced from and how it is shaped: a FerrVaultSecret's spec,
    /// whose `connectionRef` names a ClusterFerrVaultConnection.
    pub secret_spec: FerrVaultSecretSpec,
    /// The namespaces that get a copy, intersected with the connection's `allowedNamespaces`.
    /// Empty: none.
    #[serde(default)]
    pub namespaces: NamespaceSelection,
}

/// How many FerrVault reads one pass of a cluster secret makes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum RevealScope {
    /// One read for every namespace (ferrvault mode: the token is not namespace-scoped).
    #[default]
    Shared,
    /// One read per namespace (cloud mode with `oidc`: FerrVault authorises each namespace).
    PerNamespace,
}

/// One namespace whose copy could not be written, and why.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct FailedNamespace {
    /// The namespace.
    pub namespace: String,
    /// A fixed reason (as a condition's).
    pub reason: String,
    /// What happened, cut to 1 KiB; never a value.
    pub message: String,
}

/// Observed state of a ClusterFerrVaultSecret.
///
/// # Guarantees
/// Every field is always serialized, so a merge patch of the whole struct replaces the previous
/// status exactly; `failedNamespaces` holds at most [`MAX_FAILED_NAMESPACES`] entries, sorted by
/// namespace, whatever the cluster holds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(description = "Observed state of a ClusterFerrVaultSecret.")]
pub struct ClusterFerrVaultSecretStatus {
    /// `Ready` (True only when every selected namespace holds its copy), and `Suspended`.
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
    /// The generation this status was written for.
    #[serde(default)]
    pub observed_generation: Option<i64>,
    /// How many namespaces are selected and allowed (each should hold a copy).
    #[serde(default)]
    pub selected: u32,
    /// How many of them hold the current copy.
    #[serde(default)]
    pub provisioned: u32,
    /// The first 20 namespaces (sorted) whose copy failed, with the reason.
    #[serde(default)]
    pub failed_namespaces: Vec<FailedNamespace>,
    /// The keyed content hash of the copies' content.
    #[serde(default)]
    pub content_hash: Option<String>,
    /// How many FerrVault reads a pass makes: `Shared` (one) or `PerNamespace`.
    #[serde(default)]
    pub reveal_scope: RevealScope,
    /// `ferrvault.com/force-sync` as last honoured.
    #[serde(default)]
    pub observed_force_sync: Option<String>,
    /// A SHA-256 over the sorted `name:version` pairs the last reveal returned for the selection
    /// (as a FerrVaultSecret's): under a connection with `changeDetection.mode: Versions`, a
    /// `list` whose versions differ makes the next pass reveal.
    #[serde(default)]
    pub observed_source_version: Option<String>,
    /// When the copies were last written or confirmed.
    #[serde(default)]
    pub last_synced_at: Option<Time>,
}
