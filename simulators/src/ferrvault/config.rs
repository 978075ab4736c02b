//! The simulator's configuration: vaults and their secrets, the tokens that may read them, OIDC
//! clusters, rate limits and response switches. Built in Rust with a builder, or loaded from YAML/JSON
//! by the `sim ferrvault --config FILE` subcommand (see `sample.yaml` next to this file).

use std::{collections::BTreeMap, fmt, time::Duration};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use super::surface::{Role, TlsSpec, Unserved};
use super::{
    SimError,
    faults::Endpoint,
    rate_limit::{LimiterMode, RateLimit},
};

/// The printable name of a token that has no label: the first 8 hex characters of its SHA-256.
///
/// # Guarantees
/// Deterministic, so tests and the client can compute it; reveals nothing usable about the token.
pub fn token_fingerprint(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    hex::encode(&digest[..4])
}

/// A credential or secret value held by the simulator.
///
/// # Guarantees
/// `Debug` prints `<redacted>`, so a `SimConfig` can be logged or dumped without leaking what it holds.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Redacted(String);

impl Redacted {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The raw value, for the code paths that compare or serve it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Lets maps keyed by `Redacted` be looked up with a `&str`. Consistent with `Hash`/`Eq`: both are
/// derived from the inner `String`, which hashes and compares like its `str`.
impl std::borrow::Borrow<str> for Redacted {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How a 429 tells the client when to come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryAfterFormat {
    /// `Retry-After: <integer seconds>`, rounded up (what FerrVault sends).
    #[default]
    Seconds,
    /// `Retry-After: <IMF-fixdate>`, rounded up to the next whole second, so clients can test the
    /// other form RFC 9110 allows.
    HttpDate,
}

/// One secret in a vault: its value and version (the version is reported by ferrvault-mode reveals).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SecretSpec {
    /// Just a value; version 1.
    Value(Redacted),
    /// A value with an explicit version.
    Versioned {
        /// The secret value.
        value: Redacted,
        /// The version FerrVault reports for it.
        version: u64,
    },
}

/// A vault. In ferrvault mode it is addressed by `name`; in cloud mode by `(org, project, name)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VaultSpec {
    /// The vault name (slug). Unique across the whole simulator.
    pub name: String,
    /// The organisation that owns it (cloud mode).
    #[serde(default = "default_org")]
    pub org: String,
    /// The project it belongs to (cloud mode).
    #[serde(default = "default_project")]
    pub project: String,
    /// The environment reported in cloud-mode responses.
    #[serde(default = "default_environment")]
    pub environment: String,
    /// The vault id reported in cloud-mode responses; defaults to `vault-<name>`.
    #[serde(default)]
    pub id: Option<String>,
    /// Secret name → value.
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretSpec>,
}

/// A service-account token (`fvsat_…`), bound to one vault (ferrvault mode).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceAccountToken {
    /// The bearer token.
    pub token: Redacted,
    /// The one vault it may read.
    pub vault: String,
    /// Name used in stats and rate-limit settings instead of the token's fingerprint; also the
    /// `token_label` of `GET /operator/me` (the fingerprint when unset).
    #[serde(default)]
    pub label: Option<String>,
    /// Its role (default `viewer`).
    #[serde(default)]
    pub role: Role,
    /// When it stops working (401 from then on); `None` never expires. Reported by `me`.
    #[serde(default)]
    pub expires_at: Option<jiff::Timestamp>,
    /// The `token_id` of `me`; `sat-<fingerprint>` when unset.
    #[serde(default)]
    pub token_id: Option<String>,
}

/// An org-scoped user API token (`fft_…`, cloud mode).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrgToken {
    /// The bearer token.
    pub token: Redacted,
    /// The organisation whose vaults it may read.
    pub org: String,
    /// Name used in stats and rate-limit settings instead of the token's fingerprint.
    #[serde(default)]
    pub label: Option<String>,
}

/// A cluster allowed to exchange a projected ServiceAccount JWT for a `ffclust_…` bearer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OidcCluster {
    /// The `cluster_id` the exchange must name.
    pub cluster_id: String,
    /// The exact JWT string the exchange must present (the simulator does not verify signatures).
    pub jwt: Redacted,
    /// The organisation whose vaults minted tokens may read.
    #[serde(default = "default_org")]
    pub org: String,
    /// Namespaces allowed in `X-FerrVault-Namespace`; empty means any namespace.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

