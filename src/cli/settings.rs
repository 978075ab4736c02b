//! From flags to a checked configuration: every cross-flag rule of `run`, as pure functions of
//! the flags and the process environment, so each rule is unit-tested without a process.
//!
//! # Guarantees
//! - [`RunSettings::from_args`] either returns settings every later step accepts, or a
//!   [`ConfigError`] whose message names the flag, the value and the rule.
//! - `--reconcile-timeout` below the FerrVault client's longest call is refused (reference
//!   §5.1): a shorter deadline cancels healthy reveals, and 0 would disable the guardrail.
//! - The cluster identity is all or nothing: `--oidc-cluster-id` needs `--oidc-trusted-urls`
//!   and the reverse, and a plain `http://` trusted URL needs `--allow-insecure-http`; a trusted
//!   URL at an IP address the egress policy refuses needs `--ferrvault-allowed-cidrs`.
//! - `--ferrvault-allowed-cidrs` and `--ferrvault-denied-cidrs` hold CIDRs or IP addresses.
//! - Lease timings must meet client-go's rules and the write fence's: renew deadline + retry
//!   period ≤ lease duration, so writes stop with a retry period of margin before another
//!   replica may acquire the Lease (`Timings::validate`, docs/architecture.md).
//! - HTTP limits are positive, and every `--watch-namespace` is a namespace name (RFC 1123
//!   label); repeated names count once.
//! - The namespace write budget is a finite rate of at least 0 (0: unlimited) with a burst of at
//!   least 1.
//!
//! # Layout
//! Here: [`ProcessEnv`] and [`RunSettings::from_args`]; `settings/checks.rs`: the rule of each
//! group of flags; `settings/error.rs`: [`ConfigError`].

use std::time::Duration;

use controller_actors::{Shards, Timings};

pub(crate) use self::checks::check_reconcile_timeout;
use self::checks::{
    cluster_identity, http_limits, log_settings, metrics_cert, namespace_write_budget, watch_namespaces,
};
pub(crate) use self::error::ConfigError;
use super::{args::RunArgs, logging::LogSettings};
use crate::{
    admin::{BindAddress, limits::HttpLimits, secure::CertSource},
    ferrvault::{ClientConfig, EgressPolicy},
    reconcile::rules::{bounds::token_bucket::Rate, schedule::duration::format_go_duration},
};

/// Where the in-cluster namespace of the pod's ServiceAccount is mounted.
pub(crate) const IN_CLUSTER_NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// What `run` reads from its surroundings besides flags (passed in, so rules stay pure).
#[derive(Debug, Clone, Default)]
pub struct ProcessEnv {
    /// `$POD_NAME` (downward API), part of the leader-election identity.
    pub pod_name: Option<String>,
    /// `$POD_NAMESPACE` (downward API), the default Lease namespace.
    pub pod_namespace: Option<String>,
    /// Contents of [`IN_CLUSTER_NAMESPACE_FILE`], when it exists.
    pub in_cluster_namespace: Option<String>,
}

impl ProcessEnv {
    /// Reads the environment variables and the in-cluster namespace file.
    pub fn read() -> Self {
        let non_empty = |value: String| Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        Self {
            pod_name: std::env::var("POD_NAME").ok().and_then(non_empty),
            pod_namespace: std::env::var("POD_NAMESPACE").ok().and_then(non_empty),
            in_cluster_namespace: std::fs::read_to_string(IN_CLUSTER_NAMESPACE_FILE)
                .ok()
                .and_then(non_empty),
        }
    }
}

/// The checked configuration of `run`.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// `/metrics`, `None` when disabled (`--metrics-bind-address=0`).
    pub metrics_addr: Option<BindAddress>,
    /// `/healthz`, `/readyz`.
    pub probe_addr: BindAddress,
    /// `/debug/*`, `None` when disabled.
    pub admin_addr: Option<BindAddress>,
    /// `--hint-bind-address`; `None`: no hint endpoint.
    pub hint_addr: Option<BindAddress>,
    /// `--hint-secret-name`.
    pub hint_secret_name: String,
    /// `--metrics-secure`: where the serving certificate comes from (`None`: plain HTTP).
    pub metrics_cert: Option<CertSource>,
    /// `--http-*`: the limits of every HTTP server.
    pub http_limits: HttpLimits,
    /// Whether to compete for the Lease.
    pub leader_elect: bool,
    /// Lease namespace (resolved).
    pub lease_namespace: String,
    /// Lease name.
    pub lease_name: String,
    /// Lease timings (validated).
    pub timings: Timings,
    /// `--shards` (more than one only with leader election).
    pub shards: Shards,
    /// `--default-refresh-interval`.
    pub default_refresh_interval: Duration,
    /// `--watch-namespace` (empty: cluster-wide), without repeats.
    pub watch_namespaces: Vec<String>,
    /// `--stall-threshold`.
    pub stall_threshold: Duration,
    /// `--reconcile-timeout` (at least the FerrVault floor).
    pub reconcile_timeout: Duration,
    /// `--max-concurrent-reconciles`.
    pub max_concurrent_reconciles: usize,
    /// The FerrVault client's configuration (validated).
    pub ferrvault: ClientConfig,
    /// `--connection-probe-interval`.
    pub connection_probe_interval: Duration,
    /// `--require-credential-opt-in`.
    pub require_credential_opt_in: bool,
    /// `--shutdown-grace-period`.
    pub shutdown_grace: Duration,
    /// `--min-refresh-interval`.
    pub min_refresh_interval: Duration,
    /// `--namespace-write-qps`/`--namespace-write-burst`; `None`: unlimited.
    pub namespace_write_budget: Option<Rate>,
    /// `--log-*` and `--zap-*`, resolved.
    pub log: LogSettings,
    /// `--kubeconfig`.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// `$POD_NAME`, or `local` outside a pod; the leader identity adds a per-process uid.
    pub pod_name: String,
}

