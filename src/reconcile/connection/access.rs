//! Connection access: how a connection reaches FerrVault — its endpoint (URL plus optional CA
//! bundle) and its credential (token Secret, trimmed, or a bearer minted from the operator's
//! cluster identity).
//!
//! # Guarantees
//! - Error messages name Secrets, keys and fields, never a token, a CA byte or a client key.
//! - Token and CA bundle values come from [`SecretValues`]: kept per `resourceVersion` and read
//!   again as soon as the Secret metadata store shows a new one, so a rotated token is used by
//!   the pass its rotation triggers. Each is bounded (a larger one is `TokenUnreadable` or
//!   `CaBundleUnreadable`, naming the bound), and with `--require-credential-opt-in` a Secret
//!   that did not opt in is `CredentialNotOptedIn`: nothing is sent.
//! - A spec the operator refuses to act on (plain `http://` without the opt-in, the cluster
//!   identity asked for where it may not go, a Go-era `oidc` field that disagrees with the
//!   operator) is reported before anything is read or sent, and flagged
//!   [`AccessError::is_spec_refusal`]: only an edit fixes it, so it is not retried on a timer.

use std::path::Path;

use kube::ResourceExt;
use tokio::time::Instant;

use crate::reconcile::{
    read::{CaBundleError, ClientCertError, SecretValues, ValueError},
    rules::status::messages,
};
use crate::{
    api::{ConnectionMode, FerrVaultConnection, OidcSpec, Reason},
    ferrvault::{
        ClusterIdentity, Credential, Endpoint, FerrVault, FerrVaultError, IdentityRefusal, OidcSource, Pins,
        TlsRefusal,
    },
};

/// How the view of a ClusterFerrVaultConnection is named (`ClusterFerrVaultConnection/<name>`,
/// see `secret/cluster_connection.rs`): a name no namespaced object can carry.
pub(crate) const CLUSTER_VIEW_PREFIX: &str = "ClusterFerrVaultConnection/";

/// Why a connection's endpoint or credential is unusable: a condition reason and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct AccessError {
    /// `InvalidConnection`, `CaBundleUnreadable`, `TokenUnreadable`, `Redirected`,
    /// `EgressDenied` or a spec refusal (see [`AccessError::is_spec_refusal`]).
    pub reason: Reason,
    /// For humans; names only.
    pub message: String,
}

impl AccessError {
    pub(super) fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }

    /// Whether the spec asks for something the operator refuses to do (`InsecureUrl`,
    /// `UntrustedUrl`, `ClusterIdentityMismatch`, `ClusterIdentityUnavailable`,
    /// `CredentialNotOptedIn`): only an edit of the connection or of the Secret it names (watch
    /// events that enqueue it and its FerrVaultSecrets) or of the operator's flags (a restart)
    /// changes the answer.
    pub(crate) fn is_spec_refusal(&self) -> bool {
        matches!(
            self.reason,
            Reason::InsecureUrl
                | Reason::UntrustedUrl
                | Reason::ClusterIdentityMismatch
                | Reason::ClusterIdentityUnavailable
                | Reason::CredentialNotOptedIn
        )
    }
}

/// The condition of a client refusal (a plain `http://` URL, a redirect, the cluster identity
/// refused, an address the egress policy refuses, a TLS handshake refused over a pin or a client
/// certificate, a client certificate the TLS client cannot use), naming `what` the call was; `None` for every other failure, which callers map
/// themselves.
pub(crate) fn refusal(error: &FerrVaultError, what: &str) -> Option<AccessError> {
    let refused = match error {
        FerrVaultError::InsecureUrl => AccessError::new(Reason::InsecureUrl, messages::INSECURE_URL),
        FerrVaultError::Redirected { status } => {
            AccessError::new(Reason::Redirected, messages::redirected(what, *status))
        }
        FerrVaultError::ClusterIdentity(refusal) => identity_refusal(*refusal),
        FerrVaultError::EgressDenied(_) => AccessError::new(Reason::EgressDenied, error.to_string()),
        FerrVaultError::TlsRefused(TlsRefusal::PinMismatch) => {
            AccessError::new(Reason::CertificatePinMismatch, error.to_string())
        }
        FerrVaultError::TlsRefused(TlsRefusal::ClientCertificateRefused) => {
            AccessError::new(Reason::ClientCertificateRefused, error.to_string())
        }
        FerrVaultError::InvalidClientCertificate(_) => {
            AccessError::new(Reason::ClientCertificateInvalid, error.to_string())
        }
        _ => return None,
    };
    Some(refused)
}

