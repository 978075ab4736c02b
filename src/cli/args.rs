//! `ferrvault-operator run`'s flags: ours (`RUN_FLAGS` in `tests/chart/main.rs` is held equal to
//! this list by a test) and every flag of the Go operator's `cmd/main.go`, zap's included
//! (reference §5.1), so its Deployment's command line starts this binary unchanged.
//!
//! Every flag can also come from the environment variable `FERRVAULT_<FLAG_IN_UPPER_SNAKE>`
//! (`--reconcile-timeout` ↔ `FERRVAULT_RECONCILE_TIMEOUT`); a flag on the command line wins.
//! Durations use Go syntax (`90s`, `1h30m`), parsed by
//! [`parse_go_duration`](crate::reconcile::rules::schedule::duration::parse_go_duration), so the
//! chart's values mean the same here as in the Go operator. Cross-flag rules are checked by
//! [`super::settings::RunSettings::from_args`], not here.
//!
//! Go's `flag` syntax is accepted besides clap's: `-flag` is rewritten to `--flag` before clap
//! reads the command line ([`go_flag_syntax`]), and boolean flags take `--flag`, `--flag=true`
//! or `--flag=false` (any `strconv.ParseBool` spelling).

use std::{ffi::OsString, path::PathBuf, time::Duration};

use super::{
    logging::LogFormat,
    zap::{TimeEncoding, ZapEncoder, ZapLevel, go_bool},
};
use crate::{
    ferrvault::DEFAULT_TOKEN_PATH,
    reconcile::{rules::schedule::duration::parse_go_duration, write_budget},
};

