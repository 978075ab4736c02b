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

use std::time::Duration;

use controller_actors::{Timings, TimingsError};

use super::{
    args::RunArgs,
    logging::{LogFormat, LogSettings},
    zap::{ZapEncoder, ZapLevel},
};
use crate::{
    admin::{AddressError, BindAddress, limits::HttpLimits, secure::CertSource},
    ferrvault::{ClientConfig, ClusterIdentity, EgressPolicy, FerrVault},
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

/// The checked configuration of `run`.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// `/metrics`, `None` when disabled (`--metrics-bind-address=0`).
    pub metrics_addr: Option<BindAddress>,
    /// `/healthz`, `/readyz`.
    pub probe_addr: BindAddress,
    /// `/debug/*`, `None` when disabled.
    pub admin_addr: Option<BindAddress>,
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
            metrics_cert,
            http_limits,
            leader_elect: args.leader_elect,
            lease_namespace,
            lease_name: args.leader_elect_id,
            timings,
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

/// `--namespace-write-qps`/`--namespace-write-burst` as each namespace's rate; `None` (unlimited)
/// for a rate of 0.
///
/// # Errors
/// [`ConfigError::WriteBudget`] for a negative or non-finite rate, or a burst of 0 with a rate.
fn namespace_write_budget(args: &RunArgs) -> Result<Option<Rate>, ConfigError> {
    let (qps, burst) = (args.namespace_write_qps, args.namespace_write_burst);
    if !qps.is_finite() || qps < 0.0 {
        return Err(ConfigError::WriteBudget(format!(
            "the rate must be a number of at least 0 (0 = unlimited), got {qps}"
        )));
    }
    if qps == 0.0 {
        return Ok(None);
    }
    if burst == 0 {
        return Err(ConfigError::WriteBudget(
            "the burst must be at least 1 (no write could ever be made)".into(),
        ));
    }
    Ok(Some(Rate {
        per_second: qps,
        burst: f64::from(burst),
    }))
}

/// `--http-*`, each positive.
///
/// # Errors
/// [`ConfigError::HttpLimit`] naming the flag.
fn http_limits(args: &RunArgs) -> Result<HttpLimits, ConfigError> {
    for (flag, zero) in [
        (
            "http-read-header-timeout",
            args.http_read_header_timeout.is_zero(),
        ),
        ("http-idle-timeout", args.http_idle_timeout.is_zero()),
        ("http-max-connections", args.http_max_connections == 0),
    ] {
        if zero {
            return Err(ConfigError::HttpLimit(flag));
        }
    }
    Ok(HttpLimits {
        header_read_timeout: args.http_read_header_timeout,
        idle_timeout: args.http_idle_timeout,
        max_connections: args.http_max_connections,
    })
}

/// The serving certificate of `--metrics-secure`: files in `--metrics-cert-path`, else
/// self-signed; `None` without `--metrics-secure`.
///
/// # Errors
/// [`ConfigError::MetricsCertFiles`] for an empty file name with a directory.
fn metrics_cert(args: &RunArgs) -> Result<Option<CertSource>, ConfigError> {
    if !args.metrics_secure {
        return Ok(None);
    }
    let dir = args.metrics_cert_path.trim();
    if dir.is_empty() {
        return Ok(Some(CertSource::SelfSigned));
    }
    let (cert, key) = (args.metrics_cert_name.trim(), args.metrics_cert_key.trim());
    if cert.is_empty() || key.is_empty() {
        return Err(ConfigError::MetricsCertFiles);
    }
    let dir = std::path::Path::new(dir);
    Ok(Some(CertSource::Files {
        cert: dir.join(cert),
        key: dir.join(key),
    }))
}

/// `--watch-namespace` entries trimmed, empty ones dropped, repeats counted once, each a
/// namespace name (an RFC 1123 label, as the API server requires).
///
/// # Errors
/// [`ConfigError::WatchNamespace`] naming the first entry that cannot be a namespace.
fn watch_namespaces(given: &[String]) -> Result<Vec<String>, ConfigError> {
    let mut namespaces: Vec<String> = Vec::new();
    for name in given
        .iter()
        .map(|name| name.trim())
        .filter(|name| !name.is_empty())
    {
        let label = name.len() <= 63
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !name.starts_with('-')
            && !name.ends_with('-');
        if !label {
            return Err(ConfigError::WatchNamespace(name.to_owned()));
        }
        if !namespaces.iter().any(|known| known == name) {
            namespaces.push(name.to_owned());
        }
    }
    Ok(namespaces)
}

/// The operator's cluster identity, when `--oidc-cluster-id` is set.
///
/// # Errors
/// [`ConfigError::ClusterIdentity`] when only one of the cluster ID and the trusted URLs is
/// given, or [`ClusterIdentity::new`] refuses them.
fn cluster_identity(args: &RunArgs) -> Result<Option<ClusterIdentity>, ConfigError> {
    let cluster_id = args
        .oidc_cluster_id
        .as_deref()
        .map(str::trim)
        .filter(|id| !id.is_empty());
    let urls: Vec<String> = args
        .oidc_trusted_urls
        .iter()
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty())
        .collect();
    match (cluster_id, urls.is_empty()) {
        (None, true) => Ok(None),
        (None, false) => Err(ConfigError::ClusterIdentity(
            "--oidc-trusted-urls needs --oidc-cluster-id".into(),
        )),
        (Some(_), true) => Err(ConfigError::ClusterIdentity(
            "--oidc-cluster-id needs at least one --oidc-trusted-urls: the cluster identity is only sent there".into(),
        )),
        (Some(id), false) => ClusterIdentity::new(
            id,
            args.oidc_token_path.clone(),
            &urls,
            args.allow_insecure_http,
        )
        .map(Some)
        .map_err(ConfigError::ClusterIdentity),
    }
}

/// Logging from `--log-level`/`--log-format` and controller-runtime's zap flags: a zap flag
/// given wins, and `--zap-devel` means console lines at debug level unless a zap flag says
/// otherwise (controller-runtime's development defaults).
fn log_settings(args: &RunArgs) -> LogSettings {
    let filter = match (args.zap_log_level, args.zap_devel) {
        (Some(level), _) => level.tracing_filter().to_owned(),
        (None, true) => "debug".to_owned(),
        // zap's names and verbosities (the Go chart's `logLevel`) mean the same here.
        (None, false) => ZapLevel::parse(&args.log_level).map_or_else(
            |_| args.log_level.clone(),
            |level| level.tracing_filter().to_owned(),
        ),
    };
    let format = match (args.zap_encoder, args.zap_devel) {
        (Some(ZapEncoder::Json), _) => LogFormat::Json,
        (Some(ZapEncoder::Console), _) | (None, true) => LogFormat::Text,
        (None, false) => args.log_format,
    };
    LogSettings {
        filter,
        format,
        time: args.zap_time_encoding.unwrap_or_default(),
    }
}

/// Refuses a reconcile deadline below the longest legitimate FerrVault call.
///
/// # Errors
/// [`ConfigError::ReconcileTimeoutBelowFloor`] with both values in Go syntax.
pub(crate) fn check_reconcile_timeout(
    timeout: Duration,
    ferrvault: &ClientConfig,
) -> Result<(), ConfigError> {
    let floor = FerrVault::new(ferrvault.clone()).longest_call();
    if timeout < floor {
        return Err(ConfigError::ReconcileTimeoutBelowFloor {
            value: format_go_duration(timeout),
            floor: format_go_duration(floor),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
