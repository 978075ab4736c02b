//! The operator's cluster identity: its own projected ServiceAccount token, exchanged at a
//! FerrVault it trusts for an `ffclust_` bearer. Set by the operator's flags, never by a tenant:
//! a FerrVaultConnection can only opt in to it.
//!
//! # Guarantees
//! - The token path and the cluster ID are the operator's; nothing in a connection's spec can
//!   point the operator at another file or present another cluster.
//! - The projected token and every bearer minted from it are sent only to a trusted base URL,
//!   verified with the system roots only: a tenant's CA bundle could otherwise make any host
//!   answer for the trusted name.
//! - A bearer minted from it only travels with `X-FerrVault-Namespace` (cloud mode), so the
//!   server can scope it to the namespace that asked.
//! - The trusted URLs go through the egress policy like any FerrVault URL: an IP-literal one it
//!   refuses fails the configuration (`check_egress`), a host name is judged
//!   when it is resolved.

use std::path::{Path, PathBuf};

use super::{EgressPolicy, EgressRefusal, Endpoint, IdentityRefusal};

/// The default `--oidc-token-path`, where the chart mounts the projected token (the Go
/// operator's default `oidc.tokenPath`).
pub const DEFAULT_TOKEN_PATH: &str = "/var/run/secrets/ferrvault/token";

/// The operator's workload identity at FerrVault (`--oidc-cluster-id`, `--oidc-token-path`,
/// `--oidc-trusted-urls`). Built only through [`ClusterIdentity::new`], so every instance is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterIdentity {
    cluster_id: String,
    token_path: PathBuf,
    /// Normalised base URLs (see [`Endpoint::parse`]); the cluster token goes nowhere else.
    trusted: Vec<Endpoint>,
}