impl RunSettings {
    /// Resolves defaults that depend on the environment and checks every rule.
    ///
    /// # Errors
    /// The first rule broken, as a [`ConfigError`].
    pub fn from_args(args: RunArgs, env: &ProcessEnv) -> Result<Self, ConfigError> {
        let invalid = |flag: &'static str| move |source| ConfigError::Address { flag, source };
        let metrics_addr = BindAddress::parse_optional(&args.metrics_bind_address)
            .map_err(invalid("metrics-bind-address"))?;
        let probe_addr = BindAddress::parse(&args.health_probe_bind_address)
            .map_err(invalid("health-probe-bind-address"))?;
        let admin_addr = match args.admin_bind_address.trim() {
            "" => None,
            value => Some(BindAddress::parse(value).map_err(invalid("admin-bind-address"))?),
        };
        let hint_addr = match args.hint_bind_address.trim() {
            "" => None,
            value => Some(BindAddress::parse(value).map_err(invalid("hint-bind-address"))?),
        };
        let log = log_settings(&args);
        let http_limits = http_limits(&args)?;
        let metrics_cert = metrics_cert(&args)?;
        let watch_namespaces = watch_namespaces(&args.watch_namespace)?;
        let timings = Timings {
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        };
        timings.validate().map_err(ConfigError::LeaseTimings)?;
        if args.leader_elect_id.trim().is_empty() {
            return Err(ConfigError::EmptyLeaseName);
        }
        if args.shards > 1 && !args.leader_elect {
            return Err(ConfigError::ShardsWithoutLeaderElection(args.shards));
        }
        let shards = Shards::new(u32::from(args.shards)).map_err(ConfigError::Shards)?;
        let egress = EgressPolicy::from_flags(&args.ferrvault_allowed_cidrs, &args.ferrvault_denied_cidrs)
            .map_err(ConfigError::EgressCidrs)?;
        let cluster_identity = cluster_identity(&args)?;
        if let Some(identity) = &cluster_identity {
            identity
                .check_egress(&egress)
                .map_err(ConfigError::ClusterIdentity)?;
        }
        let ferrvault = ClientConfig {
            rate_per_second: args.ferrvault_rate,
            burst: args.ferrvault_burst,
            shards: u32::from(shards.count()),
            attempt_timeout: args
                .ferrvault_attempt_timeout
                .unwrap_or(ClientConfig::DEFAULT_ATTEMPT_TIMEOUT),
            allow_insecure_http: args.allow_insecure_http,
            cluster_identity,
            egress,
            ..ClientConfig::default()
        };
        ferrvault.validate().map_err(ConfigError::FerrVault)?;
        check_reconcile_timeout(args.reconcile_timeout, &ferrvault)?;
        if args.stall_threshold <= args.reconcile_timeout {
            return Err(ConfigError::StallThresholdTooShort {
                value: format_go_duration(args.stall_threshold),
                timeout: format_go_duration(args.reconcile_timeout),
            });
        }
        if args.max_concurrent_reconciles == 0 {
            return Err(ConfigError::NoWorkers);
        }
        for (flag, value) in [
            ("default-refresh-interval", args.default_refresh_interval),
            ("connection-probe-interval", args.connection_probe_interval),
        ] {
            if value.is_zero() {
                return Err(ConfigError::ZeroInterval(flag));
            }
        }
        let namespace_write_budget = namespace_write_budget(&args)?;
        let lease_namespace = args
            .leader_elect_namespace
            .filter(|ns| !ns.trim().is_empty())
            .or_else(|| env.pod_namespace.clone())
            .or_else(|| env.in_cluster_namespace.clone())
            .unwrap_or_else(|| "default".to_owned());
        Ok(Self {
            metrics_addr,
            probe_addr,
            admin_addr,
            hint_addr,
            hint_secret_name: args.hint_secret_name,
            metrics_cert,
            http_limits,
            leader_elect: args.leader_elect,
            lease_namespace,
            lease_name: args.leader_elect_id,
            timings,
            shards,
            default_refresh_interval: args.default_refresh_interval,
            watch_namespaces,
            stall_threshold: args.stall_threshold,
            reconcile_timeout: args.reconcile_timeout,
            max_concurrent_reconciles: args.max_concurrent_reconciles,
            ferrvault,
            connection_probe_interval: args.connection_probe_interval,
            require_credential_opt_in: args.require_credential_opt_in,
            shutdown_grace: args.shutdown_grace_period,
            min_refresh_interval: args.min_refresh_interval,
            namespace_write_budget,
            log,
            kubeconfig: args.kubeconfig,
            pod_name: env.pod_name.clone().unwrap_or_else(|| "local".to_owned()),
        })
    }
}

mod checks;
mod error;
#[cfg(test)]
mod tests;
