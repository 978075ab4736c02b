//! The operator's command line and environment as the kubelet would start it from the rendering.

use crate::*;

#[test]
fn defaults_should_start_run_with_every_flag_at_its_documented_default() {
    let launch = launch(DEFAULTS);
    assert_eq!(launch.subcommand(), Some("run"), "argv: {:?}", launch.argv);
    let expected = vec![
        flag("metrics-bind-address", ":8080"),
        flag("health-probe-bind-address", ":8081"),
        // The admin endpoint is off by default: an empty address disables it.
        flag("admin-bind-address", ""),
        Flag {
            name: "leader-elect".into(),
            value: None,
        },
        flag("leader-elect-id", "ferrvault-operator.ferrvault.com"),
        flag("leader-elect-namespace", NAMESPACE),
        flag("leader-elect-lease-duration", "15s"),
        flag("leader-elect-renew-deadline", "10s"),
        flag("leader-elect-retry-period", "2s"),
        flag("default-refresh-interval", "1h"),
        flag("stall-threshold", "15m"),
        flag("reconcile-timeout", "2m"),
        flag("max-concurrent-reconciles", "4"),
        flag("ferrvault-rate", "1"),
        flag("ferrvault-burst", "5"),
        // New installs require Secrets to opt in as credentials (the binary's default is off).
        Flag {
            name: "require-credential-opt-in".into(),
            value: None,
        },
        flag("connection-probe-interval", "10m"),
        flag("min-refresh-interval", "30s"),
        flag("namespace-write-qps", "120"),
        flag("namespace-write-burst", "3000"),
        flag("shutdown-grace-period", "30s"),
        flag("log-level", "info"),
        flag("log-format", "json"),
    ];
    assert_eq!(launch.flags(), expected);
}

#[test]
fn every_value_should_reach_its_flag() {
    let launch = launch(&[
        "metrics.port=9100",
        "probe.port=9101",
        "admin.enabled=true",
        "admin.bindAddress=0.0.0.0:9102",
        "leaderElection.id=custom-lease",
        "leaderElection.leaseDuration=30s",
        "leaderElection.renewDeadline=20s",
        "leaderElection.retryPeriod=4s",
        "watchNamespace=team-a",
        "defaultRefreshInterval=30m",
        "stallThreshold=20m",
        "reconcileTimeout=90s",
        "maxConcurrentReconciles=16",
        "ferrvault.rate=0.5",
        "ferrvault.burst=2",
        "ferrvault.allowInsecureHttp=true",
        "ferrvault.allowedCIDRs={127.0.0.1/32,10.96.7.7/32}",
        "ferrvault.deniedCIDRs={10.0.0.0/8}",
        "oidc.enabled=true",
        "oidc.audience=https://ferrvault.example",
        "oidc.clusterID=0b6f7e2c-1d2e-4f00-8a9b-0123456789ab",
        "oidc.tokenPath=/var/run/secrets/fv/token",
        "oidc.trustedURLs={https://a.example,http://b.example:8200}",
        "connectionProbeInterval=5m",
        "minRefreshInterval=1m",
        "namespaceWriteBudget.qps=2.5",
        "namespaceWriteBudget.burst=50",
        "shutdownGracePeriod=20s",
        "logLevel=debug",
        "logFormat=text",
        "extraArgs[0]=--kubeconfig=/etc/kube/config",
    ]);
    for (name, value) in [
        ("metrics-bind-address", ":9100"),
        ("health-probe-bind-address", ":9101"),
        ("admin-bind-address", "0.0.0.0:9102"),
        ("leader-elect-id", "custom-lease"),
        ("leader-elect-lease-duration", "30s"),
        ("leader-elect-renew-deadline", "20s"),
        ("leader-elect-retry-period", "4s"),
        ("watch-namespace", "team-a"),
        ("default-refresh-interval", "30m"),
        ("stall-threshold", "20m"),
        ("reconcile-timeout", "90s"),
        ("max-concurrent-reconciles", "16"),
        ("ferrvault-rate", "0.5"),
        ("ferrvault-burst", "2"),
        ("ferrvault-allowed-cidrs", "127.0.0.1/32,10.96.7.7/32"),
        ("ferrvault-denied-cidrs", "10.0.0.0/8"),
        ("oidc-cluster-id", "0b6f7e2c-1d2e-4f00-8a9b-0123456789ab"),
        ("oidc-token-path", "/var/run/secrets/fv/token"),
        ("oidc-trusted-urls", "https://a.example,http://b.example:8200"),
        ("connection-probe-interval", "5m"),
        ("min-refresh-interval", "1m"),
        ("namespace-write-qps", "2.5"),
        ("namespace-write-burst", "50"),
        ("shutdown-grace-period", "20s"),
        ("log-level", "debug"),
        ("log-format", "text"),
        ("kubeconfig", "/etc/kube/config"),
    ] {
        assert_eq!(
            launch.flag(name),
            Some(Some(value.to_owned())),
            "--{name} in {:?}",
            launch.argv
        );
    }
    assert_eq!(launch.flag("allow-insecure-http"), Some(None));
    assert!(
        launch
            .argv
            .last()
            .is_some_and(|arg| arg == "--kubeconfig=/etc/kube/config"),
        "extraArgs go last so they can override: {:?}",
        launch.argv
    );
}

