//! The pod: probes, ports, security context, disruption budget, spread, admin endpoint, OIDC volume.

use crate::*;

#[test]
fn probes_should_hit_healthz_and_readyz_on_the_health_port_and_tolerate_one_slow_probe() {
    let container = manager(&deployment(&Rendering::new(&["probe.port=9191"])));
    let port_named = |name: &str| {
        container
            .ports
            .iter()
            .flatten()
            .find(|port| port.name.as_deref() == Some(name))
            .map(|p| p.container_port)
    };
    assert_eq!(port_named("health"), Some(9191));
    let path_and_port = |probe: &Option<k8s_openapi::api::core::v1::Probe>| {
        let get = probe
            .as_ref()
            .and_then(|probe| probe.http_get.clone())
            .expect("an httpGet probe");
        (
            get.path.unwrap_or_default(),
            serde_json::to_value(get.port).expect("port"),
        )
    };
    let health = Value::from("health");
    assert_eq!(
        path_and_port(&container.liveness_probe),
        ("/healthz".into(), health.clone())
    );
    assert_eq!(
        path_and_port(&container.readiness_probe),
        ("/readyz".into(), health.clone())
    );
    assert_eq!(
        path_and_port(&container.startup_probe),
        ("/healthz".into(), health)
    );
    let liveness = container.liveness_probe.clone().expect("liveness");
    assert!(
        liveness.failure_threshold.unwrap_or(3) >= 2,
        "one slow probe must not restart the pod"
    );
    assert!(
        liveness.initial_delay_seconds.unwrap_or(0) == 0,
        "the startup probe covers start-up"
    );
    let startup = container.startup_probe.clone().expect("startup");
    let budget = startup.period_seconds.unwrap_or(10) * startup.failure_threshold.unwrap_or(3);
    assert!(
        budget >= 120,
        "slow cache syncs get at least 2 minutes before liveness starts, got {budget}s"
    );
}

#[test]
fn the_container_should_run_non_root_read_only_without_privileges() {
    let deployment = deployment(&Rendering::new(DEFAULTS));
    let pod = pod_spec(&deployment)
        .security_context
        .expect("pod securityContext");
    assert_eq!(pod.run_as_non_root, Some(true));
    assert_eq!(pod.run_as_user, Some(65532));
    assert_eq!(pod.run_as_group, Some(65532));
    assert_eq!(
        pod.seccomp_profile.map(|profile| profile.type_),
        Some("RuntimeDefault".into())
    );
    let container = manager(&deployment)
        .security_context
        .expect("container securityContext");
    assert_eq!(container.allow_privilege_escalation, Some(false));
    assert_eq!(container.read_only_root_filesystem, Some(true));
    assert_eq!(
        container.capabilities.and_then(|caps| caps.drop),
        Some(vec!["ALL".to_owned()])
    );
    assert_eq!(
        container.seccomp_profile.map(|profile| profile.type_),
        Some("RuntimeDefault".into())
    );
}

#[test]
fn the_pod_should_outlive_the_operators_shutdown_grace_period() {
    let spec = pod_spec(&deployment(&Rendering::new(DEFAULTS)));
    assert_eq!(
        spec.termination_grace_period_seconds,
        Some(45),
        "shutdownGracePeriod is 30s"
    );
    let error = helm_template(&["shutdownGracePeriod=45s"], "1.35.0").expect_err("45s grace in a 45s pod");
    assert!(error.contains("terminationGracePeriodSeconds"), "{error}");
}

#[test]
fn one_replica_should_get_no_disruption_budget_and_no_spread() {
    let rendering = Rendering::new(DEFAULTS);
    assert!(rendering.of_kind("PodDisruptionBudget").is_empty());
    assert!(
        pod_spec(&deployment(&rendering))
            .topology_spread_constraints
            .is_none()
    );
}

