//! Who is calling: bearer tokens resolved to service accounts, org tokens or minted cluster tokens,
//! and the OIDC exchange that mints the latter.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use tokio::time::Instant;

use super::config::{OidcCluster, Redacted, Role, ServiceAccountToken, SimConfig, token_fingerprint};

/// The prefix of tokens the OIDC exchange mints.
pub const CLUSTER_TOKEN_PREFIX: &str = "ffclust_";

/// A resolved caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// No `Authorization: Bearer` header.
    Anonymous,
    /// A bearer the simulator does not know (or a token that expired).
    Unknown {
        /// Fingerprint of the presented token (label of an expired labelled one).
        key: String,
    },
    /// A service-account token (ferrvault mode).
    ServiceAccount {
        /// Label or fingerprint.
        key: String,
        /// The one vault it may read.
        vault: String,
        /// What it may do there.
        role: Role,
        /// Its `token_id` in `me`.
        token_id: String,
        /// Its expiry, if it has one (it is not past: an expired token is [`Caller::Unknown`]).
        expires_at: Option<jiff::Timestamp>,
    },
    /// An org token (cloud mode).
    Org {
        /// Label or fingerprint.
        key: String,
        /// The org whose vaults it may read.
        org: String,
    },
    /// A minted cluster token (cloud mode).
    Cluster {
        /// Fingerprint of the minted token.
        key: String,
        /// The org whose vaults it may read.
        org: String,
        /// Namespaces allowed in `X-FerrVault-Namespace`; empty means any.
        namespaces: Vec<String>,
    },
}

impl Caller {
    /// The accounting and rate-limit key.
    pub fn key(&self) -> &str {
        match self {
            Self::Anonymous => super::accounting::ANONYMOUS,
            Self::Unknown { key }
            | Self::ServiceAccount { key, .. }
            | Self::Org { key, .. }
            | Self::Cluster { key, .. } => key,
        }
    }
}

/// A token minted by the OIDC exchange.
#[derive(Debug)]
struct Minted {
    cluster: OidcCluster,
    /// Monotonic expiry, on tokio's clock.
    expires: Instant,
}

/// The result of a successful exchange.
pub struct MintedToken {
    /// The new bearer (`ffclust_…`).
    pub access_token: String,
    /// Its wall-clock expiry, as sent in `expires_at`.
    pub expires_at: jiff::Timestamp,
}

/// What the simulator knows of a service-account token besides the token itself.
#[derive(Debug)]
struct ServiceAccount {
    key: String,
    vault: String,
    role: Role,
    token_id: String,
    expires_at: Option<jiff::Timestamp>,
}

impl ServiceAccount {
    fn new(spec: &ServiceAccountToken) -> Self {
        let fingerprint = token_fingerprint(spec.token.expose());
        Self {
            key: spec.label.clone().unwrap_or_else(|| fingerprint.clone()),
            vault: spec.vault.clone(),
            role: spec.role,
            token_id: spec
                .token_id
                .clone()
                .unwrap_or_else(|| format!("sat-{fingerprint}")),
            expires_at: spec.expires_at,
        }
    }

    /// The caller this token is at wall time `now`.
    fn caller(&self, now: jiff::Timestamp) -> Caller {
        if self.expires_at.is_some_and(|at| at <= now) {
            return Caller::Unknown {
                key: self.key.clone(),
            };
        }
        Caller::ServiceAccount {
            key: self.key.clone(),
            vault: self.vault.clone(),
            role: self.role,
            token_id: self.token_id.clone(),
            expires_at: self.expires_at,
        }
    }
}

/// Every credential the simulator accepts.
#[derive(Debug)]
pub struct Tokens {
    /// token → what it is. Keys are [`Redacted`] so `Debug` never prints a token.
    service_accounts: HashMap<Redacted, ServiceAccount>,
    /// token → (key, org).
    orgs: HashMap<Redacted, (String, String)>,
    clusters: Vec<OidcCluster>,
    /// fingerprint → label, for labelled tokens: settings addressed by fingerprint reach the label.
    labels_by_fingerprint: HashMap<String, String>,
    /// minted token → its cluster and expiry.
    minted: Mutex<HashMap<Redacted, Minted>>,
    ttl: Duration,
}

impl Tokens {
    /// The credentials of `config`.
    pub fn new(config: &SimConfig) -> Self {
        let key =
            |token: &str, label: &Option<String>| label.clone().unwrap_or_else(|| token_fingerprint(token));
        Self {
            service_accounts: config
                .service_account_tokens
                .iter()
                .map(|t| (t.token.clone(), ServiceAccount::new(t)))
                .collect(),
            orgs: config
                .org_tokens
                .iter()
                .map(|t| (t.token.clone(), (key(t.token.expose(), &t.label), t.org.clone())))
                .collect(),
            clusters: config.oidc_clusters.clone(),
            labels_by_fingerprint: config
                .service_account_tokens
                .iter()
                .map(|t| (&t.token, &t.label))
                .chain(config.org_tokens.iter().map(|t| (&t.token, &t.label)))
                .filter_map(|(token, label)| Some((token_fingerprint(token.expose()), label.clone()?)))
                .collect(),
            minted: Mutex::new(HashMap::new()),
            ttl: config.cluster_token_ttl_duration(),
        }
    }