/// Flags of `ferrvault-operator run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Where `/metrics` listens (`:8080` = every interface, IPv6 and IPv4; `0` = no metrics).
    #[arg(long, env = "FERRVAULT_METRICS_BIND_ADDRESS", default_value = ":8080")]
    pub metrics_bind_address: String,
    /// Serve `/metrics` over HTTPS, every scrape authenticated (TokenReview) and authorized
    /// (SubjectAccessReview: `get` on the path, e.g. the chart's metrics-reader ClusterRole)
    /// (`--metrics-secure[=true|false]`).
    #[arg(long, env = "FERRVAULT_METRICS_SECURE", action = clap::ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool)]
    pub metrics_secure: bool,
    /// Directory holding the metrics serving certificate and key (re-read when they change);
    /// empty: a self-signed certificate generated at start.
    #[arg(long, env = "FERRVAULT_METRICS_CERT_PATH", default_value = "")]
    pub metrics_cert_path: String,
    /// File name of the metrics serving certificate in --metrics-cert-path.
    #[arg(long, env = "FERRVAULT_METRICS_CERT_NAME", default_value = "tls.crt")]
    pub metrics_cert_name: String,
    /// File name of the metrics serving key in --metrics-cert-path.
    #[arg(long, env = "FERRVAULT_METRICS_CERT_KEY", default_value = "tls.key")]
    pub metrics_cert_key: String,
    /// Where `/healthz` and `/readyz` listen.
    #[arg(long, env = "FERRVAULT_HEALTH_PROBE_BIND_ADDRESS", default_value = ":8081")]
    pub health_probe_bind_address: String,
    /// Where `/debug/actors` and `/debug/queue` listen; an empty value disables them.
    #[arg(long, env = "FERRVAULT_ADMIN_BIND_ADDRESS", default_value = "127.0.0.1:8082")]
    pub admin_bind_address: String,
    /// Where `POST /hooks/ferrvault` (signed change hints, docs/change-hints.md) listens; empty
    /// (the default): no hint endpoint.
    #[arg(long, env = "FERRVAULT_HINT_BIND_ADDRESS", default_value = "")]
    pub hint_bind_address: String,
    /// The Secret in the operator's namespace whose `key` (at least 16 bytes) signs change hints.
    #[arg(
        long,
        env = "FERRVAULT_HINT_SECRET_NAME",
        default_value = "ferrvault-operator-hint-key"
    )]
    pub hint_secret_name: String,
    /// Compete for a Lease so that only one replica reconciles (`--leader-elect[=true|false]`).
    #[arg(long, env = "FERRVAULT_LEADER_ELECT", action = clap::ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool)]
    pub leader_elect: bool,
    /// Name of the Lease.
    #[arg(
        long,
        env = "FERRVAULT_LEADER_ELECT_ID",
        default_value = "ferrvault-operator.ferrvault.com"
    )]
    pub leader_elect_id: String,
    /// Namespace of the Lease (default: $POD_NAMESPACE, else the in-cluster namespace, else
    /// `default`).
    #[arg(long, env = "FERRVAULT_LEADER_ELECT_NAMESPACE")]
    pub leader_elect_namespace: Option<String>,
    /// How long a Lease lasts without renewal (whole seconds).
    #[arg(long, env = "FERRVAULT_LEADER_ELECT_LEASE_DURATION", default_value = "15s", value_parser = duration)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    #[arg(long, env = "FERRVAULT_LEADER_ELECT_RENEW_DEADLINE", default_value = "10s", value_parser = duration)]
    pub leader_elect_renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    #[arg(long, env = "FERRVAULT_LEADER_ELECT_RETRY_PERIOD", default_value = "2s", value_parser = duration)]
    pub leader_elect_retry_period: Duration,
    /// Split the objects into this many shards, each behind its own Lease, so that every
    /// replica reconciles its share (1..=256; 1: one leader, as without it; needs
    /// `--leader-elect` above 1; docs/sharding.md).
    #[arg(long, env = "FERRVAULT_SHARDS", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub shards: u16,
    /// Refresh interval of a FerrVaultSecret whose spec has none.
    #[arg(long, env = "FERRVAULT_DEFAULT_REFRESH_INTERVAL", default_value = "1h", value_parser = duration)]
    pub default_refresh_interval: Duration,
    /// Only watch these namespaces (comma-separated or repeated; default: the whole cluster).
    #[arg(long, env = "FERRVAULT_WATCH_NAMESPACE", value_delimiter = ',')]
    pub watch_namespace: Vec<String>,
    /// Liveness fails when due work sees no completed reconcile for this long. Must exceed
    /// --reconcile-timeout.
    #[arg(long, env = "FERRVAULT_STALL_THRESHOLD", default_value = "15m", value_parser = duration)]
    pub stall_threshold: Duration,
    /// Deadline of one reconcile; refused below the longest FerrVault call (about 31s).
    #[arg(long, env = "FERRVAULT_RECONCILE_TIMEOUT", default_value = "2m", value_parser = duration)]
    pub reconcile_timeout: Duration,
    /// Deadline of one FerrVault HTTP attempt (default 10s). Hidden: the reconcile-timeout floor
    /// is derived from it, so scenario tests lower it to run with second-scale stall thresholds.
    #[arg(long, env = "FERRVAULT_FERRVAULT_ATTEMPT_TIMEOUT", hide = true, value_parser = duration)]
    pub ferrvault_attempt_timeout: Option<Duration>,
    /// Reconciles running at once, per controller.
    #[arg(long, env = "FERRVAULT_MAX_CONCURRENT_RECONCILES", default_value_t = 4)]
    pub max_concurrent_reconciles: usize,
    /// FerrVault requests per second allowed per credential (decimal, e.g. 0.5).
    #[arg(long, env = "FERRVAULT_FERRVAULT_RATE", default_value_t = 1.0)]
    pub ferrvault_rate: f64,
    /// FerrVault burst per credential.
    #[arg(long, env = "FERRVAULT_FERRVAULT_BURST", default_value_t = 5)]
    pub ferrvault_burst: u32,
    /// Allow plain http:// FerrVault URLs (local simulators and tests only): without it such a
    /// connection is refused with Ready=False/InsecureUrl and nothing is sent.
    #[arg(long, env = "FERRVAULT_ALLOW_INSECURE_HTTP")]
    pub allow_insecure_http: bool,
    /// Addresses FerrVault URLs may lead to despite the built-in denials (loopback, link-local,
    /// cloud metadata, the operator's own addresses): CIDRs or IPs, comma-separated. Against
    /// --ferrvault-denied-cidrs the most specific entry wins (denied on a tie). The operator's own
    /// servers and the API server are refused whatever this says.
    #[arg(long, env = "FERRVAULT_FERRVAULT_ALLOWED_CIDRS", value_delimiter = ',')]
    pub ferrvault_allowed_cidrs: Vec<String>,
    /// Addresses FerrVault URLs must not lead to (e.g. the cluster's pod and Service CIDRs):
    /// CIDRs or IPs, comma-separated. A URL leading only there gets Ready=False/EgressDenied and
    /// no connection is made.
    #[arg(long, env = "FERRVAULT_FERRVAULT_DENIED_CIDRS", value_delimiter = ',')]
    pub ferrvault_denied_cidrs: Vec<String>,
    /// A connection may use a Secret as its token or CA bundle only when the Secret opts in: label
    /// `ferrvault.com/credential: "true"` or a `ferrvault.com/` type; any other is refused with
    /// Ready=False/CredentialNotOptedIn and nothing is sent (`--require-credential-opt-in[=true|false]`;
    /// off by default so a Go operator's command line keeps working, on in the chart).
    #[arg(long, env = "FERRVAULT_REQUIRE_CREDENTIAL_OPT_IN", action = clap::ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool)]
    pub require_credential_opt_in: bool,
    /// The cluster's ID registered in FerrVault, for connections opting in to the operator's
    /// cluster identity (`spec.oidc`); unset disables the cluster identity.
    #[arg(long, env = "FERRVAULT_OIDC_CLUSTER_ID")]
    pub oidc_cluster_id: Option<String>,
    /// The operator's projected ServiceAccount token, exchanged for the cluster identity.
    #[arg(long, env = "FERRVAULT_OIDC_TOKEN_PATH", default_value = DEFAULT_TOKEN_PATH)]
    pub oidc_token_path: PathBuf,
    /// FerrVault base URLs the cluster identity may be sent to (comma-separated); a connection
    /// opting in with another spec.url is refused with Ready=False/UntrustedUrl.
    #[arg(long, env = "FERRVAULT_OIDC_TRUSTED_URLS", value_delimiter = ',')]
    pub oidc_trusted_urls: Vec<String>,
    /// How often each FerrVaultConnection is probed.
    #[arg(long, env = "FERRVAULT_CONNECTION_PROBE_INTERVAL", default_value = "10m", value_parser = duration)]
    pub connection_probe_interval: Duration,
    /// The shortest interval a tenant's spec may set (`spec.refreshInterval`): a shorter one is
    /// used at this minimum, and the FerrVaultSecret shows RefreshIntervalClamped=True; `0s` in a
    /// spec (refreshes disabled) stays disabled. `0s` here: no minimum (benchmarks).
    #[arg(long, env = "FERRVAULT_MIN_REFRESH_INTERVAL", default_value = "30s", value_parser = duration)]
    pub min_refresh_interval: Duration,
    /// Writes per second the operator makes for the objects of one namespace (target Secrets,
    /// statuses, finalizers, Events, workload restarts), decimal; 0 = unlimited. A reconcile that
    /// finds its namespace's budget spent is requeued for when it refills.
    #[arg(long, env = "FERRVAULT_NAMESPACE_WRITE_QPS", default_value_t = write_budget::DEFAULT_QPS)]
    pub namespace_write_qps: f64,
    /// Writes one namespace's objects may cost at once before --namespace-write-qps applies.
    #[arg(long, env = "FERRVAULT_NAMESPACE_WRITE_BURST", default_value_t = write_budget::DEFAULT_BURST)]
    pub namespace_write_burst: u32,
    /// How long in-flight reconciles may finish after SIGTERM.
    #[arg(long, env = "FERRVAULT_SHUTDOWN_GRACE_PERIOD", default_value = "30s", value_parser = duration)]
    pub shutdown_grace_period: Duration,
    /// Log level or `tracing` filter directives (`info`, `debug,kube=info`); zap's level names and
    /// verbosities (`panic`, `2`) too.
    #[arg(long, env = "FERRVAULT_LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// Log line format.
    #[arg(long, env = "FERRVAULT_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
    /// controller-runtime's development defaults: console lines at debug level, unless
    /// --zap-encoder or --zap-log-level say otherwise (`--zap-devel[=true|false]`).
    #[arg(long, env = "FERRVAULT_ZAP_DEVEL", action = clap::ArgAction::Set, num_args = 0..=1,
          require_equals = true, default_value = "false", default_missing_value = "true",
          value_parser = go_bool)]
    pub zap_devel: bool,
    /// Log line format, zap's names: `json` or `console`. Wins over --log-format.
    #[arg(long, env = "FERRVAULT_ZAP_ENCODER", value_parser = ZapEncoder::parse)]
    pub zap_encoder: Option<ZapEncoder>,
    /// Log level, zap's names (`debug`, `info`, `warn`, `error`, `dpanic`, `panic`, `fatal`) or a
    /// verbosity (`1` = debug, `2`+ = trace). Wins over --log-level.
    #[arg(long, env = "FERRVAULT_ZAP_LOG_LEVEL", value_parser = ZapLevel::parse)]
    pub zap_log_level: Option<ZapLevel>,
    /// Accepted for the Go command line; Rust log events carry no stack traces.
    #[arg(long, env = "FERRVAULT_ZAP_STACKTRACE_LEVEL", value_parser = ZapLevel::parse)]
    pub zap_stacktrace_level: Option<ZapLevel>,
    /// How `ts` is written in JSON lines: `rfc3339` (default), `rfc3339nano`, `iso8601`,
    /// `epoch`, `millis` or `nanos`.
    #[arg(long, env = "FERRVAULT_ZAP_TIME_ENCODING", value_parser = TimeEncoding::parse)]
    pub zap_time_encoding: Option<TimeEncoding>,
    /// Every HTTP server (metrics, probes, admin): a request head must arrive whole within this
    /// time, on a new connection (TLS handshake included) or between two requests of a kept-alive
    /// one.
    #[arg(long, env = "FERRVAULT_HTTP_READ_HEADER_TIMEOUT", default_value = "10s", value_parser = duration)]
    pub http_read_header_timeout: Duration,
    /// Every HTTP server: a connection where no byte moves for this long is closed.
    #[arg(long, env = "FERRVAULT_HTTP_IDLE_TIMEOUT", default_value = "30s", value_parser = duration)]
    pub http_idle_timeout: Duration,
    /// Connections each HTTP server holds at once; when full, the longest idle one is closed
    /// for a newcomer.
    #[arg(long, env = "FERRVAULT_HTTP_MAX_CONNECTIONS", default_value_t = 64)]
    pub http_max_connections: usize,
    /// Kubeconfig file (default: in-cluster config, then $KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "FERRVAULT_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
}

