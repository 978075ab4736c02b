//! The `ferrvault.com/v1alpha1` custom resource types.
//!
//! # Layout
//! - `connection.rs`: [`FerrVaultConnection`] (`fvc`): where FerrVault is and which credential
//!   to use.
//! - `secret.rs`: [`FerrVaultSecret`] (`fvs`): which vault keys go into which target `Secret`;
//!   `transform.rs`: [`Transform`], the steps of its `spec.transforms`; `template.rs`:
//!   [`SecretTemplate`], its `target.template`.
//! - [`target_shape`]: the target Secret's immutability, creation and deletion policies and
//!   metadata (the types of `spec.target`'s fields beyond its name and type).
//! - `cluster_connection.rs`: [`ClusterFerrVaultConnection`] (`cfvc`): one connection for the
//!   namespaces its `allowedNamespaces` lets in; `namespaces.rs`: [`NamespaceSelection`].
//! - [`client_cert`]: `clientCertSecretRef` and `pinSha256`, a connection's TLS identity and pins.
//! - `change_detection.rs`: [`ChangeDetection`], a connection's `spec.changeDetection`.
//! - `cluster_secret.rs`: [`ClusterFerrVaultSecret`] (`cfvs`): a FerrVaultSecret spec fanned out
//!   to the namespaces it selects, with one read.
//! - `common.rs`: references and the conditions list shared by both kinds.
//! - [`bounds`]: the `maxLength`/`maxItems` of every spec string and list, schema and reconciler.
//! - `lenient.rs`: [`Lenient`], reading an object that bypassed the schema without failing its kind.
//! - `reasons.rs`: [`Reason`] and [`ConditionType`], every condition type and reason string the operator writes.
//! - [`names`]: finalizers and annotation keys.
//! - [`crdgen`]: the CRD YAML (`ferrvault-operator crdgen`) and the chart files made from it.
//! - [`samples`]: sample manifests, used by tests and `demo`.
//!
//! # Guarantees
//! Validation lives in the CRD schema (patterns, enums, defaults, CEL rules), so the API server
//! rejects a bad object at `kubectl apply` time instead of the operator silently ignoring it.
//! An object stored without that validation (a stale or missing schema) is read through
//! [`Lenient`] and reported alone (`InvalidSpec`) instead of failing every object of its kind.

pub mod bounds;
pub mod client_cert;
// `KubeSchema` (see `connection` below) on its `x_kube` rule.
#[allow(unreachable_pub)]
pub(crate) mod change_detection;
#[allow(unreachable_pub)]
pub(crate) mod cluster_connection;
#[allow(unreachable_pub)]
pub(crate) mod cluster_secret;
pub(crate) mod common;
pub(crate) mod conflicts;
// kube's `KubeSchema` derive copies the `pub` of `FerrVaultConnectionSpec` and `SecretTarget`
// onto a schema struct it generates inside a function for their `x_kube` validation rules, where
// no attribute of ours reaches it: the lint is allowed on their two files.
#[allow(unreachable_pub)]
pub(crate) mod connection;
pub mod crdgen;
pub(crate) mod lenient;
pub mod names;
#[allow(unreachable_pub)]
pub(crate) mod namespaces;
pub(crate) mod reasons;
pub mod samples;
#[allow(unreachable_pub)]
pub(crate) mod secret;
pub mod target_shape;
pub(crate) mod template;
pub(crate) mod transform;

pub use change_detection::{
    ChangeDetection, ChangeDetectionMode, DEFAULT_CHANGE_INTERVAL, INTERVAL_FLOOR_MESSAGE,
    MIN_CHANGE_INTERVAL,
};
pub use cluster_connection::{
    ClusterFerrVaultConnection, ClusterFerrVaultConnectionSpec, ClusterFerrVaultConnectionStatus,
    NamespacedSecretKeyRef, ReferenceNamespaces, SAME_NAMESPACE_MESSAGE,
};
pub use cluster_secret::{
    CLUSTER_CONNECTION_MESSAGE, ClusterFerrVaultSecret, ClusterFerrVaultSecretSpec,
    ClusterFerrVaultSecretStatus, FailedNamespace, MAX_FAILED_NAMESPACES, NO_ROLLOUT_MESSAGE,
    OWNER_ONLY_MESSAGE, RevealScope,
};
pub use common::{ConnectionKind, ConnectionRef, SecretKeyRef};
pub use conflicts::{CREATED_ONCE_REPLACE_MESSAGE, MERGE_REPLACE_MESSAGE};
pub use connection::{
    ConnectionMode, FerrVaultConnection, FerrVaultConnectionSpec, FerrVaultConnectionStatus, OidcSpec,
};
pub use lenient::{InvalidObject, Lenient, SpecProblem};
pub use namespaces::{
    EVERY_NAMESPACE, LabelOperator, LabelRequirement, NamespaceLabelSelector, NamespaceSelection, Revocation,
};
pub use reasons::{ConditionStatus, ConditionType, Reason};
pub use secret::{
    DEFAULT_REFRESH_INTERVAL, FerrVaultSecret, FerrVaultSecretSpec, FerrVaultSecretStatus,
    GO_DURATION_PATTERN, REFUSED_TARGET_TYPE_MESSAGE, REFUSED_TARGET_TYPES, RefreshPolicy, RolloutTarget,
    SecretSelector, SecretTarget, WorkloadKind,
};
pub use target_shape::{CreationPolicy, DeletionPolicy, ImmutableChange, TargetMetadata};
pub use template::{
    DOCKER_CONFIG_KEY, DOCKER_CONFIG_TYPE, DOCKER_CONFIG_TYPE_MESSAGE, DockerConfigTemplate, SecretTemplate,
    TemplateMergePolicy,
};
pub use transform::{Transform, TransformType};
