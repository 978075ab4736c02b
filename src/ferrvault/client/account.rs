//! The calls about a service-account token's vault and the token itself (issue 38): `list`
//! (every name with its version, no values) and `me` (the token's vault, role and expiry), as the
//! FerrVault CLI makes them, under the `/operator/…` prefix the operator's reveals use (the
//! service answers both it and `/v1/operator/…`: `simulators/src/ferrvault/README.md`).
//!
//! # Guarantees
//! - Each attempt takes a token from the credential's pacer, like a reveal: both calls spend the
//!   token's one budget (the simulator README's metering assumption).
//! - Everything a reveal gets besides single flight: the egress policy, no redirect followed,
//!   bounded bodies (`list` at the reveal's body cap and decoded within its own bounds, `me` at
//!   [`MAX_SMALL_BODY_BYTES`]), typed errors redacted of the token.
//! - A 404 or 405 is [`FerrVaultError::Unsupported`] (an older server), never retried.
//! - A cluster-identity bearer is never sent to either (they are ferrvault-mode endpoints); the
//!   call is refused before anything is sent.

use tokio::time::Instant;

use super::FerrVault;
use crate::ferrvault::{
    Credential, Endpoint, FerrVaultError, IdentityRefusal,
    deadline::Deadline,
    http::{self, MAX_SMALL_BODY_BYTES},
    inventory::{self, Inventory},
    token_info::{self, TokenInfo},
};

impl FerrVault {
    /// `GET /operator/secrets/list`: every name of the token's vault with its version and when
    /// it changed; no value.
    ///
    /// # Errors
    /// [`FerrVaultError::Unsupported`] when the server lacks it;
    /// [`FerrVaultError::ResponseTooLarge`] over [`MAX_LIST_ENTRIES`](crate::ferrvault::MAX_LIST_ENTRIES)
    /// or [`MAX_LIST_BYTES`](crate::ferrvault::MAX_LIST_BYTES); any other [`FerrVaultError`] as a
    /// reveal.
    pub async fn list(
        &self,
        endpoint: &Endpoint,
        credential: &Credential,
        deadline: Instant,
    ) -> Result<Inventory, FerrVaultError> {
        let max_body = self.inner.settings.max_body_bytes;
        self.account_call(
            "list",
            &["operator", "secrets", "list"],
            endpoint,
            credential,
            deadline,
            max_body,
            inventory::decode,
        )
        .await
    }

    /// `GET /operator/me`: the token's vault, role and expiry.
    ///
    /// # Errors
    /// [`FerrVaultError::Unsupported`] when the server lacks it; any other [`FerrVaultError`] as
    /// a reveal.
    pub async fn me(
        &self,
        endpoint: &Endpoint,
        credential: &Credential,
        deadline: Instant,
    ) -> Result<TokenInfo, FerrVaultError> {
        self.account_call(
            "me",
            &["operator", "me"],
            endpoint,
            credential,
            deadline,
            MAX_SMALL_BODY_BYTES,
            token_info::decode,
        )
        .await
    }

    /// One paced `GET` of `segments` with `credential`, its 2xx body decoded by `decode`.
    #[expect(
        clippy::too_many_arguments,
        reason = "private: the two calls differ in every one"
    )]
    async fn account_call<T>(
        &self,
        call: &'static str,
        segments: &[&str],
        endpoint: &Endpoint,
        credential: &Credential,
        deadline: Instant,
        max_body: usize,
        decode: fn(&[u8]) -> Result<T, FerrVaultError>,
    ) -> Result<T, FerrVaultError> {
        if credential.is_cluster() {
            return Err(FerrVaultError::ClusterIdentity(IdentityRefusal::NoNamespace));
        }
        let url = endpoint.url(segments)?;
        let client = self.client_for(endpoint)?;
        let pacer = self.pacer(endpoint, credential);
        http::call(
            &client,
            &self.inner.settings,
            Some(&pacer),
            &Deadline::new(deadline),
            max_body,
            |client| {
                Ok(client
                    .get(url.clone())
                    .header(reqwest::header::ACCEPT, "application/json")
                    .bearer_auth(credential.bearer()))
            },
            decode,
        )
        .await
        .map_err(|error| error.unless_served(call).redact(credential.bearer()))
    }
}
