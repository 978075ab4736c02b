//! `FerrVaultSecret` (`fvs`): which vault keys go into which target `Secret`, how they are
//! transformed (the steps are in [`transform`](super::transform)), and which workloads restart
//! when the content changes.
//!
//! # Guarantees (enforced by the CRD schema: the Go CRD's rules, reference §1.2, plus one)
//! - `vault` is non-empty; `project`, when set, is non-empty; `connectionRef.name` is set.
//! - Each transform has a known `type`; each rollout target is a `Deployment`, `StatefulSet` or
//!   `DaemonSet`.
//! - `target.type` is none of [`REFUSED_TARGET_TYPES`]: the one rule stricter than Go's, because
//!   Kubernetes turns such Secrets into credentials (the reconciler refuses them again, for objects
//!   stored without this validation).
//! - Contradicting settings (`refreshPolicy: CreatedOnce` with `target.immutableChange: Replace`,
//!   `target.creationPolicy: Merge` with `target.template.mergePolicy: Replace`) are refused with a
//!   message naming both fields ([`conflicts`](super::conflicts)).
//! - Every string and list has a `maxLength`/`maxItems` from [`bounds`](super::bounds) (issue 34),
//!   far above what the Go operator's manifests use; the reconciler checks them again.
//!
//! Everything else the Go CRD admitted is admitted, so Go-era manifests re-apply: a
//! `refreshInterval` that is not a Go duration (see [`GO_DURATION_PATTERN`]) is reported as
//! `InvalidRefreshInterval`, a transform missing the fields its type needs as `TransformError`,
//! an empty name as the failure of the lookup it names.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, MicroTime, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    bounds::{
        MAX_DURATION, MAX_IDENTIFIER, MAX_KEY_NAMES, MAX_NAME, MAX_ROLLOUT_TARGETS, MAX_SECRET_KEY,
        MAX_TRANSFORMS,
    },
    common::{ConnectionRef, conditions_schema},
    conflicts::{
        CREATED_ONCE_REPLACE_MESSAGE, CREATED_ONCE_REPLACE_RULE, MERGE_REPLACE_MESSAGE, MERGE_REPLACE_RULE,
    },
    target_shape::{CreationPolicy, DeletionPolicy, ImmutableChange, NO_METADATA, TargetMetadata},
    template::{DOCKER_CONFIG_TYPE, DOCKER_CONFIG_TYPE_MESSAGE, DOCKER_CONFIG_TYPE_RULE, SecretTemplate},
    transform::Transform,
};

/// The language of a valid `spec.refreshInterval`: Go `time.Duration` syntax without a sign (a
/// sequence of decimal numbers each with a unit `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`; or
/// a bare `0`). `rules::schedule::duration::parse_go_duration` accepts exactly this language. Not a
/// schema pattern: the Go CRD admitted any string, so other values are reported as
/// `InvalidRefreshInterval` instead of refused.
pub const GO_DURATION_PATTERN: &str = r"^(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$";

/// The CRD default of `spec.refreshInterval`.
pub const DEFAULT_REFRESH_INTERVAL: &str = "1h";

/// Secret `type` written when `target.type` is unset.
pub(crate) const DEFAULT_TARGET_TYPE: &str = "Opaque";

/// Secret types never written: Kubernetes acts on Secrets of these types, so writing one would
/// turn a vault's content into cluster credentials. The token controller mints a long-lived
/// ServiceAccount token into a `kubernetes.io/service-account-token` Secret; the API server
/// authenticates bearer tokens found in `bootstrap.kubernetes.io/token` Secrets (in
/// `kube-system`) and the bootstrap signer signs `cluster-info` with them.
pub const REFUSED_TARGET_TYPES: [&str; 2] = [
    "kubernetes.io/service-account-token",
    "bootstrap.kubernetes.io/token",
];

/// The CEL rule refusing [`REFUSED_TARGET_TYPES`] at admission (a unit test keeps the two equal).
const REFUSED_TARGET_TYPES_RULE: &str = "!has(self.type) || !(self.type in ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token'])";