/// Everything the simulator serves. Build with the chainable methods or load with [`SimConfig::from_yaml`].
///
/// # Guarantees
/// `Debug` never prints a token, JWT or secret value (they are [`Redacted`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// The bucket every token starts with (default 1/s, burst 5).
    #[serde(default)]
    pub rate_limit: RateLimit,
    /// Per-token overrides, keyed by token label or fingerprint.
    #[serde(default)]
    pub token_rate_limits: BTreeMap<String, RateLimit>,
    /// When true a rejected request also takes a token, driving the bucket negative ("debt" mode).
    /// Token-bucket mode only.
    #[serde(default)]
    pub rejected_requests_spend_budget: bool,
    /// How every token's limit is enforced: token bucket (default), capped debt or sliding window.
    #[serde(default)]
    pub limiter_mode: LimiterMode,
    /// How 429 responses carry `Retry-After`.
    #[serde(default)]
    pub retry_after: RetryAfterFormat,
    /// Lifetime of tokens minted by the OIDC exchange, in seconds (default 900).
    #[serde(default = "default_cluster_token_ttl_secs")]
    pub cluster_token_ttl_secs: u64,
    /// Seed of the RNG behind fault rates, so a fault run can be replayed.
    #[serde(default)]
    pub fault_seed: u64,
    /// The vaults.
    #[serde(default)]
    pub vaults: Vec<VaultSpec>,
    /// Service-account tokens (ferrvault mode).
    #[serde(default)]
    pub service_account_tokens: Vec<ServiceAccountToken>,
    /// Org tokens (cloud mode).
    #[serde(default)]
    pub org_tokens: Vec<OrgToken>,
    /// Clusters allowed to use the OIDC exchange (cloud mode).
    #[serde(default)]
    pub oidc_clusters: Vec<OidcCluster>,
    /// Endpoints answered as if the server did not have them (an older FerrVault), e.g.
    /// `{ list: not_found, me: method_not_allowed }`. Switchable at runtime.
    #[serde(default)]
    pub unserved: BTreeMap<Endpoint, Unserved>,
    /// Serve HTTPS (and optionally require client certificates); plain HTTP when absent.
    /// Checked when the simulator starts ([`SimError::InvalidConfig`]).
    #[serde(default)]
    pub tls: Option<TlsSpec>,
}

/// The organisation vaults and tokens belong to when none is named.
pub const DEFAULT_ORG: &str = "acme";
/// The project vaults belong to when none is named.
pub const DEFAULT_PROJECT: &str = "default";
/// The environment vaults report when none is named.
pub const DEFAULT_ENVIRONMENT: &str = "production";
/// Minted cluster tokens live this long unless configured (the "~15 min" of the Go operator's docs).
pub const DEFAULT_CLUSTER_TOKEN_TTL: Duration = Duration::from_secs(900);

fn default_org() -> String {
    DEFAULT_ORG.to_owned()
}
fn default_project() -> String {
    DEFAULT_PROJECT.to_owned()
}
fn default_environment() -> String {
    DEFAULT_ENVIRONMENT.to_owned()
}
fn default_cluster_token_ttl_secs() -> u64 {
    DEFAULT_CLUSTER_TOKEN_TTL.as_secs()
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            rate_limit: RateLimit::default(),
            token_rate_limits: BTreeMap::new(),
            rejected_requests_spend_budget: false,
            limiter_mode: LimiterMode::TokenBucket,
            retry_after: RetryAfterFormat::Seconds,
            cluster_token_ttl_secs: default_cluster_token_ttl_secs(),
            fault_seed: 0,
            vaults: Vec::new(),
            service_account_tokens: Vec::new(),
            org_tokens: Vec::new(),
            oidc_clusters: Vec::new(),
            unserved: BTreeMap::new(),
            tls: None,
        }
    }
}

/// The configuration the CLI serves when given no `--config`.
pub const SAMPLE_CONFIG_YAML: &str = include_str!("sample.yaml");

impl SimConfig {
    /// Parses YAML (or JSON, which is YAML) and validates it.
    ///
    /// # Errors
    /// [`SimError::ParseConfig`] for bad syntax or unknown fields, [`SimError::InvalidConfig`] when
    /// [`SimConfig::validate`] fails.
    pub fn from_yaml(text: &str) -> Result<Self, SimError> {
        let config: Self = serde_norway::from_str(text).map_err(SimError::ParseConfig)?;
        config.validate()?;
        Ok(config)
    }

