use clap::Parser;

use super::*;
use crate::cli::logging::LogFormat;

#[derive(Debug, Parser)]
struct Harness {
    #[command(flatten)]
    args: RunArgs,
}

fn settings(flags: &[&str], env: &ProcessEnv) -> Result<RunSettings, ConfigError> {
    let argv = std::iter::once("run").chain(flags.iter().copied());
    RunSettings::from_args(Harness::try_parse_from(argv).expect("flags parse").args, env)
}

#[test]
fn defaults_should_be_accepted_and_bind_every_interface_except_admin() {
    let settings = settings(&[], &ProcessEnv::default()).expect("defaults are valid");
    assert_eq!(settings.metrics_addr, Some(BindAddress::EveryInterface(8080)));
    assert_eq!(settings.probe_addr, BindAddress::EveryInterface(8081));
    assert_eq!(
        settings.admin_addr,
        Some(BindAddress::Exact("127.0.0.1:8082".parse().unwrap()))
    );
    assert_eq!(settings.log, LogSettings::new("info", LogFormat::Json));
    assert_eq!(settings.reconcile_timeout, Duration::from_secs(120));
    assert_eq!(settings.lease_namespace, "default");
    assert_eq!(settings.pod_name, "local");
}

#[test]
fn reconcile_timeout_should_be_refused_below_the_ferrvault_floor_with_the_reference_message() {
    for value in ["0s", "5s", "20s", "30s"] {
        let flag = format!("--reconcile-timeout={value}");
        let error = settings(&[&flag], &ProcessEnv::default()).expect_err(value);
        let message = error.to_string();
        assert!(
            matches!(error, ConfigError::ReconcileTimeoutBelowFloor { .. }),
            "{message}"
        );
        assert!(
            message.contains("is below 30.65s")
                && message.contains("longest one FerrVault API call")
                && message.contains("0 would disable the guardrail"),
            "{message}"
        );
    }
    settings(&["--reconcile-timeout=31s"], &ProcessEnv::default()).expect("31s is above the floor");
}

#[test]
fn a_shorter_ferrvault_attempt_timeout_should_lower_the_reconcile_timeout_floor() {
    // 3 attempts of 1s plus the two retry delays at their longest.
    let flags = ["--ferrvault-attempt-timeout=1s", "--reconcile-timeout=3s"];
    let error = settings(&flags, &ProcessEnv::default()).expect_err("below 3.65s");
    assert!(error.to_string().contains("is below 3.65s"), "{error}");
    let flags = [
        "--ferrvault-attempt-timeout=1s",
        "--reconcile-timeout=4s",
        "--stall-threshold=5s",
    ];
    let settings = settings(&flags, &ProcessEnv::default()).expect("4s is above the floor");
    assert_eq!(settings.ferrvault.attempt_timeout, Duration::from_secs(1));
}

#[test]
fn stall_threshold_should_be_longer_than_the_reconcile_timeout() {
    let error = settings(&["--stall-threshold=2m"], &ProcessEnv::default()).expect_err("equal");
    assert!(error.to_string().contains("--stall-threshold: 2m0s"), "{error}");
}

#[test]
fn lease_namespace_should_come_from_the_flag_then_pod_namespace_then_the_in_cluster_file() {
    let env = ProcessEnv {
        pod_name: Some("op-1".into()),
        pod_namespace: Some("from-env".into()),
        in_cluster_namespace: Some("from-file".into()),
    };
    let flagged = settings(&["--leader-elect-namespace=from-flag"], &env).unwrap();
    assert_eq!(flagged.lease_namespace, "from-flag");
    assert_eq!(settings(&[], &env).unwrap().lease_namespace, "from-env");
    let file_only = ProcessEnv {
        pod_namespace: None,
        ..env.clone()
    };
    assert_eq!(settings(&[], &file_only).unwrap().lease_namespace, "from-file");
    assert_eq!(settings(&[], &env).unwrap().pod_name, "op-1");
}

#[test]
fn an_empty_admin_address_should_disable_the_admin_server() {
    let settings = settings(&["--admin-bind-address="], &ProcessEnv::default()).unwrap();
    assert_eq!(settings.admin_addr, None);
}