/// The message of [`REFUSED_TARGET_TYPES_RULE`].
pub const REFUSED_TARGET_TYPE_MESSAGE: &str = "type must not be kubernetes.io/service-account-token or \
     bootstrap.kubernetes.io/token: Kubernetes turns Secrets of these types into cluster credentials";

/// Reads `refreshInterval` as text whatever JSON it is (a number, a bool …): an object stored
/// without schema validation then fails alone with `InvalidRefreshInterval` instead of failing
/// the typed list of every FerrVaultSecret.
fn lenient_interval<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    })
}

fn default_refresh_interval() -> String {
    DEFAULT_REFRESH_INTERVAL.to_owned()
}

/// Desired state of a FerrVaultSecret.
// Each `printcolumn(...)` repeats `type_ = "string"`; clippy reads that as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ferrvault.com",
    version = "v1alpha1",
    kind = "FerrVaultSecret",
    plural = "ferrvaultsecrets",
    singular = "ferrvaultsecret",
    shortname = "fvs",
    namespaced,
    status = "FerrVaultSecretStatus",
    derive = "PartialEq",
    doc = "Keeps a Kubernetes Secret in sync with keys of a FerrVault vault.",
    // The Go CRD's columns, in its order (scripts read `kubectl get fvs` by position); ours
    // (Reason, Rollout) only with `-o wide`.
    printcolumn(name = "Project", type_ = "string", json_path = ".spec.project"),
    printcolumn(name = "Vault", type_ = "string", json_path = ".spec.vault"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(
        name = "Reason",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].reason"#,
        priority = 1
    ),
    printcolumn(
        name = "Rollout",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="RolloutRestarted")].status"#,
        priority = 1
    ),
    printcolumn(name = "LastSynced", type_ = "date", json_path = ".status.lastSyncedAt"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(validation = Rule::new(CREATED_ONCE_REPLACE_RULE).message(CREATED_ONCE_REPLACE_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct FerrVaultSecretSpec {
    /// The FerrVaultConnection to use, in the same namespace.
    pub connection_ref: ConnectionRef,
    /// Project holding the vault; required in cloud mode, ignored in ferrvault mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_IDENTIFIER))]
    pub project: Option<String>,
    /// The vault to read from.
    #[schemars(length(min = 1, max = MAX_IDENTIFIER))]
    pub vault: String,
    /// Which keys to read; unset or empty means every key the credential can see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<SecretSelector>,
    /// The Secret to write, always in this namespace; defaults to this object's name, `Opaque`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<SecretTarget>,
    /// How often to re-read the vault, as a Go duration (`30s`, `1h30m`); `0s` disables scheduled
    /// refreshes (changes to this object, its connection or the target still resync at once).
    #[serde(default = "default_refresh_interval", deserialize_with = "lenient_interval")]
    #[schemars(length(max = MAX_DURATION))]
    pub refresh_interval: String,
    /// Workloads to restart (by a pod-template annotation) when the synced content changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_ROLLOUT_TARGETS))]
    pub rollout_restart: Vec<RolloutTarget>,
    /// Transforms applied in order to the revealed keys before they are written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_TRANSFORMS))]
    pub transforms: Vec<Transform>,
    /// `true` pauses this object: no FerrVault request, no write but its status (condition
    /// `Suspended`), no timer; deletion still runs its cleanup. Unset means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// When the vault is read again: `Periodic` (every `refreshInterval`, the default when
    /// unset), `OnChange` (only on a change of this spec, its connection or token, or the
    /// target), `CreatedOnce` (create the target when it is missing, never overwrite it). The
    /// annotation `ferrvault.com/force-sync` syncs under every policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_policy: Option<RefreshPolicy>,
}

/// When the vault is read again: `Periodic` (every `refreshInterval`; the meaning of unset, never
/// defaulted into stored objects so GitOps tools see no drift), `OnChange` (only on a change of
/// this spec, its connection or token, or the target), `CreatedOnce` (create the target when it
/// is missing, never overwrite it). `ferrvault.com/force-sync` syncs under every policy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum RefreshPolicy {
    /// Every `refreshInterval` (`0s`: never on a timer), and on every change.
    #[default]
    Periodic,
    /// Only on a change: this spec, its connection or token Secret, the content-hash key, or
    /// the target edited or deleted. No timer.
    OnChange,
    /// Once per target: a missing target is created; an existing one is never overwritten, even
    /// for a recreated FerrVaultSecret of the same name. Only `ferrvault.com/force-sync`
    /// overrides it.
    CreatedOnce,
}

impl RefreshPolicy {
    /// The policy's name as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Periodic => "Periodic",
            Self::OnChange => "OnChange",
            Self::CreatedOnce => "CreatedOnce",
        }
    }
}

