//! Condition types, condition statuses and every reason string the operator writes.
//!
//! # Guarantees
//! Reasons come from this fixed set only, so they are safe as metric labels and stable for
//! alerting: never a `Debug` string, an error text or an object name.

/// The condition types the operator maintains.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionType {
    /// On both kinds: whether the object is in the state the user asked for.
    Ready,
    /// On `FerrVaultSecret` only, and only while `spec.rolloutRestart` is non-empty: whether the
    /// listed workloads run the target Secret's current content.
    RolloutRestarted,
    /// On `FerrVaultSecret` only, and only while `spec.refreshInterval` is below the operator's
    /// `--min-refresh-interval`: the interval is admitted but clamped to that minimum.
    RefreshIntervalClamped,
    /// On `FerrVaultConnection` only, in ferrvault mode with a service-account token, once the
    /// server answered `GET /operator/me`: whether the token stays valid for more than 7 days
    /// (`TokenValid`), expires within them (`TokenExpiresSoon`), or cannot be asked (Unknown,
    /// `Unsupported`: a server without `me`).
    TokenHealthy,
    /// On both kinds, only while `spec.suspend` is `true` (or, on a FerrVaultSecret, its
    /// connection's): `True`, nothing is requested or written but the status.
    Suspended,
    /// On `FerrVaultConnection` only, while `spec.changeDetection.mode` is `Versions`: whether
    /// the connection's versions are followed (`VersionsFollowed`), the server has no `list`
    /// (False, `Unsupported`: its FerrVaultSecrets poll, and `list` is not asked again until the
    /// spec changes), or its last answer crossed a bound (False, `ResponseTooLarge`).
    ChangeDetection,
}

impl ConditionType {
    /// The `type` string written into `status.conditions[]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "Ready",
            Self::RolloutRestarted => "RolloutRestarted",
            Self::RefreshIntervalClamped => "RefreshIntervalClamped",
            Self::TokenHealthy => "TokenHealthy",
            Self::Suspended => "Suspended",
            Self::ChangeDetection => "ChangeDetection",
        }
    }
}

/// The `status` of a condition, as the Kubernetes API conventions spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold; the reason says why.
    False,
    /// Not known yet.
    Unknown,
}

impl ConditionStatus {
    /// The `status` string written into `status.conditions[]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }

    /// `True` when `holds`, else `False`.
    pub fn from_bool(holds: bool) -> Self {
        if holds { Self::True } else { Self::False }
    }
}

