use clap::{CommandFactory, Parser};

use super::*;

#[derive(Debug, Parser)]
struct Harness {
    #[command(flatten)]
    args: RunArgs,
}

#[test]
fn defaults_should_match_the_chart_and_the_reference() {
    let args = Harness::try_parse_from(["x"]).expect("no flag is required").args;
    assert_eq!(args.metrics_bind_address, ":8080");
    assert_eq!(args.health_probe_bind_address, ":8081");
    assert_eq!(args.admin_bind_address, "127.0.0.1:8082");
    assert!(!args.leader_elect);
    assert_eq!(args.leader_elect_id, "ferrvault-operator.ferrvault.com");
    assert_eq!(args.leader_elect_lease_duration, Duration::from_secs(15));
    assert_eq!(args.leader_elect_renew_deadline, Duration::from_secs(10));
    assert_eq!(args.leader_elect_retry_period, Duration::from_secs(2));
    assert_eq!(args.default_refresh_interval, Duration::from_secs(3600));
    assert_eq!(args.stall_threshold, Duration::from_secs(900));
    assert_eq!(args.reconcile_timeout, Duration::from_secs(120));
    assert_eq!(args.max_concurrent_reconciles, 4);
    assert!((args.ferrvault_rate - 1.0).abs() < f64::EPSILON);
    assert_eq!(args.ferrvault_burst, 5);
    assert_eq!(args.connection_probe_interval, Duration::from_secs(600));
    assert_eq!(args.shutdown_grace_period, Duration::from_secs(30));
    assert_eq!(args.log_level, "info");
    assert_eq!(args.log_format, LogFormat::Json);
    assert_eq!(args.kubeconfig, None);
    assert!(!args.allow_insecure_http);
    assert!(args.ferrvault_allowed_cidrs.is_empty() && args.ferrvault_denied_cidrs.is_empty());
    assert!(
        !args.require_credential_opt_in,
        "off, so a Go operator's command line keeps working"
    );
    assert_eq!(args.oidc_cluster_id, None);
    assert_eq!(
        args.oidc_token_path,
        PathBuf::from("/var/run/secrets/ferrvault/token")
    );
    assert!(args.oidc_trusted_urls.is_empty());
    assert!(!args.zap_devel);
    assert!(args.watch_namespace.is_empty());
    assert!(!args.metrics_secure, "plain HTTP metrics stay the default");
    assert_eq!(args.metrics_cert_path, "");
    assert_eq!(args.metrics_cert_name, "tls.crt");
    assert_eq!(args.metrics_cert_key, "tls.key");
    assert_eq!(args.http_read_header_timeout, Duration::from_secs(10));
    assert_eq!(args.http_idle_timeout, Duration::from_secs(30));
    assert_eq!(args.http_max_connections, 64);
    assert_eq!(args.zap_encoder, None);
    assert_eq!(args.zap_log_level, None);
    assert_eq!(args.zap_time_encoding, None);
}

#[test]
fn trusted_urls_should_be_comma_separated_or_repeated() {
    let args = Harness::try_parse_from([
        "x",
        "--oidc-trusted-urls=https://a.example,https://b.example",
        "--oidc-trusted-urls",
        "https://c.example",
    ])
    .expect("valid flags")
    .args;
    assert_eq!(
        args.oidc_trusted_urls,
        ["https://a.example", "https://b.example", "https://c.example"]
    );
}

#[test]
fn watch_namespaces_should_be_comma_separated_or_repeated() {
    let args = Harness::try_parse_from([
        "x",
        "--watch-namespace=apps,team-a",
        "--watch-namespace",
        "team-b",
    ])
    .expect("valid flags")
    .args;
    assert_eq!(args.watch_namespace, ["apps", "team-a", "team-b"]);
}

fn parse_go(argv: &[&str]) -> Result<RunArgs, clap::Error> {
    let argv = std::iter::once("x")
        .chain(argv.iter().copied())
        .map(OsString::from);
    let normalised = go_flag_syntax(
        std::iter::once(OsString::from("bin")).chain(argv),
        &Harness::command(),
    );
    Harness::try_parse_from(normalised.into_iter().skip(1)).map(|harness| harness.args)
}

#[test]
fn the_go_operators_chart_command_line_should_parse() {
    let args = parse_go(&[
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address=:8081",
        "--default-refresh-interval=1h",
        "--stall-threshold=15m",
        "--reconcile-timeout=2m",
        "--leader-elect",
        "--leader-elect-id=ferrvault-operator.ferrvault.com",
        "--watch-namespace=apps",
        "--zap-log-level=info",
    ])
    .expect("the Go chart's args");
    assert!(args.leader_elect);
    assert_eq!(args.zap_log_level, Some(ZapLevel::Info));
    assert_eq!(args.watch_namespace, ["apps"]);
}