impl FerrVaultSecretSpec {
    /// The target Secret's name: `target.name`, or the FerrVaultSecret's own name.
    pub fn target_name<'a>(&'a self, cr_name: &'a str) -> &'a str {
        self.target
            .as_ref()
            .and_then(|t| t.name.as_deref())
            .filter(|n| !n.is_empty())
            .unwrap_or(cr_name)
    }

    /// The target Secret's `type`: `target.type`, else `kubernetes.io/dockerconfigjson` when
    /// `target.template.dockerConfig` is set, else `Opaque`. (A `target.type` conflicting with
    /// `dockerConfig` is refused at admission and by the template's rendering.)
    pub fn target_type(&self) -> &str {
        let explicit = self
            .target
            .as_ref()
            .and_then(|t| t.type_.as_deref())
            .filter(|t| !t.is_empty());
        let docker_config = self.template().is_some_and(|t| t.docker_config.is_some());
        explicit.unwrap_or(if docker_config {
            DOCKER_CONFIG_TYPE
        } else {
            DEFAULT_TARGET_TYPE
        })
    }

    /// `target.template`, if any.
    pub fn template(&self) -> Option<&SecretTemplate> {
        self.target.as_ref().and_then(|t| t.template.as_ref())
    }

    /// `spec.refreshPolicy`, or [`RefreshPolicy::Periodic`] when unset.
    pub fn policy(&self) -> RefreshPolicy {
        self.refresh_policy.unwrap_or_default()
    }

    /// Whether `spec.suspend` is `true`.
    pub fn is_suspended(&self) -> bool {
        self.suspend == Some(true)
    }

    /// The explicitly selected key names; empty means "every key".
    pub fn selected_names(&self) -> &[String] {
        self.selector
            .as_ref()
            .map(|s| s.names.as_slice())
            .unwrap_or_default()
    }

    /// `target.immutable`, `false` when absent.
    pub fn target_immutable(&self) -> bool {
        self.target.as_ref().and_then(|t| t.immutable) == Some(true)
    }

    /// `target.immutableChange`, [`ImmutableChange::Refuse`] when absent.
    pub fn immutable_change(&self) -> ImmutableChange {
        self.target
            .as_ref()
            .and_then(|t| t.immutable_change)
            .unwrap_or_default()
    }

    /// `target.creationPolicy`, [`CreationPolicy::Owner`] when absent.
    pub fn creation_policy(&self) -> CreationPolicy {
        self.target
            .as_ref()
            .and_then(|t| t.creation_policy)
            .unwrap_or_default()
    }

    /// `target.deletionPolicy`, [`DeletionPolicy::Delete`] when absent.
    pub fn deletion_policy(&self) -> DeletionPolicy {
        self.target
            .as_ref()
            .and_then(|t| t.deletion_policy)
            .unwrap_or_default()
    }

    /// `target.metadata`, empty when absent.
    pub fn target_metadata(&self) -> &TargetMetadata {
        self.target
            .as_ref()
            .and_then(|t| t.metadata.as_ref())
            .unwrap_or(&NO_METADATA)
    }
}

