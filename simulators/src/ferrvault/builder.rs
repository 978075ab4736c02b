//! The chainable builder of [`SimConfig`], for tests and benchmarks:
//! `SimConfig::default().vault("prod", [("DB_URL", "…")]).service_account_token("fvsat_x", "prod")…`

use std::time::Duration;

use super::{
    LimiterMode, RateLimit,
    config::{
        DEFAULT_ENVIRONMENT, DEFAULT_ORG, DEFAULT_PROJECT, OidcCluster, OrgToken, Redacted, RetryAfterFormat,
        Role, SecretSpec, ServiceAccountToken, SimConfig, TlsSpec, Unserved, VaultSpec,
    },
    faults::Endpoint,
};

impl SimConfig {
    /// Adds a vault in the default org/project with the given secrets (version 1 each).
    #[must_use]
    pub fn vault<K, V>(self, name: &str, secrets: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.cloud_vault(DEFAULT_ORG, DEFAULT_PROJECT, name, secrets)
    }

    /// Adds a vault owned by `org`/`project` (reachable in both modes) with the given secrets.
    #[must_use]
    pub fn cloud_vault<K, V>(
        mut self,
        org: &str,
        project: &str,
        name: &str,
        secrets: impl IntoIterator<Item = (K, V)>,
    ) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.vaults.push(VaultSpec {
            name: name.to_owned(),
            org: org.to_owned(),
            project: project.to_owned(),
            environment: DEFAULT_ENVIRONMENT.to_owned(),
            id: None,
            secrets: secrets
                .into_iter()
                .map(|(k, v)| (k.into(), SecretSpec::Value(Redacted::new(v))))
                .collect(),
        });
        self
    }

    /// Adds a service-account token bound to `vault`.
    #[must_use]
    pub fn service_account_token(mut self, token: &str, vault: &str) -> Self {
        self.service_account_tokens.push(ServiceAccountToken {
            token: Redacted::new(token),
            vault: vault.to_owned(),
            label: None,
            role: Role::default(),
            expires_at: None,
            token_id: None,
        });
        self
    }

    /// Gives a service-account token a role (the default is `viewer`).
    ///
    /// # Panics
    /// When no service-account token equal to `token` was added before: a test setup bug.
    #[must_use]
    pub fn token_role(mut self, token: &str, role: Role) -> Self {
        self.service_account(token).role = role;
        self
    }

    /// Makes a service-account token expire at `at` (401 from then on; `me` reports it).
    ///
    /// # Panics
    /// As [`SimConfig::token_role`].
    #[must_use]
    pub fn token_expires_at(mut self, token: &str, at: jiff::Timestamp) -> Self {
        self.service_account(token).expires_at = Some(at);
        self
    }

    fn service_account(&mut self, token: &str) -> &mut ServiceAccountToken {
        self.service_account_tokens
            .iter_mut()
            .find(|t| t.token.expose() == token)
            .expect("add the service-account token before configuring it")
    }

    /// Adds an org token for `org`.
    #[must_use]
    pub fn org_token(mut self, token: &str, org: &str) -> Self {
        self.org_tokens.push(OrgToken {
            token: Redacted::new(token),
            org: org.to_owned(),
            label: None,
        });
        self
    }

    /// Names a configured token (service-account or org) in stats and rate-limit settings.
    ///
    /// # Panics
    /// When no token equal to `token` was added before: a test setup bug.
    #[must_use]
    pub fn token_label(mut self, token: &str, label: &str) -> Self {
        let slot = self
            .service_account_tokens
            .iter_mut()
            .find(|t| t.token.expose() == token)
            .map(|t| &mut t.label)
            .or_else(|| {
                self.org_tokens
                    .iter_mut()
                    .find(|t| t.token.expose() == token)
                    .map(|t| &mut t.label)
            })
            .expect("token_label: add the token before labelling it");
        *slot = Some(label.to_owned());
        self
    }

    /// Lets cluster `cluster_id` exchange exactly `jwt` for a token that reads `org`'s vaults.
    #[must_use]
    pub fn oidc_cluster(mut self, cluster_id: &str, jwt: &str, org: &str) -> Self {
        self.oidc_clusters.push(OidcCluster {
            cluster_id: cluster_id.to_owned(),
            jwt: Redacted::new(jwt),
            org: org.to_owned(),
            namespaces: Vec::new(),
        });
        self
    }

    /// Sets the default per-token bucket.
    #[must_use]
    pub fn rate_limit(mut self, per_second: f64, burst: u32) -> Self {
        self.rate_limit = RateLimit { per_second, burst };
        self
    }

    /// Sets one token's bucket (by label or fingerprint) from the start.
    #[must_use]
    pub fn token_rate_limit(mut self, label_or_fingerprint: &str, per_second: f64, burst: u32) -> Self {
        self.token_rate_limits
            .insert(label_or_fingerprint.to_owned(), RateLimit { per_second, burst });
        self
    }

    /// Switches "debt" mode: rejected requests also spend budget.
    #[must_use]
    pub fn debt_mode(mut self, rejected_requests_spend_budget: bool) -> Self {
        self.rejected_requests_spend_budget = rejected_requests_spend_budget;
        self
    }

    /// Chooses how limits are enforced: token bucket, capped debt or sliding window.
    #[must_use]
    pub fn limiter_mode(mut self, mode: LimiterMode) -> Self {
        self.limiter_mode = mode;
        self
    }

    /// Chooses the `Retry-After` format.
    #[must_use]
    pub fn retry_after_format(mut self, format: RetryAfterFormat) -> Self {
        self.retry_after = format;
        self
    }

    /// Sets the lifetime of minted cluster tokens (whole seconds; sub-second parts are dropped).
    #[must_use]
    pub fn cluster_token_ttl(mut self, ttl: Duration) -> Self {
        self.cluster_token_ttl_secs = ttl.as_secs();
        self
    }

    /// Answers `endpoint` as a server without it would (404 or 405).
    #[must_use]
    pub fn unserved(mut self, endpoint: Endpoint, how: Unserved) -> Self {
        self.unserved.insert(endpoint, how);
        self
    }

    /// Serves HTTPS with this certificate chain and key (PEM).
    #[must_use]
    pub fn tls(mut self, cert_pem: &str, key_pem: &str) -> Self {
        self.tls = Some(TlsSpec {
            cert_pem: cert_pem.to_owned(),
            key_pem: key_pem.to_owned(),
            client_ca_pem: None,
        });
        self
    }

    /// Requires a client certificate chaining to `ca_pem` (mTLS).
    ///
    /// # Panics
    /// When [`SimConfig::tls`] was not called before: a test setup bug.
    #[must_use]
    pub fn require_client_cert(mut self, ca_pem: &str) -> Self {
        let tls = self
            .tls
            .as_mut()
            .expect("call .tls(..) before .require_client_cert(..)");
        tls.client_ca_pem = Some(ca_pem.to_owned());
        self
    }

    /// Seeds the RNG behind fault rates.
    #[must_use]
    pub fn fault_seed(mut self, seed: u64) -> Self {
        self.fault_seed = seed;
        self
    }
}