impl ClusterIdentity {
    /// Validates the operator's identity settings.
    ///
    /// # Errors
    /// A message naming the setting: a cluster ID that is not 36 hex digits and dashes, a
    /// relative token path, no trusted URL, a trusted URL that is not a valid FerrVault base URL,
    /// or a plain `http://` one without `allow_insecure_http`.
    pub fn new(
        cluster_id: &str,
        token_path: PathBuf,
        trusted_urls: &[String],
        allow_insecure_http: bool,
    ) -> Result<Self, String> {
        let cluster_id = cluster_id.trim();
        if cluster_id.len() != 36 || !cluster_id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
            return Err(format!(
                "the cluster ID {cluster_id:?} is not a 36-character UUID (hex digits and dashes)"
            ));
        }
        if !token_path.is_absolute() {
            return Err(format!("the token path {} is not absolute", token_path.display()));
        }
        if trusted_urls.is_empty() {
            return Err("the cluster identity needs at least one trusted FerrVault URL".into());
        }
        let mut trusted = Vec::with_capacity(trusted_urls.len());
        for url in trusted_urls {
            let endpoint = Endpoint::parse(url).map_err(|e| format!("trusted URL {url:?}: {e}"))?;
            if endpoint.is_plain_http() && !allow_insecure_http {
                return Err(format!(
                    "trusted URL {url:?} is plain http://; the cluster token would travel in clear \
                     (allowed only with --allow-insecure-http)"
                ));
            }
            trusted.push(endpoint);
        }
        Ok(Self {
            cluster_id: cluster_id.to_owned(),
            token_path,
            trusted,
        })
    }

    /// The cluster's ID registered in FerrVault.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The projected ServiceAccount token file.
    pub fn token_path(&self) -> &Path {
        &self.token_path
    }

    /// The trusted base URLs, normalised.
    pub fn trusted_urls(&self) -> impl Iterator<Item = &str> {
        self.trusted.iter().map(Endpoint::base_url)
    }

    /// Whether any trusted URL is plain `http://`.
    pub(crate) fn trusts_plain_http(&self) -> bool {
        self.trusted.iter().any(Endpoint::is_plain_http)
    }

    /// Checks the trusted URLs with an IP-literal host against the egress policy, so one the
    /// operator would never connect to fails at start instead of at every exchange. A host name
    /// is judged, like any, when it is resolved.
    ///
    /// # Errors
    /// A message naming the URL and the refusal.
    pub(crate) fn check_egress(&self, policy: &EgressPolicy) -> Result<(), String> {
        for endpoint in &self.trusted {
            if let Some(address) = endpoint.ip_literal()
                && let Err(rule) = policy.check(address)
            {
                let refusal = EgressRefusal::new(None, address, rule);
                return Err(format!("trusted URL {:?}: {refusal}", endpoint.base_url()));
            }
        }
        Ok(())
    }

    /// Whether the cluster token may be sent to `endpoint`.
    ///
    /// # Errors
    /// [`IdentityRefusal::UntrustedUrl`] for a base URL outside the trusted list,
    /// [`IdentityRefusal::TenantCaBundle`] for a trusted URL with an extra CA bundle.
    pub fn admits(&self, endpoint: &Endpoint) -> Result<(), IdentityRefusal> {
        if !self.trusted.iter().any(|t| t.base_url() == endpoint.base_url()) {
            return Err(IdentityRefusal::UntrustedUrl);
        }
        if endpoint.extra_ca_pem().is_some() {
            return Err(IdentityRefusal::TenantCaBundle);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";

    fn identity(urls: &[&str], insecure: bool) -> Result<ClusterIdentity, String> {
        let urls: Vec<String> = urls.iter().map(|u| (*u).to_owned()).collect();
        ClusterIdentity::new(ID, PathBuf::from(DEFAULT_TOKEN_PATH), &urls, insecure)
    }

    #[test]
    fn settings_should_be_checked_when_built() {
        assert!(identity(&["https://fv.example"], false).is_ok());
        assert!(identity(&[], false).unwrap_err().contains("at least one"));
        assert!(
            identity(&["http://fv.example"], false)
                .unwrap_err()
                .contains("--allow-insecure-http")
        );
        assert!(identity(&["http://fv.example"], true).is_ok());
        assert!(identity(&["https://u:p@fv.example"], false).is_err());
        let relative = ClusterIdentity::new(ID, "token".into(), &["https://x".into()], false);
        assert!(relative.unwrap_err().contains("not absolute"));
        for bad in ["", "0b6f7e2c", "zb6f7e2c-1d2e-4f00-8a9b-0123456789ab"] {
            let error = ClusterIdentity::new(bad, DEFAULT_TOKEN_PATH.into(), &["https://x".into()], false);
            assert!(error.unwrap_err().contains("cluster ID"), "{bad:?}");
        }
    }

    #[test]
    fn a_trusted_ip_literal_url_should_pass_the_egress_policy() {
        let identity = identity(&["https://fv.example", "https://127.0.0.1:8200"], false).unwrap();
        let error = identity.check_egress(&EgressPolicy::default()).unwrap_err();
        assert!(
            error.contains("127.0.0.1:8200") && error.contains("loopback"),
            "{error}"
        );
        let allowed = EgressPolicy::from_flags(&["127.0.0.1/32".into()], &[]).unwrap();
        assert_eq!(identity.check_egress(&allowed), Ok(()));
    }

    #[test]
    fn only_a_trusted_base_url_with_system_roots_should_be_admitted() {
        let identity = identity(&["https://FV.example:443/api/"], false).unwrap();
        let at = |url: &str| identity.admits(&Endpoint::parse(url).unwrap());
        assert_eq!(
            at("https://fv.example/api"),
            Ok(()),
            "normalised like the trusted URL"
        );
        assert_eq!(at("https://fv.example"), Err(IdentityRefusal::UntrustedUrl));
        assert_eq!(
            at("https://fv.example.evil/api"),
            Err(IdentityRefusal::UntrustedUrl)
        );
        assert_eq!(at("http://fv.example/api"), Err(IdentityRefusal::UntrustedUrl));
        assert_eq!(at("https://fv.example/api/x"), Err(IdentityRefusal::UntrustedUrl));
        let pem = include_bytes!("../../tests/ferrvault_client/tls_fixtures/ca.pem");
        let with_ca = Endpoint::parse("https://fv.example/api")
            .unwrap()
            .with_extra_ca_pem(pem)
            .unwrap();
        assert_eq!(identity.admits(&with_ca), Err(IdentityRefusal::TenantCaBundle));
    }
}