/// Every reason the operator writes into a condition or uses as a metric label.
///
/// The names are the Go operator's (reference §1.2, §4) so dashboards and alerts keep working;
/// [`Reason::InvalidRefreshInterval`], [`Reason::CaBundleUnreadable`], [`Reason::InvalidSpec`] and
/// [`Reason::SecretTooLarge`], the five refusals of tenant-chosen destinations
/// ([`Reason::InsecureUrl`], [`Reason::Redirected`], [`Reason::UntrustedUrl`],
/// [`Reason::ClusterIdentityMismatch`], [`Reason::ClusterIdentityUnavailable`]), the credential
/// opt-in ([`Reason::CredentialNotOptedIn`]) and the block of target refusals are new; the Go operator's `TokenKeyMissing` went with its token-target feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// Secret Ready=True: every requested key was written into the target.
    Synced,
    /// Secret Ready=False: requested keys are absent upstream.
    MissingKeys,
    /// Secret Ready=False: the referenced FerrVaultConnection could not be read.
    ConnectionNotFound,
    /// Ready=False: the credential (token Secret or OIDC exchange) could not be obtained.
    TokenUnreadable,
    /// Ready=False: no client could be built (empty token, bad URL or scheme, bad CA bundle).
    InvalidConnection,
    /// Secret Ready=False: cloud mode without the connection's `organization` or the secret's `project`.
    MissingCloudScope,
    /// Secret Ready=False: FerrVault answered 401 or 403.
    AuthFailed,
    /// Secret Ready=False: FerrVault answered 404 for the vault.
    VaultNotFound,
    /// Ready=False: FerrVault could not be reached or answered with an unusable response.
    Unreachable,
    /// Secret Ready=False: a transform failed; the target was left untouched.
    TransformError,
    /// Secret Ready=False: `target.template` failed (a missing key, an unknown filter, a value a
    /// filter cannot take, a `target.type` conflicting with `dockerConfig`); the message names
    /// the key and column, never a value. The target was left untouched.
    TemplateError,
    /// Secret Ready=False: reading the existing target Secret failed.
    SecretReadFailed,
    /// Secret Ready=False: writing the target Secret failed.
    SecretWriteFailed,
    /// Secret Ready=False: `spec.refreshInterval` is not a valid duration (new: the Go operator
    /// fell back to the default silently, reference §8 item 9).
    InvalidRefreshInterval,
    /// Ready=False: the object does not match its type (a field of the wrong type, or a string or
    /// list over its size bound, stored by an API server that skipped the CRD schema). Only an edit fixes it, so it is not retried on
    /// a timer; deletion is never blocked by it. The message names the field, never its value.
    InvalidSpec,
    /// Secret Ready=False: the transformed content is over the 1 MiB limit of a Secret; the
    /// target was left unchanged.
    SecretTooLarge,
    /// Secret Ready=False: the target is immutable, its content (or type, or flag) must change,
    /// and `target.immutableChange` is `Refuse` (its default); the target was left unchanged.
    /// Retried on a timer: the content may come back.
    TargetImmutable,
    // Target refusals and the rollout floor (new): decided before anything is revealed, retried
    // when the objects involved change, never on a timer.
    /// Secret Ready=False: the target type is one Kubernetes turns into credentials
    /// (`kubernetes.io/service-account-token`, `bootstrap.kubernetes.io/token`), asked for in the
    /// spec or found on the existing Secret (or it carries a ServiceAccount token annotation).
    TargetTypeRefused,
    /// Secret Ready=False: the target Secret is controlled by another owner (reference §8 item 13
    /// said `SecretWriteFailed`, every interval).
    TargetControlledByOther,
    /// Secret Ready=False: the target Secret exists without this FerrVaultSecret's controller
    /// owner reference and did not opt in with `ferrvault.com/adoptable-by`.
    TargetNotOwned,
    /// Secret Ready=False: a FerrVaultConnection reads the target Secret (token or CA bundle).
    TargetIsConnectionSecret,
    /// Secret Ready=False: `target.creationPolicy: Merge` and the target Secret does not exist
    /// (Merge never creates one).
    TargetMissing,
    /// Secret RolloutRestarted=False: a restart is due but the workload was restarted less than
    /// the rollout floor ago; it is deferred, not dropped.
    RolloutDeferred,
    /// Connection Ready=False: the Secret or key named by `caBundleSecretRef` could not be read
    /// (new: the Go operator had no CA option).
    CaBundleUnreadable,
    /// Secret RolloutRestarted=True: the workloads run the current content.
    UpToDate,
    /// Secret RolloutRestarted=False: at least one workload restart failed; retried.
    RolloutFailed,
    /// Ready=False: `spec.url` is plain `http://` and the operator was not started with
    /// `--allow-insecure-http`; nothing was sent. Only an edit fixes it: no timer.
    InsecureUrl,
    /// Ready=False: FerrVault answered a call (probe, reveal, OIDC exchange) with a redirect,
    /// which is never followed; nothing was sent to the location it named.
    Redirected,
    /// Ready=False: a connection using the cluster identity has a `spec.url` outside the
    /// operator's `--oidc-trusted-urls` (or adds its own CA bundle); nothing was sent. No timer.
    UntrustedUrl,
    /// Ready=False: the Go-era `spec.oidc.clusterID` or `spec.oidc.tokenPath` differs from the
    /// operator's setting; it is never used. No timer.
    ClusterIdentityMismatch,
    /// Ready=False: the connection opts in to the cluster identity but the operator has none
    /// (`--oidc-cluster-id` unset), or the connection is not in mode `cloud`. No timer.
    ClusterIdentityUnavailable,
    /// Ready=False: every address `spec.url` leads to is refused by the operator's egress policy
    /// (loopback, link-local, cloud metadata, the operator's own addresses or the API server,
    /// `--ferrvault-denied-cidrs`); no connection was made. Retried on the usual timers: the
    /// answer can change with DNS.
    EgressDenied,
    /// Ready=False: the operator runs with `--require-credential-opt-in` and the Secret a
    /// connection names as its token or CA bundle did not opt in (label
    /// `ferrvault.com/credential: "true"` or a `ferrvault.com/` type); nothing was read from it
    /// or sent. No timer: labelling the Secret is a change the watches act on.
    CredentialNotOptedIn,
    /// Connection Ready=True: FerrVault answered its health probe.
    Reachable,
    /// Connection Ready=False: deletion waits until no FerrVaultSecret references it.
    DeletionBlocked,
    /// Secret RefreshIntervalClamped=True: an interval the tenant set is below the operator's
    /// minimum (`--min-refresh-interval`); the minimum is used instead.
    BelowMinimum,
    /// Metric label only, never written to a condition: a 429 leaves status untouched.
    RateLimited,
    /// Ready=False: a FerrVault answer (reveal, or the probe's) crossed one of the operator's
    /// bounds on what it reads (issue 34): a body over its byte cap, more keys or more bytes of
    /// names and values than any Secret can need. The message names the bound, never a byte of
    /// the answer; nothing of it was used. Retried on the failure timer.
    ResponseTooLarge,
    /// Connection TokenHealthy=True: the service-account token never expires, or not within
    /// the next 7 days (`GET /operator/me`).
    TokenValid,
    /// Connection TokenHealthy=False: the service-account token expires within 7 days; a
    /// Warning Event says so too, and `ferrvault_connection_token_expiry_timestamp_seconds`
    /// lets an alert fire before syncs fail.
    TokenExpiresSoon,
    /// Connection TokenHealthy=Unknown: the server does not serve `GET /operator/me` (it
    /// answered 404 or 405, an older FerrVault); not asked again until the spec changes.
    /// Connection ChangeDetection=False: likewise for `GET /operator/secrets/list` (its
    /// FerrVaultSecrets poll), or a cloud-mode connection (the cloud API has no `list`).
    Unsupported,
    // Refresh control (issue 36).
    /// Suspended=True: `spec.suspend` is `true`; no FerrVault request, no write but the status.
    Suspended,
    /// Secret Suspended=True: its FerrVaultConnection has `spec.suspend: true`.
    ConnectionSuspended,
    /// Secret Ready=True: `refreshPolicy: CreatedOnce` and the target exists (created by this
    /// operator for a FerrVaultSecret of this name, or opted in): it is never overwritten; only
    /// `ferrvault.com/force-sync` does.
    TargetKept,
    /// Secret Ready=False: its ClusterFerrVaultConnection's `allowedNamespaces` does not let its
    /// namespace in (or it names one of a kind it cannot use). Nothing is revealed or written;
    /// retried when the namespace's labels or the connection change, never on a timer.
    ConnectionNotAllowed,
    /// Connection Ready=False: the Secret named by `clientCertSecretRef` could not be read, lacks
    /// `tls.crt` or `tls.key`, or holds more than the bound. Nothing was sent.
    ClientCertificateUnreadable,
    /// Connection Ready=False: the `clientCertSecretRef` Secret's `tls.crt`/`tls.key` hold no
    /// certificate or no private key, or the key does not match the certificate. Nothing was sent.
    ClientCertificateInvalid,
    /// Ready=False: the server's certificate matches none of `spec.pinSha256`. The TLS handshake
    /// was aborted, so no request (no token, no body) was sent.
    CertificatePinMismatch,
    /// Ready=False: the server refused the TLS handshake over the client certificate (none was
    /// presented, or it does not accept the one presented).
    ClientCertificateRefused,
    // Change detection (issue 38 point 3).
    /// Connection ChangeDetection=True: `GET /operator/secrets/list` answered; its FerrVaultSecrets
    /// reveal when a selected version moves.
    VersionsFollowed,
}

