//! What the process decides for the reconcilers: the `run` flags they read, and the names of the
//! two controllers (work-queue keys, metric labels, watch names).

use std::time::Duration;

use super::{
    rules::{
        bounds::token_bucket::Rate, rollout::ROLLOUT_FLOOR,
        schedule::requeue::DEFAULT_CONNECTION_PROBE_INTERVAL,
    },
    write::write_budget,
};
use crate::ferrvault::ClientConfig;

/// Controller name of the FerrVaultSecret reconciler (keys, metric labels).
pub const SECRET_CONTROLLER: &str = "ferrvaultsecret";
/// Controller name of the FerrVaultConnection reconciler (keys, metric labels).
pub(crate) const CONNECTION_CONTROLLER: &str = "ferrvaultconnection";

/// What the `run` flags decide for the reconcilers.
#[derive(Clone, Debug)]
pub struct OperatorSettings {
    /// `--default-refresh-interval` (1h): used only when `spec.refreshInterval` is empty, which
    /// needs the CRD default bypassed; an invalid value is reported, never replaced by this.
    pub default_refresh_interval: Duration,
    /// `--connection-probe-interval` (10m): how often a connection is re-probed.
    pub connection_probe_interval: Duration,
    /// `--watch-namespace`: watch and reconcile only these namespaces; empty is cluster-wide.
    pub watch_namespaces: Vec<String>,
    /// Pacing, timeouts and retries of the FerrVault client (rate and burst per credential).
    pub ferrvault: ClientConfig,
    /// The operator's own namespace (the Lease's): where the content-hash key Secret lives.
    pub content_hash_key_namespace: String,
    /// The least time between two restarts of one workload ([`ROLLOUT_FLOOR`]).
    pub rollout_floor: Duration,
    /// `--min-refresh-interval` ([`DEFAULT_MIN_REFRESH_INTERVAL`]): the floor under every
    /// interval a tenant sets (see [`duration_floor`](super::rules::schedule::duration_floor)).
    pub min_refresh_interval: Duration,
    /// `--namespace-write-qps`/`--namespace-write-burst`: each namespace's write budget (see
    /// [`write_budget`]); `None` is unlimited.
    pub namespace_write_budget: Option<Rate>,
    /// `--require-credential-opt-in`: a connection uses a Secret as its token or CA bundle only
    /// when the Secret opted in ([`credential_opt_in`](super::rules::access::credential_opt_in)).
    pub require_credential_opt_in: bool,
}

/// `--min-refresh-interval` default.
pub const DEFAULT_MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(30);

impl Default for OperatorSettings {
    fn default() -> Self {
        Self {
            default_refresh_interval: Duration::from_secs(3600),
            connection_probe_interval: DEFAULT_CONNECTION_PROBE_INTERVAL,
            watch_namespaces: Vec::new(),
            ferrvault: ClientConfig::default(),
            content_hash_key_namespace: "default".to_owned(),
            rollout_floor: ROLLOUT_FLOOR,
            min_refresh_interval: DEFAULT_MIN_REFRESH_INTERVAL,
            namespace_write_budget: Some(Rate {
                per_second: write_budget::DEFAULT_QPS,
                burst: f64::from(write_budget::DEFAULT_BURST),
            }),
            require_credential_opt_in: false,
        }
    }
}