#[test]
fn the_hint_endpoint_should_be_off_by_default_and_bind_where_its_flag_says() {
    let defaults = settings(&[], &ProcessEnv::default()).unwrap();
    assert_eq!(defaults.hint_addr, None);
    assert_eq!(defaults.hint_secret_name, "ferrvault-operator-hint-key");
    let on = settings(
        &["--hint-bind-address=:8083", "--hint-secret-name=ci-key"],
        &ProcessEnv::default(),
    )
    .unwrap();
    assert_eq!(on.hint_addr, Some(BindAddress::EveryInterface(8083)));
    assert_eq!(on.hint_secret_name, "ci-key");
    let error = settings(&["--hint-bind-address=8083"], &ProcessEnv::default()).unwrap_err();
    assert!(error.to_string().contains("--hint-bind-address"), "{error}");
}

#[test]
fn each_broken_rule_should_name_its_flag() {
    for (flags, fragment) in [
        (&["--metrics-bind-address=8080"][..], "--metrics-bind-address"),
        (
            &["--health-probe-bind-address=:x"][..],
            "--health-probe-bind-address",
        ),
        (
            &["--leader-elect-renew-deadline=20s"][..],
            "--leader-elect-lease-duration",
        ),
        (&["--ferrvault-rate=0"][..], "--ferrvault-rate"),
        (&["--ferrvault-burst=0"][..], "--ferrvault-burst"),
        (
            &["--max-concurrent-reconciles=0"][..],
            "--max-concurrent-reconciles",
        ),
        (
            &["--default-refresh-interval=0s"][..],
            "--default-refresh-interval",
        ),
        (
            &["--connection-probe-interval=0s"][..],
            "--connection-probe-interval",
        ),
        (&["--leader-elect-id="][..], "--leader-elect-id"),
        (
            &["--http-read-header-timeout=0s"][..],
            "--http-read-header-timeout",
        ),
        (&["--http-idle-timeout=0s"][..], "--http-idle-timeout"),
        (&["--http-max-connections=0"][..], "--http-max-connections"),
        (&["--watch-namespace=apps,Team_B"][..], "Team_B"),
        (
            &[
                "--metrics-secure",
                "--metrics-cert-path=/certs",
                "--metrics-cert-key=",
            ][..],
            "--metrics-cert-key",
        ),
    ] {
        let error = settings(flags, &ProcessEnv::default()).expect_err(fragment);
        assert!(error.to_string().contains(fragment), "{flags:?}: {error}");
    }
}

#[test]
fn the_cluster_identity_should_be_off_by_default_and_built_from_its_three_flags() {
    let off = settings(&[], &ProcessEnv::default()).unwrap();
    assert_eq!(off.ferrvault.cluster_identity, None);
    assert!(!off.ferrvault.allow_insecure_http);
    let on = settings(
        &[
            "--oidc-cluster-id=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
            "--oidc-token-path=/var/run/secrets/fv/token",
            "--oidc-trusted-urls=https://fv.example/,https://eu.fv.example",
        ],
        &ProcessEnv::default(),
    )
    .unwrap();
    let identity = on.ferrvault.cluster_identity.expect("configured");
    assert_eq!(identity.cluster_id(), "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab");
    assert_eq!(
        identity.token_path(),
        std::path::Path::new("/var/run/secrets/fv/token")
    );
    assert_eq!(
        identity.trusted_urls().collect::<Vec<_>>(),
        ["https://fv.example", "https://eu.fv.example"]
    );
}

#[test]
fn incomplete_or_insecure_cluster_identity_flags_should_be_refused() {
    const ID: &str = "--oidc-cluster-id=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab";
    for (flags, fragment) in [
        (&[ID][..], "needs at least one --oidc-trusted-urls"),
        (
            &["--oidc-trusted-urls=https://fv.example"][..],
            "needs --oidc-cluster-id",
        ),
        (
            &["--oidc-cluster-id=nope", "--oidc-trusted-urls=https://x"][..],
            "cluster ID",
        ),
        (
            &[ID, "--oidc-trusted-urls=http://fv.example"][..],
            "--allow-insecure-http",
        ),
        (
            &[ID, "--oidc-trusted-urls=https://x", "--oidc-token-path=token"][..],
            "not absolute",
        ),
    ] {
        let error = settings(flags, &ProcessEnv::default()).expect_err(fragment);
        assert!(
            matches!(error, ConfigError::ClusterIdentity(_)) && error.to_string().contains(fragment),
            "{flags:?}: {error}"
        );
    }
    let insecure = settings(
        &[
            ID,
            "--oidc-trusted-urls=http://127.0.0.1:8200",
            "--allow-insecure-http",
            "--ferrvault-allowed-cidrs=127.0.0.1/32",
        ],
        &ProcessEnv::default(),
    )
    .expect("http is allowed with the opt-in");
    assert!(insecure.ferrvault.allow_insecure_http);
}

