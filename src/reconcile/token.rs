//! How a connection reaches FerrVault: its endpoint (URL plus optional CA bundle) and its
//! credential (token Secret, trimmed, or an OIDC bearer from the client's broker).
//!
//! # Guarantees
//! - Error messages name Secrets, keys and paths, never a token or a CA byte.
//! - The token Secret is read fresh on every call (no cache besides the API server), so a
//!   rotated token is used by the next reconcile.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};
use tokio::time::Instant;

use super::kube_errors::kube_error_text;
use crate::{
    api::{FerrVaultConnection, Reason, SecretKeyRef},
    ferrvault::{Credential, Endpoint, FerrVault, OidcSource},
};

/// Why a connection's endpoint or credential is unusable: a condition reason and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AccessError {
    /// `InvalidConnection`, `CaBundleUnreadable` or `TokenUnreadable`.
    pub reason: Reason,
    /// For humans; names only.
    pub message: String,
}

impl AccessError {
    fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// The endpoint of `connection`: its URL, plus its CA bundle when `caBundleSecretRef` is set.
///
/// # Errors
/// `InvalidConnection` for a bad URL or PEM bundle, `CaBundleUnreadable` when the bundle's
/// Secret or key cannot be read.
pub async fn endpoint(
    client: &kube::Client,
    connection: &FerrVaultConnection,
) -> Result<Endpoint, AccessError> {
    let endpoint = Endpoint::parse(&connection.spec.url)
        .map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))?;
    let Some(ca) = &connection.spec.ca_bundle_secret_ref else {
        return Ok(endpoint);
    };
    let namespace = connection.namespace().unwrap_or_default();
    let pem = read_secret_key(client, &namespace, ca)
        .await
        .map_err(|why| AccessError::new(Reason::CaBundleUnreadable, format!("CA bundle {why}")))?;
    endpoint
        .with_extra_ca_pem(&pem)
        .map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))
}

/// The credential of `connection`: the token Secret's value (whitespace trimmed), or an OIDC
/// bearer (cached by the client until 60s before expiry).
///
/// # Errors
/// `TokenUnreadable` when neither or both sources are set, the Secret or key is missing or
/// empty, or the OIDC exchange fails; `InvalidConnection` when the token cannot be a bearer.
pub async fn credential(
    client: &kube::Client,
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
            let raw = read_secret_key(client, &namespace, reference)
                .await
                .map_err(|why| unreadable(format!("token {why}")))?;
            let text = String::from_utf8(raw).map_err(|_| {
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
            Credential::new(&text).map_err(|e| AccessError::new(Reason::InvalidConnection, e.to_string()))
        }
        (None, Some(oidc)) => {
            let source = OidcSource {
                namespace: namespace.clone(),
                name: connection.name_any(),
                endpoint: endpoint.clone(),
                cluster_id: oidc.cluster_id.clone(),
                token_path: PathBuf::from(oidc.token_path()),
            };
            ferrvault
                .oidc_token(&source, deadline)
                .await
                .map_err(|e| unreadable(format!("OIDC exchange failed: {e}")))
        }
    }
}

/// The bytes at `reference` in a Secret of `namespace`; the error text (no value) says why not.
async fn read_secret_key(
    client: &kube::Client,
    namespace: &str,
    reference: &SecretKeyRef,
) -> Result<Vec<u8>, String> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let name = &reference.name;
    let secret = secrets
        .get(name)
        .await
        .map_err(|e| format!("Secret {namespace}/{name}: {}", kube_error_text(&e)))?;
    secret
        .data
        .and_then(|mut d| d.remove(&reference.key))
        .map(|b| b.0)
        .ok_or_else(|| format!("Secret {namespace}/{name} has no key {:?}", reference.key))
}