#[test]
fn go_flag_syntax_forms_should_all_parse() {
    let args = parse_go(&[
        "-leader-elect=false",
        "-zap-encoder",
        "console",
        "-zap-log-level=2",
        "--zap-devel=true",
        "-zap-stacktrace-level=panic",
        "--zap-time-encoding",
        "epoch",
        "-reconcile-timeout",
        "90s",
        "-kubeconfig=/tmp/k",
    ])
    .expect("Go flag syntax");
    assert!(!args.leader_elect);
    assert_eq!(args.zap_encoder, Some(ZapEncoder::Console));
    assert_eq!(args.zap_log_level, Some(ZapLevel::Verbosity(2)));
    assert!(args.zap_devel);
    assert_eq!(args.zap_stacktrace_level, Some(ZapLevel::Panic));
    assert_eq!(args.zap_time_encoding, Some(TimeEncoding::Epoch));
    assert_eq!(args.reconcile_timeout, Duration::from_secs(90));
    assert_eq!(args.kubeconfig, Some(PathBuf::from("/tmp/k")));
    for (bool_flag, expected) in [
        ("--leader-elect=true", true),
        ("--leader-elect=0", false),
        ("--leader-elect", true),
    ] {
        assert_eq!(
            parse_go(&[bool_flag]).expect(bool_flag).leader_elect,
            expected,
            "{bool_flag}"
        );
    }
}

#[test]
fn only_flag_names_should_be_rewritten_never_values_or_positionals() {
    let command = Harness::command();
    let argv = [
        "bin",
        "run",
        "-leader-elect",
        "--stall-threshold",
        "-1m",
        "-x",
        "--",
        "-watch-namespace",
    ];
    let rewritten: Vec<String> = go_flag_syntax(argv.map(OsString::from), &command)
        .into_iter()
        .map(|arg| arg.into_string().expect("utf-8"))
        .collect();
    assert_eq!(
        rewritten,
        [
            "bin",
            "run",
            "--leader-elect",
            "--stall-threshold",
            "-1m",
            "-x",
            "--",
            "-watch-namespace"
        ]
    );
}

#[test]
fn bad_zap_values_should_be_refused_naming_them() {
    for flag in [
        "--zap-log-level=loud",
        "--zap-encoder=logfmt",
        "--zap-time-encoding=unix",
        "--leader-elect=maybe",
    ] {
        let error = parse_go(&[flag]).expect_err(flag);
        let value = flag.split_once('=').expect("valued").1;
        assert!(error.to_string().contains(value), "{flag}: {error}");
    }
}

#[test]
fn every_flag_should_be_settable_from_its_ferrvault_environment_variable() {
    let command = Harness::command();
    for arg in command.get_arguments() {
        let long = arg.get_long().expect("every run flag is a long flag");
        let expected = format!("FERRVAULT_{}", long.to_uppercase().replace('-', "_"));
        assert_eq!(
            arg.get_env().and_then(|env| env.to_str()),
            Some(expected.as_str()),
            "--{long}"
        );
    }
}

#[test]
fn go_durations_and_decimal_rates_should_parse() {
    let args = Harness::try_parse_from([
        "x",
        "--reconcile-timeout=1m30s",
        "--ferrvault-rate",
        "0.5",
        "--leader-elect",
    ])
    .expect("valid flags")
    .args;
    assert_eq!(args.reconcile_timeout, Duration::from_secs(90));
    assert!((args.ferrvault_rate - 0.5).abs() < f64::EPSILON);
    assert!(args.leader_elect);
}

#[test]
fn a_bad_duration_should_be_refused_naming_the_value() {
    let error = Harness::try_parse_from(["x", "--stall-threshold=soon"]).expect_err("not a duration");
    assert!(error.to_string().contains("soon"), "{error}");
    let error = Harness::try_parse_from(["x", "--reconcile-timeout=-1m"]).expect_err("signed");
    assert!(error.to_string().contains("-1m"), "{error}");
}

#[test]
fn require_credential_opt_in_should_be_off_by_default_and_take_go_boolean_forms() {
    for (argv, expected) in [
        (vec!["x"], false),
        (vec!["x", "--require-credential-opt-in"], true),
        (vec!["x", "--require-credential-opt-in=true"], true),
        (vec!["x", "--require-credential-opt-in=false"], false),
        (vec!["x", "--require-credential-opt-in=1"], true),
    ] {
        let args = Harness::try_parse_from(&argv).expect("valid flags").args;
        assert_eq!(args.require_credential_opt_in, expected, "{argv:?}");
    }
    assert!(Harness::try_parse_from(["x", "--require-credential-opt-in=maybe"]).is_err());
}