    /// Resolves the bearer of a request at `now` (minted tokens expire on tokio's clock,
    /// service-account tokens at their wall-clock `expires_at`).
    pub fn identify(&self, bearer: Option<&str>, now: Instant) -> Caller {
        let Some(token) = bearer else {
            return Caller::Anonymous;
        };
        if let Some(account) = self.service_accounts.get(token) {
            return account.caller(jiff::Timestamp::now());
        }
        if let Some((key, org)) = self.orgs.get(token) {
            return Caller::Org {
                key: key.clone(),
                org: org.clone(),
            };
        }
        let key = token_fingerprint(token);
        match self.lock_minted().get(token) {
            Some(minted) if minted.expires > now => Caller::Cluster {
                key,
                org: minted.cluster.org.clone(),
                namespaces: minted.cluster.namespaces.clone(),
            },
            Some(_) | None => Caller::Unknown { key },
        }
    }

    /// The key a token is known by in stats and rate limits, given its label or fingerprint: a
    /// labelled token's fingerprint resolves to its label; anything else is already canonical.
    pub fn canonical_key(&self, label_or_fingerprint: &str) -> String {
        let label = self.labels_by_fingerprint.get(label_or_fingerprint);
        label.map_or(label_or_fingerprint, String::as_str).to_owned()
    }

    /// Mints a cluster token when `(cluster_id, jwt)` is configured.
    pub fn exchange(&self, cluster_id: &str, jwt: &str, now: Instant) -> Option<MintedToken> {
        let cluster = self
            .clusters
            .iter()
            .find(|c| c.cluster_id == cluster_id && c.jwt.expose() == jwt)?;
        let access_token = format!("{CLUSTER_TOKEN_PREFIX}{}", uuid::Uuid::new_v4().simple());
        let ttl_secs = i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX);
        let expires_at = jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::from_secs(ttl_secs))
            .unwrap_or(jiff::Timestamp::MAX);
        let minted = Minted {
            cluster: cluster.clone(),
            expires: now + self.ttl,
        };
        self.lock_minted()
            .insert(Redacted::new(access_token.clone()), minted);
        Some(MintedToken {
            access_token,
            expires_at,
        })
    }

    /// Expires every minted token now (tests of the client's refresh path, without waiting a TTL).
    pub fn expire_minted(&self) {
        self.lock_minted().clear();
    }

    fn lock_minted(&self) -> std::sync::MutexGuard<'_, HashMap<Redacted, Minted>> {
        // The map holds plain data; a panic elsewhere cannot leave it half-updated.
        self.minted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SimConfig {
        SimConfig::default()
            .vault("prod", [("A", "1")])
            .service_account_token("fvsat_prod", "prod")
            .token_label("fvsat_prod", "prod-sat")
            .org_token("fft_org", "acme")
            .oidc_cluster("c-1", "jwt-1", "acme")
            .cluster_token_ttl(Duration::from_secs(60))
    }

    #[test]
    fn identify_should_resolve_each_kind_of_token_by_label_or_fingerprint() {
        let tokens = Tokens::new(&config());
        let now = Instant::now();
        assert_eq!(tokens.identify(None, now), Caller::Anonymous);
        assert_eq!(
            tokens.identify(Some("fvsat_prod"), now),
            Caller::ServiceAccount {
                key: "prod-sat".into(),
                vault: "prod".into(),
                role: Role::Viewer,
                token_id: format!("sat-{}", token_fingerprint("fvsat_prod")),
                expires_at: None,
            }
        );
        assert_eq!(
            tokens.identify(Some("fft_org"), now),
            Caller::Org {
                key: token_fingerprint("fft_org"),
                org: "acme".into()
            }
        );
        assert_eq!(
            tokens.identify(Some("nope"), now),
            Caller::Unknown {
                key: token_fingerprint("nope")
            }
        );
    }

    #[test]
    fn exchange_should_mint_only_for_the_configured_pair_and_tokens_should_expire_after_the_ttl() {
        let tokens = Tokens::new(&config());
        let now = Instant::now();
        assert!(tokens.exchange("c-1", "other-jwt", now).is_none());
        assert!(tokens.exchange("c-2", "jwt-1", now).is_none());
        let minted = tokens
            .exchange("c-1", "jwt-1", now)
            .expect("configured pair should mint");
        assert!(minted.access_token.starts_with(CLUSTER_TOKEN_PREFIX));
        assert!(matches!(
            tokens.identify(Some(&minted.access_token), now),
            Caller::Cluster { .. }
        ));
        let expired = now + Duration::from_secs(60);
        assert!(matches!(
            tokens.identify(Some(&minted.access_token), expired),
            Caller::Unknown { .. }
        ));
    }

    #[test]
    fn a_service_account_token_should_be_unknown_once_it_expired() {
        let past = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1);
        let tokens = Tokens::new(&config().token_expires_at("fvsat_prod", past));
        assert_eq!(
            tokens.identify(Some("fvsat_prod"), Instant::now()),
            Caller::Unknown {
                key: "prod-sat".into()
            }
        );
    }

    #[test]
    fn canonical_key_should_resolve_a_labelled_tokens_fingerprint_to_its_label() {
        let tokens = Tokens::new(&config());
        assert_eq!(tokens.canonical_key(&token_fingerprint("fvsat_prod")), "prod-sat");
        assert_eq!(tokens.canonical_key("prod-sat"), "prod-sat");
        let unlabelled = token_fingerprint("fft_org");
        assert_eq!(tokens.canonical_key(&unlabelled), unlabelled);
    }
}