/// Which keys to read from the vault.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct SecretSelector {
    /// Explicit key names; empty means every key the credential can see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_KEY_NAMES), inner(length(max = MAX_SECRET_KEY)))]
    pub names: Vec<String>,
}

/// The Secret the operator writes.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[x_kube(
    validation = Rule::new(REFUSED_TARGET_TYPES_RULE).message(REFUSED_TARGET_TYPE_MESSAGE),
    validation = Rule::new(DOCKER_CONFIG_TYPE_RULE).message(DOCKER_CONFIG_TYPE_MESSAGE),
    validation = Rule::new(MERGE_REPLACE_RULE).message(MERGE_REPLACE_MESSAGE)
)]
pub struct SecretTarget {
    /// Name of the Secret; defaults to the FerrVaultSecret's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_NAME))]
    pub name: Option<String>,
    /// Secret `type`, for example `kubernetes.io/tls`; defaults to `Opaque`. Changing it replaces
    /// the Secret (a Secret's type is immutable). `kubernetes.io/service-account-token` and
    /// `bootstrap.kubernetes.io/token` are refused.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_IDENTIFIER))]
    pub type_: Option<String>,
    /// Write the Secret `immutable: true` (see `docs/target-shaping.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    /// What a change to an immutable target does: `Refuse` (absent) or `Replace`.
    #[serde(rename = "immutableChange", default, skip_serializing_if = "Option::is_none")]
    pub immutable_change: Option<ImmutableChange>,
    /// Who owns the Secret: `Owner` (absent), `Orphan` or `Merge`.
    #[serde(rename = "creationPolicy", default, skip_serializing_if = "Option::is_none")]
    pub creation_policy: Option<CreationPolicy>,
    /// What this object's deletion does to the Secret: `Delete` (absent) or `Retain`.
    #[serde(rename = "deletionPolicy", default, skip_serializing_if = "Option::is_none")]
    pub deletion_policy: Option<DeletionPolicy>,
    /// Labels and annotations to put on the Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TargetMetadata>,
    /// Values built from the revealed keys, and a docker config (`docs/templates.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<SecretTemplate>,
}

/// A workload restarted when the synced content changes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub struct RolloutTarget {
    /// Workload kind.
    pub kind: WorkloadKind,
    /// Workload name, in the same namespace.
    #[schemars(length(max = MAX_NAME))]
    pub name: String,
}

/// The workload kinds a rollout restart can patch (all in `apps/v1`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, JsonSchema)]
pub enum WorkloadKind {
    /// `apps/v1` Deployment.
    Deployment,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `apps/v1` DaemonSet.
    DaemonSet,
}

impl WorkloadKind {
    /// The Kubernetes kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deployment => "Deployment",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
        }
    }
}

