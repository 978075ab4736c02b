//! `FerrVaultConnection` (`fvc`): where FerrVault is and which credential reaches it.
//!
//! # Guarantees (enforced by the CRD schema: the Go CRD's rules, reference §1.1)
//! - `url` starts with `http://` or `https://`.
//! - `mode` is `ferrvault` (default) or `cloud`; cloud mode needs a non-empty `organization`.
//! - `oidc.clusterID`, when set, is a 36-character UUID-like string.
//! - Every string has a `maxLength` from [`bounds`](super::bounds) (issue 34), far above what the
//!   Go operator's manifests use; the reconciler checks them again.
//!
//! Like the Go CRD, the schema admits both or neither of `tokenSecretRef` and `oidc`, so Go-era
//! manifests re-apply; the reconciler reports such a connection `TokenUnreadable`, naming the
//! rule.
//!
//! # Trust
//! `oidc` only opts in to the operator's own cluster identity (its flags `--oidc-cluster-id`,
//! `--oidc-token-path`, `--oidc-trusted-urls`): the Go-era `oidc.clusterID` and `oidc.tokenPath`
//! are still admitted, but never used; a value that differs from the operator's is reported
//! (`ClusterIdentityMismatch`). See docs/security.md.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    ChangeDetection, ChangeDetectionMode,
    bounds::{MAX_CLUSTER_ID, MAX_IDENTIFIER, MAX_PATH, MAX_URL},
    client_cert::{ClientCertSecretRef, MAX_PINS, PIN_LENGTH, PINS_MESSAGE, PINS_RULE},
    common::{SecretKeyRef, conditions_schema},
};

/// Pattern of `spec.url`: an absolute http(s) URL.
pub(crate) const URL_PATTERN: &str = "^https?://";

/// Pattern of `spec.oidc.clusterID`.
pub(crate) const CLUSTER_ID_PATTERN: &str = "^[0-9a-fA-F-]{36}$";

/// Desired state of a FerrVaultConnection.
// Each `printcolumn(...)` repeats `type_ = "string"`; clippy reads that as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ferrvault.com",
    version = "v1alpha1",
    kind = "FerrVaultConnection",
    plural = "ferrvaultconnections",
    singular = "ferrvaultconnection",
    shortname = "fvc",
    namespaced,
    status = "FerrVaultConnectionStatus",
    derive = "PartialEq",
    doc = "How to reach a FerrVault server and which credential to use.",
    // The Go CRD's columns, in its order (scripts read `kubectl get fvc` by position); ours
    // (Mode, Reason) only with `-o wide`.
    printcolumn(name = "URL", type_ = "string", json_path = ".spec.url"),
    printcolumn(name = "Org", type_ = "string", json_path = ".spec.organization"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].status"#
    ),
    printcolumn(name = "Mode", type_ = "string", json_path = ".spec.mode", priority = 1),
    printcolumn(
        name = "Reason",
        type_ = "string",
        json_path = r#".status.conditions[?(@.type=="Ready")].reason"#,
        priority = 1
    ),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[x_kube(
    validation = Rule::new("self.mode != 'cloud' || (has(self.organization) && size(self.organization) > 0)")
        .message("organization is required when mode is cloud"),
    validation = Rule::new(PINS_RULE).message(PINS_MESSAGE)
)]
#[serde(rename_all = "camelCase")]
pub struct FerrVaultConnectionSpec {
    /// API flavour: `ferrvault` (service-account token, flat reveal; the default) or `cloud`
    /// (FerrLabs Cloud organization/project/vault paths).
    #[serde(default)]
    pub mode: ConnectionMode,
    /// Base URL of the FerrVault API, for example `https://api.ferrvault.com`.
    #[schemars(regex(pattern = URL_PATTERN), length(max = MAX_URL))]
    pub url: String,
    /// Organization; required in cloud mode, ignored in ferrvault mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_IDENTIFIER))]
    pub organization: Option<String>,
    /// The API token, read from a Secret in the connection's namespace (whitespace trimmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_secret_ref: Option<SecretKeyRef>,
    /// Workload identity: use the operator's cluster identity (`oidc: {}`), exchanged for a
    /// FerrVault bearer. Needs mode `cloud` and a `url` the operator trusts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSpec>,
    /// PEM bundle of CA certificates to trust for `url`, from a Secret key in the connection's
    /// namespace. Added to the system roots; unset means system roots only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<SecretKeyRef>,
    /// Client certificate (mTLS) presented to `url`: a Secret in the connection's namespace with
    /// `tls.crt` (PEM chain) and `tls.key` (PEM private key), at most 64 KiB and 16 KiB. Read
    /// like the token: opted in when the operator requires it, never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert_secret_ref: Option<ClientCertSecretRef>,
    /// Server certificate pins: the SHA-256 (64 hex digits) of the server's whole leaf
    /// certificate in DER, as the FerrVault CLI computes it
    /// (`openssl x509 -in server.pem -outform DER | openssl dgst -sha256`). When set, the leaf
    /// must match one of them in addition to the usual CA verification; at most 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_PINS), inner(length(min = PIN_LENGTH, max = PIN_LENGTH)))]
    pub pin_sha256: Option<Vec<String>>,
    /// `true` pauses this connection: no probe, and no FerrVault request by any FerrVaultSecret
    /// using it (they show `Suspended=True/ConnectionSuspended`); deletion still runs its
    /// cleanup. Unset means `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// How changes in FerrVault are found: `{mode: Poll}` (each FerrVaultSecret on its own
    /// `refreshInterval`; the behaviour when unset) or `{mode: Versions, interval: 30s}` (one
    /// `list` of versions per interval for the whole connection). See docs/change-detection.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_detection: Option<ChangeDetection>,
}