fn identity_refusal(refusal: IdentityRefusal) -> AccessError {
    match refusal {
        IdentityRefusal::NotConfigured => AccessError::new(
            Reason::ClusterIdentityUnavailable,
            messages::CLUSTER_IDENTITY_NOT_CONFIGURED,
        ),
        IdentityRefusal::NoNamespace => AccessError::new(
            Reason::ClusterIdentityUnavailable,
            messages::CLUSTER_IDENTITY_NEEDS_CLOUD_MODE,
        ),
        IdentityRefusal::UntrustedUrl => AccessError::new(Reason::UntrustedUrl, messages::UNTRUSTED_URL),
        IdentityRefusal::TenantCaBundle => {
            AccessError::new(Reason::UntrustedUrl, messages::CLUSTER_IDENTITY_WITH_CA_BUNDLE)
        }
    }
}

/// The endpoint of `connection`: its URL, plus its CA bundle when `caBundleSecretRef` is set,
/// its client certificate when `clientCertSecretRef` is, and its pins when `pinSha256` is.
/// The FerrVault client is told the connection uses it now (so the pooled client of an endpoint
/// the connection left is dropped).
///
/// # Errors
/// `InvalidConnection` for a bad URL or PEM bundle, `InsecureUrl` for a plain `http://` URL the
/// client refuses and `EgressDenied` for an IP-literal host the egress policy refuses (both
/// before the CA bundle is read), `CaBundleUnreadable` when the bundle's Secret or key cannot be
/// read or the bundle is over its bound, `CredentialNotOptedIn` when its Secret (or the client
/// certificate's) did not opt in, `ClientCertificateUnreadable` when `tls.crt` or `tls.key` cannot
/// be read or is over its bound, `ClientCertificateInvalid` when they hold no certificate or key
/// or do not match, `InvalidConnection` for a malformed pin.
pub(crate) async fn endpoint(
    values: &SecretValues,
    ferrvault: &FerrVault,
    connection: &FerrVaultConnection,
) -> Result<Endpoint, AccessError> {
    let endpoint = Endpoint::parse(&connection.spec.url)
        .map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))?;
    if let Err(error) = ferrvault.admit(&endpoint) {
        return Err(refusal(&error, "request")
            .unwrap_or_else(|| AccessError::new(Reason::InvalidConnection, error.to_string())));
    }
    let namespace = connection.namespace().unwrap_or_default();
    let endpoint = match &connection.spec.ca_bundle_secret_ref {
        None => endpoint,
        Some(ca) => values
            .ca_endpoint(&namespace, ca, endpoint)
            .await
            .map_err(|e| match e {
                CaBundleError::Value(e) => value_refusal("CA bundle", Reason::CaBundleUnreadable, e),
                CaBundleError::Invalid(why) => AccessError::new(Reason::InvalidConnection, why),
            })?,
    };
    let endpoint = match &connection.spec.client_cert_secret_ref {
        None => endpoint,
        Some(cert) => {
            endpoint.with_client_identity(values.client_identity(&namespace, &cert.name).await.map_err(
                |e| match e {
                    ClientCertError::Value(e) => {
                        value_refusal("client certificate", Reason::ClientCertificateUnreadable, e)
                    }
                    ClientCertError::Invalid(why) => AccessError::new(
                        Reason::ClientCertificateInvalid,
                        format!("client certificate Secret {namespace}/{}: {why}", cert.name),
                    ),
                },
            )?)
        }
    };
    let endpoint = match &connection.spec.pin_sha256 {
        None => endpoint,
        Some(pins) => endpoint.with_pins(
            Pins::parse(pins).map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))?,
        ),
    };
    ferrvault.claim_endpoint(&namespace, &connection.name_any(), &endpoint);
    Ok(endpoint)
}

