//! The state a running simulator shares between its requests, the `/_sim` paths and the Rust handle.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use tokio::time::Instant;

use super::{
    accounting::Accounting,
    config::{RetryAfterFormat, SimConfig, Unserved},
    faults::{Endpoint, FerrVaultFaults},
    identity::Tokens,
    rate_limit::{RateLimit, RateLimiter},
    vaults::VaultStore,
};

/// Everything the running simulator shares between requests and the Rust handle.
#[derive(Debug)]
pub struct SimState {
    /// Vaults and secrets.
    pub vaults: VaultStore,
    /// Accepted credentials and minted cluster tokens.
    pub tokens: Tokens,
    /// Per-token buckets.
    pub limiter: RateLimiter,
    /// Per-endpoint faults.
    pub faults: FerrVaultFaults,
    /// Per-token counters.
    pub accounting: Arc<Accounting>,
    /// How 429s carry `Retry-After`; switchable at runtime.
    pub retry_after: Mutex<RetryAfterFormat>,
    /// Endpoints answered as if the server lacked them; switchable at runtime.
    unserved: Mutex<BTreeMap<Endpoint, Unserved>>,
}

impl SimState {
    /// The state `config` describes (assumed validated).
    pub fn new(config: &SimConfig) -> Self {
        let tokens = Tokens::new(config);
        let overrides = config
            .token_rate_limits
            .iter()
            .map(|(key, limit)| (tokens.canonical_key(key), *limit));
        Self {
            vaults: VaultStore::new(config),
            limiter: RateLimiter::new(
                config.rate_limit,
                overrides.collect(),
                config.rejected_requests_spend_budget,
                config.limiter_mode,
            ),
            tokens,
            faults: FerrVaultFaults::new(config.fault_seed),
            accounting: Arc::new(Accounting::default()),
            retry_after: Mutex::new(config.retry_after),
            unserved: Mutex::new(config.unserved.clone()),
        }
    }

    /// How `endpoint` is answered when it is not served; `None` when it is.
    pub fn unserved(&self, endpoint: Endpoint) -> Option<Unserved> {
        self.lock_unserved().get(&endpoint).copied()
    }

    /// Stops (`Some`) or resumes (`None`) serving `endpoint`.
    pub fn set_unserved(&self, endpoint: Endpoint, how: Option<Unserved>) {
        let mut unserved = self.lock_unserved();
        match how {
            Some(how) => unserved.insert(endpoint, how),
            None => unserved.remove(&endpoint),
        };
    }

    fn lock_unserved(&self) -> std::sync::MutexGuard<'_, BTreeMap<Endpoint, Unserved>> {
        // A map of plain values: a panic elsewhere cannot leave it half-written.
        self.unserved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sets one token's bucket, addressed by label or fingerprint.
    pub fn set_token_limit(&self, label_or_fingerprint: &str, limit: RateLimit) {
        let key = self.tokens.canonical_key(label_or_fingerprint);
        self.limiter.set_token_limit(&key, limit, Instant::now());
    }

    /// How 429s carry `Retry-After` now.
    pub fn retry_after_format(&self) -> RetryAfterFormat {
        *self
            .retry_after
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