impl FerrVaultConnectionSpec {
    /// Whether `spec.suspend` is `true`.
    pub fn is_suspended(&self) -> bool {
        self.suspend == Some(true)
    }

    /// `spec.changeDetection.mode`, [`ChangeDetectionMode::Poll`] when unset.
    pub fn change_mode(&self) -> ChangeDetectionMode {
        self.change_detection.as_ref().map(|c| c.mode).unwrap_or_default()
    }
}

/// The API flavour of a connection.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionMode {
    /// FerrVault SaaS: `POST /operator/secrets/reveal` with a `fvsat_` service-account token.
    #[default]
    Ferrvault,
    /// FerrLabs Cloud: organization/project/vault reveal paths.
    Cloud,
}

impl ConnectionMode {
    /// The spelling used in the CRD (`ferrvault`, `cloud`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ferrvault => "ferrvault",
            Self::Cloud => "cloud",
        }
    }
}

/// Opting in to the operator's cluster identity. Every field is optional and none chooses
/// anything: the cluster ID and the token file are the operator's settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcSpec {
    /// Deprecated (Go operator): the cluster ID is the operator's `--oidc-cluster-id`. Admitted
    /// for old manifests; a different value makes the connection Ready=False.
    #[serde(rename = "clusterID", default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = CLUSTER_ID_PATTERN), length(max = MAX_CLUSTER_ID))]
    pub cluster_id: Option<String>,
    /// Deprecated (Go operator): the token file is the operator's `--oidc-token-path`; this
    /// path is never read. Admitted for old manifests; a different value makes the connection
    /// Ready=False.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_PATH))]
    pub token_path: Option<String>,
    /// Documentation only: the audience the operator's projected token is issued for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_URL))]
    pub audience: Option<String>,
}

/// Observed state of a FerrVaultConnection.
///
/// # Guarantees
/// Every field is always serialized (absent values as `null`), so a JSON merge patch of the whole
/// struct to `/status` replaces the previous status exactly instead of leaving stale fields.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(description = "Observed state of a FerrVaultConnection.")]
pub struct FerrVaultConnectionStatus {
    /// `Ready` with reason `Reachable`, `Unreachable`, `TokenUnreadable`, `InvalidConnection`,
    /// `CaBundleUnreadable`, `InsecureUrl`, `Redirected`, `UntrustedUrl`,
    /// `ClusterIdentityMismatch`, `ClusterIdentityUnavailable`, `ClientCertificateUnreadable`,
    /// `ClientCertificateInvalid`, `ClientCertificateRefused`, `CertificatePinMismatch` or
    /// `DeletionBlocked`; and, in ferrvault mode, `TokenHealthy` with reason `TokenValid`,
    /// `TokenExpiresSoon`, `Unsupported`, or `ResponseTooLarge`/`Unreachable` for an unusable
    /// `me` answer; with `changeDetection.mode: Versions`, `ChangeDetection` with reason
    /// `VersionsFollowed` or `Unsupported`.
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<Condition>,
    /// When the connection was last probed (or its deletion last checked).
    #[serde(default)]
    pub last_checked_at: Option<Time>,
    /// The `resourceVersion`s of the token and CA bundle Secrets the last probe read. Other
    /// versions mean the next pass probes even when no probe is due.
    #[serde(default)]
    pub observed_inputs: Option<String>,
    /// When the service-account token expires, as `GET /operator/me` last said (ferrvault mode;
    /// absent when it never expires or the server was not asked). The `TokenHealthy` condition
    /// turns False 7 days before. Written as `null` when unknown, so a merge patch clears it.
    #[serde(default)]
    pub token_expires_at: Option<Time>,
    /// The token's role as `GET /operator/me` last said: `viewer`, `writer`, `admin`, or
    /// `other` for one the operator does not know.
    #[serde(default)]
    pub token_role: Option<String>,
    /// The `ferrvault.com/force-sync` annotation's value the last probe ran with (a value over
    /// 253 bytes as its digest). Another value on the object means a probe is due; a new value
    /// here forces every FerrVaultSecret using this connection.
    #[serde(default)]
    pub observed_force_sync: Option<String>,
    /// The SHA-256 (hex) of the spec without `suspend` that the last probe ran with: what its
    /// FerrVaultSecrets' syncs depend on.
    #[serde(default)]
    pub input_digest: Option<String>,
    /// The `metadata.generation` at which `inputDigest` last changed: the
    /// generation FerrVaultSecrets record as their input (so a suspend and resume, which bump
    /// the generation but not the digest, re-sync none of them).
    #[serde(default)]
    pub input_generation: Option<i64>,
}