impl Reason {
    /// Every reason, for exhaustive tests and metric pre-registration.
    pub const ALL: &[Reason] = &[
        Self::Synced,
        Self::MissingKeys,
        Self::ConnectionNotFound,
        Self::TokenUnreadable,
        Self::InvalidConnection,
        Self::MissingCloudScope,
        Self::AuthFailed,
        Self::VaultNotFound,
        Self::Unreachable,
        Self::TransformError,
        Self::TemplateError,
        Self::SecretReadFailed,
        Self::SecretWriteFailed,
        Self::InvalidRefreshInterval,
        Self::InvalidSpec,
        Self::SecretTooLarge,
        Self::TargetImmutable,
        Self::TargetTypeRefused,
        Self::TargetControlledByOther,
        Self::TargetNotOwned,
        Self::TargetIsConnectionSecret,
        Self::TargetMissing,
        Self::RolloutDeferred,
        Self::CaBundleUnreadable,
        Self::InsecureUrl,
        Self::Redirected,
        Self::UntrustedUrl,
        Self::ClusterIdentityMismatch,
        Self::ClusterIdentityUnavailable,
        Self::CredentialNotOptedIn,
        Self::UpToDate,
        Self::RolloutFailed,
        Self::EgressDenied,
        Self::Reachable,
        Self::DeletionBlocked,
        Self::BelowMinimum,
        Self::RateLimited,
        Self::ResponseTooLarge,
        Self::TokenValid,
        Self::TokenExpiresSoon,
        Self::Unsupported,
        Self::Suspended,
        Self::ConnectionSuspended,
        Self::TargetKept,
        Self::ConnectionNotAllowed,
        Self::ClientCertificateUnreadable,
        Self::ClientCertificateInvalid,
        Self::CertificatePinMismatch,
        Self::ClientCertificateRefused,
        Self::VersionsFollowed,
    ];

