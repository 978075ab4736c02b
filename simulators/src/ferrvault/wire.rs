//! What goes over the wire of the FerrVault API (reference-go-operator.md §2.2): the JSON bodies, as
//! the simulator reads and writes them, and the percent-encoded path segments it decodes.

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};

use super::config::{Redacted, Role};

/// `POST /operator/secrets/reveal` request.
#[derive(Debug, Deserialize)]
pub struct RevealRequest {
    /// The vault slug.
    pub vault: String,
    /// Keys to reveal; absent or empty means all.
    #[serde(default)]
    pub names: Option<Vec<String>>,
}

/// One revealed secret (ferrvault mode).
#[derive(Serialize)]
pub struct Hit<'a> {
    /// Secret name.
    pub name: &'a str,
    /// Secret value.
    pub value: &'a str,
    /// Secret version.
    pub version: u64,
    /// When it was read, RFC 3339.
    pub fetched_at: String,
}

/// `POST /operator/secrets/reveal` response.
#[derive(Serialize)]
pub struct RevealResponse<'a> {
    /// Found secrets.
    pub hits: Vec<Hit<'a>>,
    /// Requested names the vault lacks.
    pub missing: Vec<String>,
}

/// The vault block of a cloud-mode reveal.
#[derive(Debug, Serialize)]
pub struct VaultMeta<'a> {
    /// Vault id.
    pub id: &'a str,
    /// Vault name.
    pub name: &'a str,
    /// Vault environment.
    pub environment: &'a str,
}

/// Cloud-mode reveal response.
#[derive(Serialize)]
pub struct CloudRevealResponse<'a> {
    /// Name → value.
    pub secrets: BTreeMap<&'a str, &'a str>,
    /// Requested names the vault lacks.
    pub missing: Vec<String>,
    /// Which vault answered.
    pub vault: VaultMeta<'a>,
}

/// `POST /api/v1/clusters/oidc-exchange` request.
#[derive(Debug, Deserialize)]
pub struct ExchangeRequest {
    /// The configured cluster id.
    pub cluster_id: String,
    /// The projected ServiceAccount JWT.
    pub token: Redacted,
}

/// `POST /api/v1/clusters/oidc-exchange` response.
#[derive(Serialize)]
pub struct ExchangeResponse {
    /// The minted `ffclust_…` bearer.
    pub access_token: String,
    /// Its expiry, RFC 3339.
    pub expires_at: String,
    /// Always `Bearer`.
    pub token_type: &'static str,
}

/// One entry of `GET /operator/secrets/list` (a JSON list of these): no value.
#[derive(Serialize)]
pub struct ListEntry<'a> {
    /// Secret name.
    pub name: &'a str,
    /// Its version.
    pub version: u64,
    /// When its value last changed, RFC 3339.
    pub updated_at: String,
}

/// `GET /operator/me` response.
#[derive(Serialize)]
pub struct MeResponse<'a> {
    /// The token's id.
    pub token_id: &'a str,
    /// The bound vault's id.
    pub vault_id: &'a str,
    /// The bound vault's slug.
    pub vault_slug: &'a str,
    /// `viewer`, `writer` or `admin`.
    pub role: Role,
    /// The token's label.
    pub token_label: &'a str,
    /// Its expiry, RFC 3339; absent when it never expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// `POST /operator/secrets` request.
#[derive(Debug, Deserialize)]
pub struct CreateRequest {
    /// The vault slug.
    pub vault: String,
    /// The new secret's name.
    pub name: String,
    /// Its value.
    pub value: Redacted,
}

/// `PUT /operator/secrets/{name}` request.
#[derive(Debug, Deserialize)]
pub struct UpdateRequest {
    /// The vault slug.
    pub vault: String,
    /// The new value.
    pub value: Redacted,
}

/// What create and update answer: the secret's new version (never its value).
#[derive(Serialize)]
pub struct Written<'a> {
    /// Secret name.
    pub name: &'a str,
    /// Its new version.
    pub version: u64,
    /// When it changed, RFC 3339.
    pub updated_at: String,
}

/// Percent-decodes one path segment (`%2F` stays inside the segment as `/`).
pub fn decode_segment(segment: &str) -> String {
    percent_decode_str(segment).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_should_decode_reserved_characters() {
        assert_eq!(decode_segment("my%20vault%2Fblue"), "my vault/blue");
    }
}