#[test]
fn egress_cidrs_should_be_parsed_and_a_trusted_url_the_policy_refuses_should_fail_at_start() {
    let env = ProcessEnv::default();
    let parsed = settings(
        &[
            "--ferrvault-allowed-cidrs=127.0.0.1/32,10.96.7.7",
            "--ferrvault-denied-cidrs=10.0.0.0/8",
        ],
        &env,
    )
    .expect("valid CIDRs");
    assert_eq!(parsed.ferrvault.egress.allowed().len(), 2);
    assert_eq!(parsed.ferrvault.egress.denied().len(), 1);
    let error = settings(&["--ferrvault-denied-cidrs=10.0.0.0/8,nope"], &env).unwrap_err();
    assert!(
        matches!(error, ConfigError::EgressCidrs(_)) && error.to_string().contains("\"nope\""),
        "{error}"
    );
    let refused = settings(
        &[
            "--oidc-cluster-id=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
            "--oidc-trusted-urls=https://169.254.169.254",
        ],
        &env,
    )
    .unwrap_err();
    assert!(
        matches!(refused, ConfigError::ClusterIdentity(_)) && refused.to_string().contains("cloud metadata"),
        "{refused}"
    );
}

#[test]
fn metrics_bind_address_zero_should_turn_metrics_off_as_in_controller_runtime() {
    let off = settings(&["--metrics-bind-address=0"], &ProcessEnv::default()).expect("0 is off");
    assert_eq!(off.metrics_addr, None);
    settings(&["--health-probe-bind-address=0"], &ProcessEnv::default())
        .expect_err("the probes cannot be turned off: the Deployment probes them");
}

#[test]
fn zap_flags_should_decide_logging_when_given() {
    let env = ProcessEnv::default();
    let log = |flags: &[&str]| settings(flags, &env).expect("valid flags").log;
    assert_eq!(log(&["--zap-log-level=debug"]).filter, "debug");
    assert_eq!(
        log(&["--log-level=2"]).filter,
        "trace",
        "the Go chart's logLevel: 2"
    );
    assert_eq!(log(&["--log-level=panic"]).filter, "off");
    assert_eq!(log(&["--log-level=info,kube=warn"]).filter, "info,kube=warn");
    assert_eq!(log(&["--log-level=warn", "--zap-log-level=3"]).filter, "trace");
    assert_eq!(log(&["--zap-log-level=panic"]).filter, "off");
    assert_eq!(log(&["--zap-encoder=console"]).format, LogFormat::Text);
    assert_eq!(
        log(&["--log-format=text", "--zap-encoder=json"]).format,
        LogFormat::Json
    );
    let devel = log(&["--zap-devel"]);
    assert_eq!((devel.filter.as_str(), devel.format), ("debug", LogFormat::Text));
    let devel_json = log(&["--zap-devel", "--zap-encoder=json", "--zap-log-level=info"]);
    assert_eq!(
        (devel_json.filter.as_str(), devel_json.format),
        ("info", LogFormat::Json)
    );
    assert_eq!(
        log(&["--zap-devel=false"]),
        LogSettings::new("info", LogFormat::Json)
    );
    assert_eq!(
        log(&["--zap-time-encoding=epoch"]).time,
        crate::cli::zap::TimeEncoding::Epoch
    );
}

#[test]
fn lease_timings_without_a_fencing_margin_should_be_refused() {
    // Writes stop at the renew deadline; another replica may acquire at the lease duration:
    // 14s + 2s > 15s leaves less than one retry period between the two.
    let error = settings(
        &[
            "--leader-elect-lease-duration=15s",
            "--leader-elect-renew-deadline=14s",
            "--leader-elect-retry-period=2s",
        ],
        &ProcessEnv::default(),
    )
    .expect_err("no fencing margin");
    assert!(
        error
            .to_string()
            .contains("renew deadline + retry period must not exceed the lease duration"),
        "{error}"
    );
    let accepted = settings(
        &[
            "--leader-elect-lease-duration=15s",
            "--leader-elect-renew-deadline=13s",
            "--leader-elect-retry-period=2s",
        ],
        &ProcessEnv::default(),
    );
    assert!(
        accepted.is_ok(),
        "a margin of exactly one retry period is enough: {accepted:?}"
    );
}