#[test]
fn three_replicas_should_get_a_disruption_budget_and_spread_over_nodes_and_zones() {
    let rendering = Rendering::new(THREE_REPLICAS);
    let deployment = deployment(&rendering);
    assert_eq!(deployment.spec.as_ref().and_then(|spec| spec.replicas), Some(3));
    let pdb: k8s_openapi::api::policy::v1::PodDisruptionBudget = rendering.single("PodDisruptionBudget");
    let pdb_spec = pdb.spec.expect("PDB spec");
    assert_eq!(
        serde_json::to_value(pdb_spec.max_unavailable).expect("json"),
        Value::from(1)
    );
    let selector = deployment
        .spec
        .clone()
        .map(|spec| spec.selector.match_labels)
        .expect("selector");
    assert_eq!(
        pdb_spec.selector.and_then(|s| s.match_labels),
        selector,
        "the PDB selects the operator pods"
    );
    let spread = pod_spec(&deployment)
        .topology_spread_constraints
        .expect("topology spread");
    let keys: Vec<&str> = spread
        .iter()
        .map(|constraint| constraint.topology_key.as_str())
        .collect();
    assert_eq!(keys, ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]);
    for constraint in &spread {
        assert_eq!(
            constraint.when_unsatisfiable, "ScheduleAnyway",
            "spreading must never block scheduling"
        );
        assert_eq!(
            constraint.label_selector.clone().and_then(|s| s.match_labels),
            selector
        );
    }
}

#[test]
fn priority_class_should_reach_the_pod() {
    let spec = pod_spec(&deployment(&Rendering::new(&[
        "priorityClassName=system-cluster-critical",
    ])));
    assert_eq!(
        spec.priority_class_name.as_deref(),
        Some("system-cluster-critical")
    );
}

#[test]
fn admin_on_should_bind_where_the_user_says_and_declare_the_port() {
    let default_on = launch(ADMIN_ON);
    assert_eq!(
        default_on.flag("admin-bind-address"),
        Some(Some("127.0.0.1:8082".into()))
    );
    let rendering = Rendering::new(&["admin.enabled=true", "admin.bindAddress=:9443"]);
    let container = manager(&deployment(&rendering));
    let admin_port = container
        .ports
        .iter()
        .flatten()
        .find(|port| port.name.as_deref() == Some("admin"));
    assert_eq!(admin_port.map(|port| port.container_port), Some(9443));
    let pod = PodIdentity {
        name: "p".into(),
        namespace: "n".into(),
    };
    let launch = ContainerLaunch::from_deployment(&deployment(&rendering), &pod).expect("launch");
    assert_eq!(launch.flag("admin-bind-address"), Some(Some(":9443".into())));
}

#[test]
fn oidc_on_should_project_a_token_with_the_audience_at_the_path_the_operator_reads() {
    let sets = [
        OIDC_ON,
        &[
            "oidc.tokenPath=/var/run/secrets/fv/oidc-token",
            "oidc.expirationSeconds=1800",
        ],
    ]
    .concat();
    let rendering = Rendering::new(&sets);
    let deployment = deployment(&rendering);
    let volumes = pod_spec(&deployment).volumes.expect("volumes");
    let [volume] = volumes.as_slice() else {
        panic!("exactly one volume expected: {volumes:?}")
    };
    let sources = volume
        .projected
        .clone()
        .and_then(|projected| projected.sources)
        .expect("projected sources");
    let token = sources[0]
        .service_account_token
        .clone()
        .expect("a serviceAccountToken source");
    assert_eq!(token.audience.as_deref(), Some("https://ferrvault.example"));
    assert_eq!(token.expiration_seconds, Some(1800));
    let mount = manager(&deployment)
        .volume_mounts
        .into_iter()
        .flatten()
        .find(|mount| mount.name == volume.name)
        .expect("the token volume is mounted");
    assert_eq!(
        format!("{}/{}", mount.mount_path, token.path),
        "/var/run/secrets/fv/oidc-token"
    );
    assert_eq!(mount.read_only, Some(true));
    assert_eq!(
        launch(&sets).flag("oidc-token-path"),
        Some(Some("/var/run/secrets/fv/oidc-token".into())),
        "the operator reads the file the kubelet projects"
    );
}

#[test]
fn oidc_off_should_mount_nothing() {
    let deployment = deployment(&Rendering::new(DEFAULTS));
    assert!(pod_spec(&deployment).volumes.is_none());
    assert!(manager(&deployment).volume_mounts.is_none());
}