    /// The exact reason string, CamelCase as Kubernetes requires.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synced => "Synced",
            Self::MissingKeys => "MissingKeys",
            Self::ConnectionNotFound => "ConnectionNotFound",
            Self::TokenUnreadable => "TokenUnreadable",
            Self::InvalidConnection => "InvalidConnection",
            Self::MissingCloudScope => "MissingCloudScope",
            Self::AuthFailed => "AuthFailed",
            Self::VaultNotFound => "VaultNotFound",
            Self::Unreachable => "Unreachable",
            Self::TransformError => "TransformError",
            Self::TemplateError => "TemplateError",
            Self::SecretReadFailed => "SecretReadFailed",
            Self::SecretWriteFailed => "SecretWriteFailed",
            Self::InvalidRefreshInterval => "InvalidRefreshInterval",
            Self::InvalidSpec => "InvalidSpec",
            Self::SecretTooLarge => "SecretTooLarge",
            Self::TargetImmutable => "TargetImmutable",
            Self::TargetTypeRefused => "TargetTypeRefused",
            Self::TargetControlledByOther => "TargetControlledByOther",
            Self::TargetNotOwned => "TargetNotOwned",
            Self::TargetIsConnectionSecret => "TargetIsConnectionSecret",
            Self::TargetMissing => "TargetMissing",
            Self::RolloutDeferred => "RolloutDeferred",
            Self::CaBundleUnreadable => "CaBundleUnreadable",
            Self::InsecureUrl => "InsecureUrl",
            Self::Redirected => "Redirected",
            Self::UntrustedUrl => "UntrustedUrl",
            Self::ClusterIdentityMismatch => "ClusterIdentityMismatch",
            Self::ClusterIdentityUnavailable => "ClusterIdentityUnavailable",
            Self::CredentialNotOptedIn => "CredentialNotOptedIn",
            Self::UpToDate => "UpToDate",
            Self::RolloutFailed => "RolloutFailed",
            Self::EgressDenied => "EgressDenied",
            Self::Reachable => "Reachable",
            Self::DeletionBlocked => "DeletionBlocked",
            Self::BelowMinimum => "BelowMinimum",
            Self::RateLimited => "RateLimited",
            Self::ResponseTooLarge => "ResponseTooLarge",
            Self::TokenValid => "TokenValid",
            Self::TokenExpiresSoon => "TokenExpiresSoon",
            Self::Unsupported => "Unsupported",
            Self::Suspended => "Suspended",
            Self::ConnectionSuspended => "ConnectionSuspended",
            Self::TargetKept => "TargetKept",
            Self::ConnectionNotAllowed => "ConnectionNotAllowed",
            Self::ClientCertificateUnreadable => "ClientCertificateUnreadable",
            Self::ClientCertificateInvalid => "ClientCertificateInvalid",
            Self::CertificatePinMismatch => "CertificatePinMismatch",
            Self::ClientCertificateRefused => "ClientCertificateRefused",
            Self::VersionsFollowed => "VersionsFollowed",
        }
    }

    /// Whether this reason may appear in a condition (everything but [`Reason::RateLimited`]).
    pub fn is_condition_reason(self) -> bool {
        !matches!(self, Self::RateLimited)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_strings_should_be_unique_camel_case_and_match_the_variant_names() {
        let mut seen = std::collections::BTreeSet::new();
        for &reason in Reason::ALL {
            let text = reason.as_str();
            assert!(seen.insert(text), "duplicate reason {text}");
            assert!(text.chars().all(|c| c.is_ascii_alphanumeric()), "{text}");
            assert!(text.starts_with(|c: char| c.is_ascii_uppercase()), "{text}");
            assert_eq!(format!("{reason:?}"), text, "as_str must spell the variant");
        }
    }

    #[test]
    fn only_rate_limited_should_be_kept_out_of_conditions() {
        let excluded: Vec<_> = Reason::ALL
            .iter()
            .copied()
            .filter(|r| !r.is_condition_reason())
            .collect();
        assert_eq!(excluded, vec![Reason::RateLimited]);
    }
}
