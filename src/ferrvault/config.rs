//! Client configuration.

use std::time::Duration;

use super::{ClusterIdentity, EgressPolicy, RetryPolicy};

/// How the FerrVault client paces, times out and retries.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientConfig {
    /// Requests per second allowed per credential: the server's budget. Default 1.0 (FerrVault
    /// allows 60 requests per minute per token).
    pub rate_per_second: f64,
    /// The server's burst per credential. Default 5. The client keeps one of these tokens in
    /// reserve (see `limiter::HEADROOM_TOKENS`).
    pub burst: u32,
    /// How many shards spend a shared credential's budget (`--shards`; default 1: none is
    /// shared). Above 1, a credential marked
    /// [`shared_across_shards`](crate::ferrvault::Credential::shared_across_shards) is paced at
    /// this replica's share of `rate_per_second` and `burst` only (`share.rs`).
    pub shards: u32,
    /// Timeout of one HTTP attempt. Default 10s, like the Go operator.
    pub attempt_timeout: Duration,
    /// Retries for 5xx and transport failures.
    pub retry: RetryPolicy,
    /// How long a new reveal waits for concurrent reveals of the same vault to join it before
    /// asking for a token. Default 25ms: small next to any reconcile, long enough for callers
    /// woken by the same event to meet.
    pub coalesce_window: Duration,
    /// Largest reveal answer read. Default 4 MiB (issue 34; it was 8 MiB): a Secret holds at
    /// most 1 MiB, about 1.33 MiB before a base64 decode, which leaves three times that for JSON
    /// escapes and the per-key overhead of the wire format; and one buffer of this size per
    /// reveal in flight (`--max-concurrent-reconciles`, 4 by default) stays well within the
    /// 32 MiB an attack may add to the operator's memory. A longer answer is refused as soon as
    /// it is announced or read ([`FerrVaultError::ResponseTooLarge`]). Error, probe and
    /// token-exchange answers are read to
    /// [`MAX_SMALL_BODY_BYTES`](crate::ferrvault::MAX_SMALL_BODY_BYTES) whatever this is.
    ///
    /// [`FerrVaultError::ResponseTooLarge`]: crate::ferrvault::FerrVaultError::ResponseTooLarge
    pub max_body_bytes: usize,
    /// Whether plain `http://` FerrVault URLs may be used (`--allow-insecure-http`). Default
    /// false: such a URL is refused before anything is sent.
    pub allow_insecure_http: bool,
    /// The operator's cluster identity (`--oidc-*`); `None` (the default) disables it.
    pub cluster_identity: Option<ClusterIdentity>,
    /// Which addresses a FerrVault URL may lead to (`--ferrvault-allowed-cidrs`,
    /// `--ferrvault-denied-cidrs`, and what `run` knows of its network position). The default
    /// refuses loopback, link-local, cloud metadata and the other built-in denials: a test
    /// against a simulator on 127.0.0.1 allows that address explicitly.
    pub egress: EgressPolicy,
}

impl ClientConfig {
    /// FerrVault's per-token budget: 60 requests per minute.
    pub const DEFAULT_RATE_PER_SECOND: f64 = 1.0;
    /// FerrVault's per-token burst.
    pub const DEFAULT_BURST: u32 = 5;
    /// Per-attempt timeout of the Go operator (`RequestTimeout`).
    pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
    /// See [`ClientConfig::coalesce_window`].
    pub const DEFAULT_COALESCE_WINDOW: Duration = Duration::from_millis(25);

    /// Checks the values a user can set.
    ///
    /// # Errors
    /// A message naming the bad field, or a trusted URL of the cluster identity whose IP-literal
    /// host the egress policy refuses.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate_per_second.is_finite() && self.rate_per_second > 0.0) {
            return Err(format!(
                "rate_per_second must be positive, got {}",
                self.rate_per_second
            ));
        }
        if self.burst == 0 {
            return Err("burst must be at least 1".into());
        }
        if self.shards == 0 {
            return Err("shards must be at least 1".into());
        }
        if self.attempt_timeout.is_zero() {
            return Err("attempt_timeout must be positive".into());
        }
        if self.retry.max_attempts == 0 {
            return Err("retry.max_attempts must be at least 1".into());
        }
        if !self.allow_insecure_http
            && self
                .cluster_identity
                .as_ref()
                .is_some_and(ClusterIdentity::trusts_plain_http)
        {
            return Err("cluster_identity trusts a plain http:// URL but allow_insecure_http is off".into());
        }
        if let Some(identity) = &self.cluster_identity {
            identity.check_egress(&self.egress)?;
        }
        Ok(())
    }
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            rate_per_second: Self::DEFAULT_RATE_PER_SECOND,
            burst: Self::DEFAULT_BURST,
            shards: 1,
            attempt_timeout: Self::DEFAULT_ATTEMPT_TIMEOUT,
            retry: RetryPolicy::default(),
            coalesce_window: Self::DEFAULT_COALESCE_WINDOW,
            max_body_bytes: 4 << 20,
            allow_insecure_http: false,
            cluster_identity: None,
            egress: EgressPolicy::default(),
        }
    }
}