/// The credential of `connection`: the token Secret's value (whitespace trimmed), or a bearer
/// minted from the operator's cluster identity (cached by the client until 60s before expiry).
/// A ClusterFerrVaultConnection's token is
/// [`shared_across_shards`](Credential::shared_across_shards); its OIDC bearers are minted per
/// namespace, each spent by one shard, so they are not.
///
/// # Errors
/// `TokenUnreadable` when neither or both sources are set, the Secret or key is missing or
/// empty or over its bound, or the OIDC exchange fails; `CredentialNotOptedIn` when the token
/// Secret did not opt in; `InvalidConnection` when the token cannot be a bearer; for `oidc`, the
/// refusals of [`cluster_credential`] and `Redirected`.
pub(crate) async fn credential(
    values: &SecretValues,
    ferrvault: &FerrVault,
    connection: &FerrVaultConnection,
    endpoint: &Endpoint,
    deadline: Instant,
) -> Result<Credential, AccessError> {
    let namespace = connection.namespace().unwrap_or_default();
    let unreadable = |m: String| AccessError::new(Reason::TokenUnreadable, m);
    match (&connection.spec.token_secret_ref, &connection.spec.oidc) {
        (None, None) => Err(unreadable("set either tokenSecretRef or oidc".into())),
        (Some(_), Some(_)) => Err(unreadable(
            "set only one of tokenSecretRef or oidc, not both".into(),
        )),
        (Some(reference), None) => {
            let raw = values
                .token(&namespace, reference)
                .await
                .map_err(|e| value_refusal("token", Reason::TokenUnreadable, e))?;
            let text = std::str::from_utf8(&raw).map_err(|_| {
                unreadable(format!(
                    "token Secret {namespace}/{} key {:?} is not UTF-8",
                    reference.name, reference.key
                ))
            })?;
            if text.trim().is_empty() {
                return Err(unreadable(format!(
                    "token Secret {namespace}/{} has empty value at key {:?}",
                    reference.name, reference.key
                )));
            }
            let credential = Credential::new(text)
                .map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))?;
            // A cluster connection's token is spent by every shard's holder: each paces its share.
            Ok(if connection.name_any().starts_with(CLUSTER_VIEW_PREFIX) {
                credential.shared_across_shards()
            } else {
                credential
            })
        }
        (None, Some(oidc)) => cluster_credential(ferrvault, connection, oidc, endpoint, deadline).await,
    }
}

/// Why the `what` (token, CA bundle) Secret's value cannot be used: `CredentialNotOptedIn`, else
/// `unreadable` with the value error's words (names and bounds, never a value).
fn value_refusal(what: &str, unreadable: Reason, error: ValueError) -> AccessError {
    match error {
        ValueError::NotOptedIn { namespace, name } => AccessError::new(
            Reason::CredentialNotOptedIn,
            messages::credential_not_opted_in(what, &namespace, &name),
        ),
        other => AccessError::new(unreadable, format!("{what} {other}")),
    }
}

/// A bearer from the operator's cluster identity for a connection that opts in with `oidc`.
///
/// # Errors
/// Checked in this order, each before anything is read or sent: `ClusterIdentityUnavailable`
/// (the operator has none), `ClusterIdentityMismatch` (a Go-era field disagrees),
/// `ClusterIdentityUnavailable` (not cloud mode), `UntrustedUrl`. Then the exchange:
/// `Redirected`, or `TokenUnreadable` for any other failure.
async fn cluster_credential(
    ferrvault: &FerrVault,
    connection: &FerrVaultConnection,
    oidc: &OidcSpec,
    endpoint: &Endpoint,
    deadline: Instant,
) -> Result<Credential, AccessError> {
    let identity = ferrvault
        .config()
        .cluster_identity
        .as_ref()
        .ok_or_else(|| identity_refusal(IdentityRefusal::NotConfigured))?;
    check_go_era_fields(oidc, identity)?;
    if connection.spec.mode != ConnectionMode::Cloud {
        return Err(identity_refusal(IdentityRefusal::NoNamespace));
    }
    identity.admits(endpoint).map_err(identity_refusal)?;
    let source = OidcSource {
        namespace: connection.namespace().unwrap_or_default(),
        name: connection.name_any(),
        endpoint: endpoint.clone(),
    };
    ferrvault.oidc_token(&source, deadline).await.map_err(|e| {
        refusal(&e, "OIDC exchange").unwrap_or_else(|| {
            AccessError::new(Reason::TokenUnreadable, format!("OIDC exchange failed: {e}"))
        })
    })
}