    /// The embedded sample configuration (`sample.yaml`).
    pub fn sample() -> Self {
        Self::from_yaml(SAMPLE_CONFIG_YAML).expect("embedded sample.yaml is valid (tested)")
    }

    /// Checks the cross-references the simulator relies on.
    ///
    /// # Errors
    /// [`SimError::InvalidConfig`] naming the first problem: a duplicate vault name, a token bound to
    /// an unknown vault, a duplicate token, an invalid rate limit.
    pub fn validate(&self) -> Result<(), SimError> {
        let invalid = |msg: String| Err(SimError::InvalidConfig(msg));
        let mut names = std::collections::BTreeSet::new();
        for vault in &self.vaults {
            if !names.insert(vault.name.as_str()) {
                return invalid(format!("vaults: duplicate vault name {:?}", vault.name));
            }
        }
        for sat in &self.service_account_tokens {
            if !names.contains(sat.vault.as_str()) {
                return invalid(format!("service_account_tokens: unknown vault {:?}", sat.vault));
            }
        }
        let tokens = self
            .service_account_tokens
            .iter()
            .map(|t| &t.token)
            .chain(self.org_tokens.iter().map(|t| &t.token));
        let mut seen = std::collections::BTreeSet::new();
        for token in tokens {
            if token.expose().is_empty() {
                return invalid("tokens: empty token".to_owned());
            }
            if !seen.insert(token.expose()) {
                return invalid(format!(
                    "tokens: duplicate token {}",
                    token_fingerprint(token.expose())
                ));
            }
        }
        self.rate_limit
            .validate()
            .map_err(|e| SimError::InvalidConfig(format!("rate_limit: {e}")))?;
        self.limiter_mode
            .validate()
            .map_err(|e| SimError::InvalidConfig(format!("limiter_mode: {e}")))?;
        for (key, limit) in &self.token_rate_limits {
            limit
                .validate()
                .map_err(|e| SimError::InvalidConfig(format!("token_rate_limits.{key}: {e}")))?;
        }
        Ok(())
    }

    /// The lifetime of minted cluster tokens.
    pub fn cluster_token_ttl_duration(&self) -> Duration {
        Duration::from_secs(self.cluster_token_ttl_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_should_be_eight_hex_chars_and_not_contain_the_token() {
        let fp = token_fingerprint("fvsat_secret");
        assert_eq!(fp.len(), 8);
        assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(fp, token_fingerprint("fvsat_secret2"));
    }

    #[test]
    fn sample_yaml_should_parse_validate_and_hold_both_modes() {
        let sample = SimConfig::sample();
        assert!(!sample.service_account_tokens.is_empty() && !sample.org_tokens.is_empty());
        assert!(!sample.oidc_clusters.is_empty());
        assert_eq!(sample.rate_limit, RateLimit::default());
    }

    #[test]
    fn from_yaml_should_refuse_unknown_fields_and_bad_limits() {
        assert!(matches!(
            SimConfig::from_yaml("rate_limt: {}"),
            Err(SimError::ParseConfig(_))
        ));
        let zero = "rate_limit: { per_second: 0, burst: 5 }";
        assert!(matches!(
            SimConfig::from_yaml(zero),
            Err(SimError::InvalidConfig(_))
        ));
        let empty_window = "limiter_mode: { type: sliding_window, window_seconds: 0 }";
        assert!(matches!(
            SimConfig::from_yaml(empty_window),
            Err(SimError::InvalidConfig(_))
        ));
        let duplicate = "vaults: [{ name: a }, { name: a }]";
        assert!(matches!(
            SimConfig::from_yaml(duplicate),
            Err(SimError::InvalidConfig(_))
        ));
    }

    #[test]
    fn secrets_should_accept_plain_and_versioned_values() {
        let yaml = "vaults: [{ name: a, secrets: { X: plain, Y: { value: v, version: 7 } } }]";
        let config = SimConfig::from_yaml(yaml).expect("valid");
        let secrets = &config.vaults[0].secrets;
        assert_eq!(secrets["X"], SecretSpec::Value(Redacted::new("plain")));
        assert_eq!(
            secrets["Y"],
            SecretSpec::Versioned {
                value: Redacted::new("v"),
                version: 7
            }
        );
    }
}