#[test]
fn every_rendered_flag_should_be_a_flag_of_run_and_appear_once() {
    for sets in [
        DEFAULTS,
        LEADER_ELECTION_OFF,
        THREE_REPLICAS,
        WATCH_NAMESPACE,
        MONITORING_ON,
        ADMIN_ON,
        OIDC_ON,
    ] {
        let flags = launch(sets).flags();
        for flag in &flags {
            assert!(
                RUN_FLAGS.contains(&flag.name.as_str()),
                "--{} is not a flag of run ({sets:?})",
                flag.name
            );
            let count = flags.iter().filter(|other| other.name == flag.name).count();
            assert_eq!(count, 1, "--{} is passed {count} times ({sets:?})", flag.name);
        }
    }
}

#[test]
fn leader_election_off_should_drop_every_lease_flag_and_the_lease_role() {
    let rendering = Rendering::new(LEADER_ELECTION_OFF);
    let launch = launch(LEADER_ELECTION_OFF);
    let lease_flags: Vec<Flag> = launch
        .flags()
        .into_iter()
        .filter(|flag| flag.name.starts_with("leader-elect"))
        .collect();
    assert!(
        lease_flags.is_empty(),
        "lease flags without leader election: {lease_flags:?}"
    );
    assert!(
        !rendering
            .names_of("Role")
            .iter()
            .any(|name| name.ends_with("-leader-election")),
        "no Lease permissions are needed: {:?}",
        rendering.names_of("Role")
    );
}

#[test]
fn the_pod_should_know_its_name_and_namespace_for_leader_election() {
    let launch = launch(DEFAULTS);
    assert_eq!(launch.env_var("POD_NAME"), Some("fv-ferrvault-operator-abc12"));
    assert_eq!(launch.env_var("POD_NAMESPACE"), Some(NAMESPACE));
}

#[test]
fn extra_env_should_follow_the_pod_identity() {
    let launch = launch(&[
        "extraEnv[0].name=HTTPS_PROXY",
        "extraEnv[0].value=http://proxy:3128",
    ]);
    let names: Vec<&str> = launch.env.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["POD_NAME", "POD_NAMESPACE", "HTTPS_PROXY"]);
    assert_eq!(launch.env_var("HTTPS_PROXY"), Some("http://proxy:3128"));
}

#[test]
fn launch_should_replace_a_flag_in_either_form_and_keep_the_rest() {
    let pod = PodIdentity {
        name: "p".into(),
        namespace: "n".into(),
    };
    let mut launch =
        ContainerLaunch::from_deployment(&deployment(&Rendering::new(DEFAULTS)), &pod).expect("launch");
    launch
        .argv
        .extend(["--kubeconfig".to_owned(), "/tmp/a".to_owned()]);
    let rebound = launch
        .clone()
        .with_flag("health-probe-bind-address", "127.0.0.1:0")
        .with_flag("kubeconfig", "/tmp/b")
        .with_flag("watch-namespace", "x");
    assert_eq!(rebound.subcommand(), Some("run"));
    assert_eq!(
        rebound.flag("health-probe-bind-address"),
        Some(Some("127.0.0.1:0".into()))
    );
    assert_eq!(
        rebound.flag("kubeconfig"),
        Some(Some("/tmp/b".into())),
        "the separate value token is replaced"
    );
    assert_eq!(
        rebound.flag("watch-namespace"),
        Some(Some("x".into())),
        "an absent flag is appended"
    );
    assert_eq!(rebound.flags().len(), launch.flags().len() + 1);
    assert_eq!(
        rebound.flag("leader-elect"),
        Some(None),
        "bare boolean flags survive"
    );
}

#[test]
fn without_oidc_and_insecure_http_values_no_identity_or_http_flag_should_be_rendered() {
    let launch = launch(DEFAULTS);
    for name in [
        "allow-insecure-http",
        "ferrvault-allowed-cidrs",
        "ferrvault-denied-cidrs",
        "oidc-cluster-id",
        "oidc-token-path",
        "oidc-trusted-urls",
    ] {
        assert_eq!(launch.flag(name), None, "--{name} in {:?}", launch.argv);
    }
}

#[test]
fn the_credential_opt_in_should_be_rendered_by_default_and_dropped_when_turned_off() {
    assert_eq!(launch(DEFAULTS).flag("require-credential-opt-in"), Some(None));
    let off = launch(&["requireCredentialOptIn=false"]);
    assert_eq!(
        off.flag("require-credential-opt-in"),
        None,
        "off is the binary's default: {:?}",
        off.argv
    );
}
