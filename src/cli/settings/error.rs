//! [`ConfigError`]: a flag value `run` refuses, named with the flag and the rule it breaks.

use controller_actors::{ShardsError, TimingsError};

use crate::admin::AddressError;

/// A flag value `run` refuses. The message names the flag and the rule broken.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A bind address that is neither `:port`, `ip:port` nor `localhost:port`.
    #[error("invalid --{flag}: {source}")]
    Address {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        #[source]
        source: AddressError,
    },
    /// The reconcile deadline would cancel healthy FerrVault calls.
    #[error(
        "invalid --reconcile-timeout: {value} is below {floor}, the longest one FerrVault API call can \
         legitimately take with its retries; 0 would disable the guardrail and anything shorter cancels \
         healthy reveals"
    )]
    ReconcileTimeoutBelowFloor {
        /// The value given, Go syntax.
        value: String,
        /// The floor, Go syntax.
        floor: String,
    },
    /// The stall threshold would fail liveness while a healthy reconcile still runs.
    #[error(
        "invalid --stall-threshold: {value} must be longer than --reconcile-timeout ({timeout}), or \
         liveness fails while a reconcile is still allowed to run"
    )]
    StallThresholdTooShort {
        /// The value given, Go syntax.
        value: String,
        /// `--reconcile-timeout`, Go syntax.
        timeout: String,
    },
    /// Lease timings that break client-go's constraints or leave the write fence no margin.
    #[error(
        "invalid --leader-elect-lease-duration/--leader-elect-renew-deadline/--leader-elect-retry-period: \
         {0}"
    )]
    LeaseTimings(#[source] TimingsError),
    /// `--ferrvault-rate` or `--ferrvault-burst` out of range.
    #[error("invalid --ferrvault-rate/--ferrvault-burst: {0}")]
    FerrVault(String),
    /// No worker would ever run.
    #[error("invalid --max-concurrent-reconciles: must be at least 1")]
    NoWorkers,
    /// A refresh or probe interval of zero would spin.
    #[error("invalid --{0}: must be positive")]
    ZeroInterval(&'static str),
    /// `--shards` out of range (the flag's parser already bounds it; the env var too).
    #[error("invalid --shards: {0}")]
    Shards(#[source] ShardsError),
    /// `--shards` above 1 without `--leader-elect`: every replica would reconcile everything.
    #[error("invalid --shards: {0} shards need --leader-elect (each shard is a Lease)")]
    ShardsWithoutLeaderElection(u16),
    /// An empty Lease name.
    #[error("invalid --leader-elect-id: must not be empty")]
    EmptyLeaseName,
    /// Cluster identity settings that are incomplete or invalid.
    #[error("invalid --oidc-cluster-id/--oidc-token-path/--oidc-trusted-urls: {0}")]
    ClusterIdentity(String),
    /// An HTTP limit that would refuse every client.
    #[error("invalid --{0}: must be positive")]
    HttpLimit(&'static str),
    /// A `--watch-namespace` entry that cannot be a namespace.
    #[error(
        "invalid --watch-namespace: {0:?} is not a namespace name (lower-case letters, digits and '-', at most 63)"
    )]
    WatchNamespace(String),
    /// `--namespace-write-qps` or `--namespace-write-burst` out of range.
    #[error("invalid --namespace-write-qps/--namespace-write-burst: {0}")]
    WriteBudget(String),
    /// A `--ferrvault-allowed-cidrs` or `--ferrvault-denied-cidrs` entry that is not a CIDR.
    #[error("invalid {0}")]
    EgressCidrs(String),
    /// `--metrics-cert-name` or `--metrics-cert-key` empty with a certificate directory.
    #[error("invalid --metrics-cert-name/--metrics-cert-key: must name files in --metrics-cert-path")]
    MetricsCertFiles,
}