/// The Go operator let a connection choose the cluster ID and the token file; both are the
/// operator's now. An absent or equal value is fine; a different one is refused, never used.
fn check_go_era_fields(oidc: &OidcSpec, identity: &ClusterIdentity) -> Result<(), AccessError> {
    if set(&oidc.cluster_id).is_some_and(|id| !id.eq_ignore_ascii_case(identity.cluster_id())) {
        return Err(AccessError::new(
            Reason::ClusterIdentityMismatch,
            messages::cluster_identity_mismatch("spec.oidc.clusterID", "--oidc-cluster-id"),
        ));
    }
    if set(&oidc.token_path).is_some_and(|path| Path::new(path) != identity.token_path()) {
        return Err(AccessError::new(
            Reason::ClusterIdentityMismatch,
            messages::cluster_identity_mismatch("spec.oidc.tokenPath", "--oidc-token-path"),
        ));
    }
    Ok(())
}

/// A field's value when it is set and not blank.
fn set(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";

    fn identity() -> ClusterIdentity {
        ClusterIdentity::new(
            ID,
            "/var/run/secrets/ferrvault/token".into(),
            &["https://fv.example".into()],
            false,
        )
        .unwrap()
    }

    fn oidc(cluster_id: Option<&str>, token_path: Option<&str>) -> OidcSpec {
        OidcSpec {
            cluster_id: cluster_id.map(str::to_owned),
            token_path: token_path.map(str::to_owned),
            audience: Some("anything".into()),
        }
    }

    #[test]
    fn go_era_fields_should_pass_when_absent_or_equal_to_the_operators() {
        let identity = identity();
        for spec in [
            oidc(None, None),
            oidc(Some(""), Some("")),
            oidc(Some(&ID.to_uppercase()), Some("/var/run/secrets/ferrvault/token")),
            oidc(None, Some("/var/run/secrets/ferrvault//token")),
        ] {
            assert_eq!(check_go_era_fields(&spec, &identity), Ok(()), "{spec:?}");
        }
    }

    #[test]
    fn a_go_era_field_that_differs_should_be_a_mismatch_that_names_the_field_not_the_value() {
        let identity = identity();
        for (spec, field) in [
            (
                oidc(Some("11111111-2222-3333-4444-555555555555"), None),
                "clusterID",
            ),
            (
                oidc(None, Some("/var/run/secrets/kubernetes.io/serviceaccount/token")),
                "tokenPath",
            ),
            (oidc(None, Some("/dev/zero")), "tokenPath"),
        ] {
            let error = check_go_era_fields(&spec, &identity).unwrap_err();
            assert_eq!(error.reason, Reason::ClusterIdentityMismatch);
            assert!(error.is_spec_refusal());
            assert!(error.message.contains(field), "{}", error.message);
            assert!(!error.message.contains("/dev/zero") && !error.message.contains("1111"));
        }
    }

    #[test]
    fn client_refusals_should_map_to_their_reasons_and_only_spec_ones_skip_the_timer() {
        let cases = [
            (FerrVaultError::InsecureUrl, Reason::InsecureUrl, true),
            (
                FerrVaultError::Redirected { status: 307 },
                Reason::Redirected,
                false,
            ),
            (
                FerrVaultError::ClusterIdentity(IdentityRefusal::UntrustedUrl),
                Reason::UntrustedUrl,
                true,
            ),
            (
                FerrVaultError::ClusterIdentity(IdentityRefusal::NotConfigured),
                Reason::ClusterIdentityUnavailable,
                true,
            ),
            (
                FerrVaultError::EgressDenied(crate::ferrvault::EgressRefusal {
                    host: None,
                    address: "169.254.169.254:80".parse().unwrap(),
                    rule: crate::ferrvault::EgressRule::CloudMetadata,
                    others: 0,
                }),
                Reason::EgressDenied,
                false,
            ),
        ];
        for (error, reason, spec) in cases {
            let refused = refusal(&error, "reveal").expect("a refusal");
            assert_eq!(
                (refused.reason, refused.is_spec_refusal()),
                (reason, spec),
                "{error}"
            );
        }
        assert!(refusal(&FerrVaultError::Decode("x".into()), "reveal").is_none());
        let redirect = refusal(&FerrVaultError::Redirected { status: 308 }, "OIDC exchange").unwrap();
        assert!(
            redirect.message.contains("OIDC exchange with 308"),
            "{}",
            redirect.message
        );
    }
}
