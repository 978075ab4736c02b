//! OIDC workload identity: exchanging the operator's projected ServiceAccount token for a
//! FerrVault bearer (`POST /api/v1/clusters/oidc-exchange`), cached per connection.
//!
//! # Guarantees
//! - The token file and the cluster ID are the operator's [`ClusterIdentity`]; a connection
//!   only names the (trusted) endpoint. The caller checks the endpoint is trusted.
//! - A cached bearer is reused while it has more than [`REFRESH_LEEWAY`] left.
//! - Concurrent requests for one connection share one exchange (a per-connection lock), so
//!   each connection has its own bearer and its own request budget at the server.
//! - A cached bearer is only reused for the same endpoint; a connection whose URL changed gets
//!   a fresh exchange even before it is invalidated.
//! - Neither the projected token nor the bearer appears in errors or `Debug` output.
//! - An answer longer than [`MAX_SMALL_BODY_BYTES`] is refused unread
//!   ([`FerrVaultError::ResponseTooLarge`]): a bearer and its expiry take a few hundred bytes.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, SystemTime},
};

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Deserialize;

use super::{
    ClusterIdentity, Credential, Endpoint, FerrVaultError,
    deadline::Deadline,
    http::{self, MAX_SMALL_BODY_BYTES},
    pool::EndpointClient,
    token_file,
};

/// Refresh a bearer when it has this little time left.
pub const REFRESH_LEEWAY: Duration = Duration::from_secs(60);

/// Where a connection's OIDC bearer comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcSource {
    /// The connection's namespace (cache key).
    pub namespace: String,
    /// The connection's name (cache key).
    pub name: String,
    /// The FerrVault endpoint to exchange at (`spec.url`, one of the trusted URLs).
    pub endpoint: Endpoint,
}

/// Cached bearers by connection.
#[derive(Default)]
pub(crate) struct OidcCache {
    entries: Mutex<HashMap<ConnectionKey, Slot>>,
}

/// `(namespace, name)` of a connection.
type ConnectionKey = (String, String);
/// One connection's cached bearer; the async lock makes concurrent callers share an exchange.
type Slot = Arc<tokio::sync::Mutex<Option<Cached>>>;

struct Cached {
    endpoint: Endpoint,
    bearer: Credential,
    expires_at: SystemTime,
}

#[derive(Deserialize)]
struct ExchangeAnswer {
    access_token: String,
    expires_at: String,
}

impl OidcCache {
    pub(crate) async fn token(
        &self,
        client: &EndpointClient,
        settings: &http::CallSettings,
        identity: &ClusterIdentity,
        source: &OidcSource,
        deadline: &Deadline,
    ) -> Result<Credential, FerrVaultError> {
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
            entries
                .entry((source.namespace.clone(), source.name.clone()))
                .or_default()
                .clone()
        };
        let mut cached = entry.lock().await;
        if let Some(hit) = cached
            .as_ref()
            .filter(|c| c.is_fresh_for(source, SystemTime::now()))
        {
            return Ok(hit.bearer.clone());
        }
        let projected = token_file::read_token(identity.token_path(), deadline.get()).await?;
        let url = source.endpoint.url(&["api", "v1", "clusters", "oidc-exchange"])?;
        let body = serde_json::json!({ "cluster_id": identity.cluster_id(), "token": projected }).to_string();
        let (bearer, expires_at) = http::call(
            client,
            settings,
            None,
            deadline,
            MAX_SMALL_BODY_BYTES,
            |client| {
                Ok(client
                    .post(url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .header(ACCEPT, "application/json")
                    .body(body.clone()))
            },
            decode_exchange,
        )
        .await
        .map_err(|error| error.redact(&projected))?;
        *cached = Some(Cached {
            endpoint: source.endpoint.clone(),
            bearer: bearer.clone(),
            expires_at,
        });
        Ok(bearer)
    }

    pub(crate) fn invalidate(&self, namespace: &str, name: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.remove(&(namespace.to_owned(), name.to_owned()));
    }
}

impl Cached {
    fn is_fresh_for(&self, source: &OidcSource, now: SystemTime) -> bool {
        self.endpoint == source.endpoint
            && self
                .expires_at
                .duration_since(now)
                .is_ok_and(|left| left > REFRESH_LEEWAY)
    }
}

/// Decodes a 2xx token-exchange answer: the bearer and its expiry. A pure function of the body
/// (a fuzzing entry point).
///
/// # Errors
/// [`FerrVaultError::Decode`] (naming no token), or [`FerrVaultError::InvalidCredential`] for a
/// bearer that cannot be one.
pub fn decode_exchange(body: &[u8]) -> Result<(Credential, SystemTime), FerrVaultError> {
    let answer: ExchangeAnswer =
        serde_json::from_slice(body).map_err(|e| FerrVaultError::decode("oidc exchange", &e))?;
    let expires_at: jiff::Timestamp = answer
        .expires_at
        .parse()
        .map_err(|_| FerrVaultError::Decode("oidc exchange: expires_at is not an RFC 3339 time".into()))?;
    Ok((
        Credential::cluster(&answer.access_token)?,
        SystemTime::from(expires_at),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_decoding_should_not_echo_the_token() {
        let ok = decode_exchange(
            br#"{"access_token":"ffclust_abc","expires_at":"2030-01-01T00:00:00Z","token_type":"Bearer"}"#,
        )
        .unwrap();
        assert_eq!(ok.0.bearer(), "ffclust_abc");
        assert!(ok.0.is_cluster());
        let bad = decode_exchange(br#"{"access_token":12345678,"expires_at":"x"}"#).unwrap_err();
        assert!(!bad.to_string().contains("12345678"), "{bad}");
        let bad_time =
            decode_exchange(br#"{"access_token":"ffclust_abc","expires_at":"tomorrow"}"#).unwrap_err();
        assert!(!format!("{bad_time:?}").contains("ffclust_abc"));
    }
}