/// Observed state of a FerrVaultSecret.
///
/// # Guarantees
/// Every field is always serialized (absent values as `null`, empty lists as `[]`), so a JSON merge
/// patch of the whole struct to `/status` replaces the previous status exactly; stale
/// `missingKeys` or `lastRolloutHash` cannot survive a patch.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(description = "Observed state of a FerrVaultSecret.")]
pub struct FerrVaultSecretStatus {
    /// `Ready` (always) and `RolloutRestarted` (while `spec.rolloutRestart` is non-empty).
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
    /// When the target Secret was last written successfully.
    #[serde(default)]
    pub last_synced_at: Option<Time>,
    /// The content hash the rollout targets were last restarted for (or are pending for).
    #[serde(default)]
    pub last_rollout_hash: Option<String>,
    /// When the immutable target was replaced (`immutableChange: Replace`) while some rollout
    /// target has not been restarted since (the rollout floor deferred it, or it failed): it is
    /// restarted when the floor allows, whatever its content hash says. Cleared once every one
    /// has been. Microseconds (a workload restarted within the second of the replacement, before
    /// or after it, must tell which).
    #[serde(default)]
    pub target_replaced_at: Option<MicroTime>,
    /// Keys written into the target, sorted.
    #[serde(default)]
    pub synced_keys: Vec<String>,
    /// Requested keys absent in FerrVault, sorted.
    #[serde(default)]
    pub missing_keys: Vec<String>,
    /// The `metadata.generation` last synced (or found to have missing keys).
    #[serde(default)]
    pub observed_generation: Option<i64>,
    /// The target Secret's `resourceVersion` as the last sync left it (written, or found as it
    /// must be). Another version means someone changed the target since.
    #[serde(default)]
    pub target_resource_version: Option<String>,
    /// What the last sync read besides FerrVault, as versions: its connection (UID and
    /// generation), its token and CA bundle Secrets (`resourceVersion`s) and the content-hash key
    /// (an identifier, never the key). Other inputs mean the next pass syncs even when no refresh
    /// is due.
    #[serde(default)]
    pub observed_inputs: Option<String>,
    /// The SHA-256 (hex) of the spec without `suspend` that the last sync ran with: a later
    /// generation with the same digest (only `suspend` changed, e.g. a resume) is no spec change.
    #[serde(default)]
    pub observed_spec_digest: Option<String>,
    /// The `ferrvault.com/force-sync` annotation's value the last sync ran with (a value over
    /// 253 bytes as its digest). Another value on the object means a sync is due.
    #[serde(default)]
    pub observed_force_sync: Option<String>,
    /// The connection's `status.observedForceSync` when this object last synced: a connection
    /// forced since forces this object too.
    #[serde(default)]
    pub observed_connection_force_sync: Option<String>,
    /// The label keys the last sync set on the target from `target.metadata.labels`, sorted: a
    /// key listed here and gone from the spec is removed from the target; other keys are never
    /// touched.
    #[serde(default)]
    pub owned_labels: Vec<String>,
    /// The annotation keys the last sync set from `target.metadata.annotations`, sorted (as
    /// `ownedLabels`).
    #[serde(default)]
    pub owned_annotations: Vec<String>,
    /// A SHA-256 (hex) over the sorted `name:version` pairs the last sync's reveal returned for
    /// the selection (ferrvault mode, a FerrVaultConnection). Under `changeDetection.mode:
    /// Versions`, another hash of the connection's latest `list` means a sync is due (trigger
    /// `source`).
    #[serde(default)]
    pub observed_source_version: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::TransformType;

    #[test]
    fn objects_stored_without_schema_validation_should_still_deserialize_so_they_fail_alone() {
        let cr: FerrVaultSecret = serde_json::from_value(serde_json::json!({
            "apiVersion": "ferrvault.com/v1alpha1",
            "kind": "FerrVaultSecret",
            "metadata": { "name": "bad" },
            "spec": {
                "connectionRef": { "name": "c" },
                "vault": "v",
                "refreshInterval": 42,
                "transforms": [{ "type": "rot13" }, { "type": "prefix", "value": "P_" }],
            },
        }))
        .expect("a numeric interval and an unknown transform type still deserialize");
        assert_eq!(cr.spec.refresh_interval, "42");
        assert_eq!(cr.spec.transforms[0].type_, TransformType::Unknown);
        assert_eq!(cr.spec.transforms[1].type_, TransformType::Prefix);
    }

    #[test]
    fn the_cel_rule_should_refuse_exactly_the_refused_target_types() {
        let quoted: Vec<String> = REFUSED_TARGET_TYPES.iter().map(|t| format!("'{t}'")).collect();
        assert_eq!(
            REFUSED_TARGET_TYPES_RULE,
            format!("!has(self.type) || !(self.type in [{}])", quoted.join(", "))
        );
    }

    #[test]
    fn the_crd_schema_should_not_offer_the_unknown_transform_type() {
        let schema = serde_json::to_string(&schemars::schema_for!(TransformType)).expect("schema");
        assert!(
            schema.contains("jsonExpand") && !schema.contains("nknown"),
            "{schema}"
        );
    }
}
