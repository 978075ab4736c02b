//! Shared-cluster hardening in the chart: secure metrics (flags, mounted certificate, a
//! ServiceMonitor that scrapes it), the opt-in NetworkPolicy, and image digests.

use serde_json::json;

use crate::*;

#[test]
fn secure_metrics_should_pass_the_flags_mount_the_certificate_and_scrape_over_https_with_a_token() {
    let sets = [SECURE_METRICS_ON, &["metrics.secure.certSecret=metrics-tls"]].concat();
    let launch = launch(&sets);
    assert_eq!(launch.flag("metrics-secure"), Some(None));
    assert_eq!(
        launch.flag("metrics-cert-path"),
        Some(Some("/etc/ferrvault/metrics-certs".into()))
    );
    let rendering = Rendering::new(&sets);
    let deployment = deployment(&rendering);
    let volume = pod_spec(&deployment)
        .volumes
        .into_iter()
        .flatten()
        .find(|volume| volume.name == "metrics-certs")
        .expect("the certificate volume");
    assert_eq!(
        volume.secret.and_then(|secret| secret.secret_name).as_deref(),
        Some("metrics-tls")
    );
    let mount = manager(&deployment)
        .volume_mounts
        .into_iter()
        .flatten()
        .find(|mount| mount.name == "metrics-certs")
        .expect("mounted");
    assert_eq!(mount.mount_path, "/etc/ferrvault/metrics-certs");
    let endpoint = &rendering.of_kind("ServiceMonitor")[0]["spec"]["endpoints"][0];
    assert_eq!(endpoint["scheme"], "https");
    assert_eq!(
        endpoint["bearerTokenFile"],
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    );
    assert_eq!(endpoint["tlsConfig"], json!({"insecureSkipVerify": true}));
}

#[test]
fn secure_metrics_without_a_certificate_secret_should_use_the_self_signed_one_and_plain_metrics_stay_the_default()
 {
    let launch = launch(SECURE_METRICS_ON);
    assert_eq!(launch.flag("metrics-secure"), Some(None));
    assert_eq!(launch.flag("metrics-cert-path"), None, "self-signed");
    let plain = crate::launch(MONITORING_ON);
    assert_eq!(plain.flag("metrics-secure"), None);
    let rendering = Rendering::new(MONITORING_ON);
    let monitor = &rendering.of_kind("ServiceMonitor")[0];
    assert!(monitor["spec"]["endpoints"][0]["scheme"].is_null(), "plain http");
}

#[test]
fn the_network_policy_should_admit_metrics_and_probes_only_and_reach_dns_the_api_server_and_ferrvault_only() {
    let sets = [
        NETWORK_POLICY_ON,
        &[
            "networkPolicy.ingress.metrics.from[0].namespaceSelector.matchLabels.name=monitoring",
            "admin.enabled=true",
            "admin.bindAddress=:8082",
        ],
    ]
    .concat();
    let rendering = Rendering::new(&sets);
    let policy = &rendering.of_kind("NetworkPolicy")[0];
    assert_eq!(
        policy["spec"]["podSelector"]["matchLabels"],
        deployment_selector(&rendering)
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    let ingress = policy["spec"]["ingress"].as_array().expect("ingress rules");
    let ports: Vec<&serde_json::Value> = ingress.iter().map(|rule| &rule["ports"][0]["port"]).collect();
    assert_eq!(
        ports,
        [&json!(8080), &json!(8081)],
        "metrics and probes only, not admin"
    );
    assert_eq!(
        ingress[0]["from"],
        json!([{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}])
    );
    let egress = policy["spec"]["egress"].as_array().expect("egress rules");
    assert_eq!(egress.len(), 3, "{egress:#?}");
    assert_eq!(
        egress[0]["ports"],
        json!([{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}])
    );
    assert_eq!(egress[1]["to"], json!([{"ipBlock": {"cidr": "10.96.0.1/32"}}]));
    assert_eq!(egress[2]["to"], json!([{"ipBlock": {"cidr": "203.0.113.10/32"}}]));
    assert_eq!(egress[2]["ports"], json!([{"protocol": "TCP", "port": 443}]));
    assert!(
        Rendering::new(DEFAULTS).of_kind("NetworkPolicy").is_empty(),
        "opt-in"
    );
}

fn deployment_selector(rendering: &Rendering) -> serde_json::Value {
    serde_json::to_value(deployment(rendering).spec.expect("spec").selector.match_labels).expect("labels")
}

#[test]
fn a_network_policy_without_the_api_server_or_ferrvault_should_fail_rendering() {
    for (missing, fragment) in [
        (
            "networkPolicy.egress.apiServer.to=null",
            "networkPolicy.egress.apiServer.to",
        ),
        (
            "networkPolicy.egress.ferrvault.to=null",
            "networkPolicy.egress.ferrvault.to",
        ),
    ] {
        let sets = [NETWORK_POLICY_ON, &[missing]].concat();
        let error = helm_template(&sets, "1.35.0").expect_err("rendering must fail");
        assert!(error.contains(fragment), "{missing}: {error}");
    }
}

#[test]
fn ferrvault_cidrs_should_become_ip_blocks_of_the_ferrvault_egress_rule() {
    let sets = [
        NETWORK_POLICY_ON,
        &[
            "networkPolicy.egress.ferrvault.to=null",
            "networkPolicy.egress.ferrvault.cidrs={203.0.113.0/28,198.51.100.7/32}",
            "networkPolicy.egress.ferrvault.ports={443,8443}",
        ],
    ]
    .concat();
    let rendering = Rendering::new(&sets);
    let egress = &rendering.of_kind("NetworkPolicy")[0]["spec"]["egress"];
    assert_eq!(
        egress[2]["to"],
        json!([{"ipBlock": {"cidr": "203.0.113.0/28"}}, {"ipBlock": {"cidr": "198.51.100.7/32"}}]),
        "the cidrs alone say where FerrVault is"
    );
    assert_eq!(
        egress[2]["ports"],
        json!([{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 8443}])
    );
    let both = Rendering::new(
        &[
            NETWORK_POLICY_ON,
            &["networkPolicy.egress.ferrvault.cidrs={198.51.100.7/32}"],
        ]
        .concat(),
    );
    assert_eq!(
        both.of_kind("NetworkPolicy")[0]["spec"]["egress"][2]["to"],
        json!([{"ipBlock": {"cidr": "203.0.113.10/32"}}, {"ipBlock": {"cidr": "198.51.100.7/32"}}]),
        "peers first, then the cidrs"
    );
}

#[test]
fn an_image_digest_should_pin_the_image_and_a_bad_one_fail_rendering() {
    let digest = format!("sha256:{}", "ab".repeat(32));
    let pinned = manager(&deployment(&Rendering::new(&[
        &format!("image.digest={digest}"),
        "image.tag=ignored",
    ])));
    assert_eq!(
        pinned.image.as_deref(),
        Some(format!("ghcr.io/ferrlabs/ferrvault-operator@{digest}").as_str())
    );
    let tagged = manager(&deployment(&Rendering::new(&["image.tag=1.2.3"])));
    assert_eq!(
        tagged.image.as_deref(),
        Some("ghcr.io/ferrlabs/ferrvault-operator:1.2.3")
    );
    let error = helm_template(&["image.digest=latest"], "1.35.0").expect_err("not a digest");
    assert!(error.contains("image.digest"), "{error}");
}