#[test]
fn watch_namespaces_should_be_trimmed_and_counted_once() {
    let several = settings(
        &["--watch-namespace= apps,team-a,,apps", "--watch-namespace=team-b"],
        &ProcessEnv::default(),
    )
    .expect("valid");
    assert_eq!(several.watch_namespaces, ["apps", "team-a", "team-b"]);
    let cluster_wide = settings(&["--watch-namespace="], &ProcessEnv::default()).expect("valid");
    assert!(
        cluster_wide.watch_namespaces.is_empty(),
        "empty means the whole cluster"
    );
}

#[test]
fn secure_metrics_should_use_the_certificate_directory_or_a_self_signed_certificate() {
    let env = ProcessEnv::default();
    assert_eq!(settings(&[], &env).expect("valid").metrics_cert, None);
    assert_eq!(
        settings(&["--metrics-secure"], &env).expect("valid").metrics_cert,
        Some(CertSource::SelfSigned)
    );
    assert_eq!(
        settings(
            &[
                "--metrics-secure=true",
                "--metrics-cert-path=/certs",
                "--metrics-cert-name=cert.pem"
            ],
            &env
        )
        .expect("valid")
        .metrics_cert,
        Some(CertSource::Files {
            cert: "/certs/cert.pem".into(),
            key: "/certs/tls.key".into(),
        })
    );
}

#[test]
fn the_write_budget_should_default_to_the_documented_rate_and_zero_should_mean_unlimited() {
    let budget = |per_second: f64, burst: f64| Some(Some(Rate { per_second, burst }));
    // (flags, the budget, or None when refused)
    let table: [(&[&str], Option<Option<Rate>>); 7] = [
        (&[], budget(120.0, 3000.0)),
        (
            &["--namespace-write-qps=2.5", "--namespace-write-burst=10"],
            budget(2.5, 10.0),
        ),
        (&["--namespace-write-qps=0"], Some(None)),
        (
            &["--namespace-write-qps=0", "--namespace-write-burst=0"],
            Some(None),
        ),
        (&["--namespace-write-qps=-1"], None),
        (&["--namespace-write-qps=NaN"], None),
        (&["--namespace-write-burst=0"], None),
    ];
    for (flags, expected) in table {
        let result = settings(flags, &ProcessEnv::default());
        match expected {
            Some(budget) => assert_eq!(
                result.expect("accepted").namespace_write_budget,
                budget,
                "{flags:?}"
            ),
            None => {
                let error = result.expect_err("refused");
                assert!(
                    error
                        .to_string()
                        .starts_with("invalid --namespace-write-qps/--namespace-write-burst: "),
                    "{flags:?}: {error}"
                );
            }
        }
    }
}

#[test]
fn the_min_refresh_interval_should_default_to_30s_and_take_go_durations() {
    let default = settings(&[], &ProcessEnv::default()).expect("defaults");
    assert_eq!(default.min_refresh_interval, Duration::from_secs(30));
    for (flag, expected) in [
        ("--min-refresh-interval=1m30s", Duration::from_secs(90)),
        ("--min-refresh-interval=0s", Duration::ZERO),
    ] {
        let set = settings(&[flag], &ProcessEnv::default()).expect(flag);
        assert_eq!(set.min_refresh_interval, expected, "{flag}");
    }
}

#[test]
fn the_credential_opt_in_should_be_off_by_default_and_on_with_its_flag() {
    let env = ProcessEnv::default();
    assert!(!settings(&[], &env).unwrap().require_credential_opt_in);
    assert!(
        settings(&["--require-credential-opt-in"], &env)
            .unwrap()
            .require_credential_opt_in
    );
    assert!(
        !settings(&["--require-credential-opt-in=false"], &env)
            .unwrap()
            .require_credential_opt_in
    );
}

#[test]
fn shards_should_default_to_one_take_up_to_256_with_leader_election_and_refuse_the_rest() {
    let env = ProcessEnv::default();
    assert_eq!(settings(&[], &env).expect("defaults").shards, Shards::ONE);
    let many = settings(&["--leader-elect", "--shards=256"], &env).expect("256 shards");
    assert_eq!(many.shards.count(), 256);
    let error = settings(&["--shards=6"], &env).expect_err("shards without a Lease");
    assert!(
        matches!(error, ConfigError::ShardsWithoutLeaderElection(6)),
        "{error}"
    );
    assert!(error.to_string().contains("--shards"), "{error}");
    for value in ["0", "257", "-1"] {
        let flag = format!("--shards={value}");
        let argv = ["run", "--leader-elect", flag.as_str()];
        assert!(Harness::try_parse_from(argv).is_err(), "{flag} parsed");
    }
}