/// Clap value parser for Go-syntax durations.
fn duration(value: &str) -> Result<Duration, String> {
    parse_go_duration(value).map_err(|error| error.to_string())
}

/// `argv` with Go's single-dash long flags (`-leader-elect`, `-zap-log-level=2`) rewritten to
/// `--` after the subcommand, so clap reads a Go operator's command line. Only names of `run`'s
/// flags (and `help`) are rewritten: a value such as `-1m` is left for clap to judge, and
/// everything after `--` is left alone.
pub fn go_flag_syntax(argv: impl IntoIterator<Item = OsString>, run: &clap::Command) -> Vec<OsString> {
    let longs: Vec<&str> = run
        .get_arguments()
        .filter_map(clap::Arg::get_long)
        .chain(["help"])
        .collect();
    let mut subcommand_seen = false;
    let mut rest_is_positional = false;
    let mut out = Vec::new();
    for (index, arg) in argv.into_iter().enumerate() {
        let text = arg.to_str().unwrap_or_default();
        if index == 0 || rest_is_positional || !subcommand_seen {
            subcommand_seen |= index > 0 && !text.starts_with('-');
            out.push(arg);
            continue;
        }
        if text == "--" {
            rest_is_positional = true;
            out.push(arg);
            continue;
        }
        let single_dash = text
            .strip_prefix('-')
            .filter(|rest| !rest.starts_with('-'))
            .filter(|rest| longs.contains(&rest.split('=').next().unwrap_or_default()));
        out.push(single_dash.map_or(arg.clone(), |rest| OsString::from(format!("--{rest}"))));
    }
    out
}

#[cfg(test)]
mod tests;
