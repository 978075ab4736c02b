//! The rule of each group of `run` flags, as pure functions of the flags: the write budget, the
//! HTTP limits, the serving certificate, the watched namespaces, the cluster identity, logging
//! and the reconcile deadline. [`RunSettings::from_args`](super::RunSettings::from_args) applies
//! them in turn.

use std::time::Duration;

use super::ConfigError;
use crate::{
    admin::{limits::HttpLimits, secure::CertSource},
    cli::{
        args::RunArgs,
        logging::{LogFormat, LogSettings},
        zap::{ZapEncoder, ZapLevel},
    },
    ferrvault::{ClientConfig, ClusterIdentity, FerrVault},
    reconcile::rules::{bounds::token_bucket::Rate, schedule::duration::format_go_duration},
};

/// `--namespace-write-qps`/`--namespace-write-burst` as each namespace's rate; `None` (unlimited)
/// for a rate of 0.
///
/// # Errors
/// [`ConfigError::WriteBudget`] for a negative or non-finite rate, or a burst of 0 with a rate.
pub(super) fn namespace_write_budget(args: &RunArgs) -> Result<Option<Rate>, ConfigError> {
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
pub(super) fn http_limits(args: &RunArgs) -> Result<HttpLimits, ConfigError> {
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
pub(super) fn metrics_cert(args: &RunArgs) -> Result<Option<CertSource>, ConfigError> {
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
pub(super) fn watch_namespaces(given: &[String]) -> Result<Vec<String>, ConfigError> {
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
pub(super) fn cluster_identity(args: &RunArgs) -> Result<Option<ClusterIdentity>, ConfigError> {
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
pub(super) fn log_settings(args: &RunArgs) -> LogSettings {
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
